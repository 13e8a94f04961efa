/**
 * The published release index: the one file the server reads to know every artefact.
 * Written last by the build; `dist/current` points at the release directory that holds it.
 */
import { z } from "zod";
import { PublishedInstant, RunType } from "./ashModel.ts";

export const RELEASE_INDEX_FORMAT = 1;
/** `dist/<CURRENT_LINK>` is the symlink to the release being served. */
export const CURRENT_LINK = "current";
/** Written last into a release directory: its presence means the release is whole. */
export const INDEX_FILE = "index.json";

/** A stored body: its file relative to the dist directory, size in bytes and strong ETag. */
export const StoredBody = z.strictObject({
  file: z.string(),
  size: z.number().int().nonnegative(),
  etag: z.string().regex(/^"[A-Za-z0-9_-]+"$/),
});
export type StoredBody = z.infer<typeof StoredBody>;

export const Artefact = z.strictObject({
  contentType: z.string(),
  /** sha256 of the identity body, hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** When this exact content was first published (HTTP Last-Modified). */
  modified: PublishedInstant,
  identity: StoredBody,
  gzip: StoredBody.optional(),
  br: StoredBody.optional(),
});
export type Artefact = z.infer<typeof Artefact>;

export const PublishedRun = z.strictObject({
  reftime: PublishedInstant,
  type: RunType,
  /** The run folder under runs/ it was built from. */
  source: z.string(),
  /** Artefact key of the AshModel JSON. */
  json: z.string(),
  /** Artefact key of the reftime PNG map, once the run has one. */
  png: z.string().optional(),
});
export type PublishedRun = z.infer<typeof PublishedRun>;

export const ReleaseIndex = z.strictObject({
  format: z.literal(RELEASE_INDEX_FORMAT),
  release: z.string(),
  built: PublishedInstant,
  /** Newest first. */
  reftimes: z.array(PublishedInstant),
  runs: z.record(PublishedInstant, PublishedRun),
  /** Resource name (the `name` of /resources) to artefact key. */
  resources: z.record(z.string(), z.string()),
  /** Fixed artefacts of the release: reftimes list, changelog, build report. */
  lists: z.strictObject({ reftimes: z.string(), changelog: z.string(), report: z.string() }),
  artefacts: z.record(z.string(), Artefact),
});
export type ReleaseIndex = z.infer<typeof ReleaseIndex>;
