/**
 * What a release publishes, as files the server reads:
 *
 *   dist/current -> releases/<id>/index.json   the release: its reftimes, lists, shared resources and run chunks
 *   dist/index/<chunk>.json                     the published runs of one bucket of reftimes, shared by releases
 *   dist/runs/<dir>/artefacts.json              one run's artefacts, immutable (its directory is named by input hash)
 *
 * The release index refers to each run's directory instead of listing its artefacts, and keeps its run list
 * in content-addressed chunks, so publishing a release after a change to one run writes a few small files
 * whatever the number of runs; a run's artefact list is read once, when needed.
 */
import { z } from "zod";
import { CHUNK_NAME_PATTERN } from "../formats/contentChunks.ts";
import { PublishedInstant, RunType } from "./ashModel.ts";

export const RELEASE_INDEX_FORMAT = 3;
/** Format of a run directory's artefacts.json (unchanged when the release index's format changed). */
export const RUN_ARTEFACTS_FORMAT = 2;
/** `dist/<INDEX_CHUNKS_DIR>/<name>`: chunks of the releases' run lists, named by content and shared by releases. */
export const INDEX_CHUNKS_DIR = "index";
/** `dist/<CURRENT_LINK>` is the symlink to the release being served. */
export const CURRENT_LINK = "current";
/** Written last into a release directory: its presence means the release is whole. */
export const INDEX_FILE = "index.json";
/** The artefact list inside each run directory. */
export const RUN_ARTEFACTS_FILE = "artefacts.json";

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
  identity: StoredBody,
  gzip: StoredBody.optional(),
  br: StoredBody.optional(),
});
export type Artefact = z.infer<typeof Artefact>;

/** An artefact of the release itself (lists, shared resources), with the time its content was first published. */
export const ListArtefact = Artefact.extend({ modified: PublishedInstant });
export type ListArtefact = z.infer<typeof ListArtefact>;

/** `dist/runs/<dir>/artefacts.json`. */
export const RunArtefacts = z.strictObject({
  format: z.literal(RUN_ARTEFACTS_FORMAT),
  reftime: PublishedInstant,
  artefacts: z.record(z.string(), Artefact),
  /** Resource name (the `name` of /resources, `<reftime>/...`) to artefact key. */
  resources: z.record(z.string(), z.string()),
});
export type RunArtefacts = z.infer<typeof RunArtefacts>;

export const PublishedRun = z.strictObject({
  reftime: PublishedInstant,
  type: RunType,
  /** The run folder under runs/ it was built from. */
  source: z.string(),
  /** Its artefact directory, relative to the dist directory (holds artefacts.json). */
  dir: z.string(),
  /** When the run's current content was first published under this reftime (HTTP Last-Modified). */
  modified: PublishedInstant,
  /** Hash over all its artefacts: equal means clients see exactly the same run. */
  contentSha256: z.string(),
  /** Artefact key of the AshModel JSON. */
  json: z.string(),
  /** Artefact key of the reftime PNG map, when the run has one. */
  png: z.string().optional(),
});
export type PublishedRun = z.infer<typeof PublishedRun>;

/** A chunk of a release's run list: the published runs whose reftimes fall in one bucket (src/formats/contentChunks.ts). */
export const IndexChunk = z.strictObject({ runs: z.record(PublishedInstant, PublishedRun) });
export type IndexChunk = z.infer<typeof IndexChunk>;

/** `index.json` as written: the release, with its run list in chunks. */
export const StoredReleaseIndex = z.strictObject({
  format: z.literal(RELEASE_INDEX_FORMAT),
  release: z.string(),
  built: PublishedInstant,
  /** Newest first. */
  reftimes: z.array(PublishedInstant),
  /** The chunks (in `dist/index/`) that together hold an entry for each of `reftimes`. */
  runChunks: z.array(z.string().regex(CHUNK_NAME_PATTERN)),
  /** Shared resources of the release (e.g. volcanoes.json): name to artefact key. Run resources are in each run's artefacts.json. */
  resources: z.record(z.string(), z.string()),
  /** Fixed artefacts of the release: reftimes list, changelog, build report. */
  lists: z.strictObject({ reftimes: z.string(), changelog: z.string(), report: z.string() }),
  /** The release's own artefacts (lists, shared resources and the viewer's files). */
  artefacts: z.record(z.string(), ListArtefact),
  /**
   * The map viewer served under `/viewer/`: file name (`index.html`, `viewer.<hash>.js` ...) to artefact key.
   * Absent in releases made before the viewer existed.
   */
  viewer: z.record(z.string(), z.string()).optional(),
  /**
   * The public address the changelog's links start with (the build's --public-url). The server refuses to
   * listen beyond loopback when it is a loopback address. Absent in releases made before it was recorded.
   */
  feedBase: z.string().optional(),
});
export type StoredReleaseIndex = z.infer<typeof StoredReleaseIndex>;

/**
 * `index.json` of format 2, which listed the runs inline: still read, so that a server upgraded over a dist/
 * built before keeps serving its release until the first build of the new version publishes.
 */
export const InlineReleaseIndex = StoredReleaseIndex.omit({ format: true, runChunks: true }).extend({
  format: z.literal(2),
  runs: z.record(PublishedInstant, PublishedRun),
});

/** A release as read (readReleaseIndex.ts): index.json with its chunks joined into one run list, by reftime. */
export type ReleaseIndex = StoredReleaseIndex & { runs: Record<string, PublishedRun> };

/** The reftime a run resource name starts with (`<reftime>/...`), or undefined. */
export function reftimeOfResource(name: string): string | undefined {
  const slash = name.indexOf("/");
  return slash === 20 ? name.slice(0, slash) : undefined;
}
