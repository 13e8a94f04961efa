/**
 * What a build remembers for the next one (`state.json` beside the release index; the server never
 * reads it): file fingerprints, each run folder's input hash and outcome, its last good build, and the
 * changelog history. A missing or unreadable state only costs a full rebuild.
 */
import { z } from "zod";
import { PublishedInstant, RunType } from "../contract/ashModel.ts";
import { ReportIssue } from "../contract/buildReport.ts";
import { objectJson, recordJson } from "../formats/memoJson.ts";

export const BUILD_STATE_FORMAT = 3;

/**
 * A valid build of one run folder: enough to publish it again without reading it. Its artefact list is
 * in `<dir>/artefacts.json`, so the state stays small however many runs there are.
 */
export const RunBuild = z.strictObject({
  inputs: z.string(),
  reftime: PublishedInstant,
  type: RunType,
  /** sha256 over every artefact (key and content hash): equal across folders means a duplicate. */
  contentSha256: z.string(),
  /** Directory of its artefacts, relative to the dist directory. */
  dir: z.string(),
  json: z.string(),
  png: z.string().optional(),
  volcano: z.strictObject({ name: z.string(), lat: z.number(), lon: z.number() }).optional(),
});
export type RunBuild = z.infer<typeof RunBuild>;

export const RunState = z.strictObject({
  inputs: z.string(),
  issues: z.array(ReportIssue),
  /** Files still arriving when last seen. */
  waiting: z.boolean(),
  /** The build of the current inputs, when they are valid. */
  current: RunBuild.optional(),
  /** The last build of this folder that was published; kept when the folder turns bad. */
  lastGood: RunBuild.optional(),
});
export type RunState = z.infer<typeof RunState>;

export const ChangelogEventSchema = z.strictObject({
  kind: z.enum(["published", "updated", "withdrawn"]),
  reftime: PublishedInstant,
  type: z.string(),
  time: PublishedInstant,
  detail: z.string(),
});

export const BuildState = z.strictObject({
  format: z.literal(BUILD_STATE_FORMAT),
  pipeline: z.string(),
  /** Per run folder, the fingerprint of each file: a file whose size, mtime and inode match is not read again. */
  files: z.record(z.string(), z.record(z.string(), z.strictObject({ size: z.number(), mtimeMs: z.number(), ino: z.number(), sha256: z.string() }))),
  runs: z.record(z.string(), RunState),
  /** Which folder's build is served for each reftime. */
  published: z.record(PublishedInstant, z.string()),
  events: z.array(ChangelogEventSchema),
  /** Digest of what the release serves and reports: an equal digest means no new release is needed. */
  digest: z.string().optional(),
  publicUrl: z.string().optional(),
});
export type BuildState = z.infer<typeof BuildState>;

export function emptyState(pipeline: string): BuildState {
  return { format: BUILD_STATE_FORMAT, pipeline, files: {}, runs: {}, published: {}, events: [] };
}

/**
 * state.json on disk: a served run's last good build is its current build (the same object), written
 * once, as `"lastGood": "current"`, so the file holds each build once.
 */
const StoredRunState = RunState.extend({ lastGood: z.union([RunBuild, z.literal("current")]).optional() });
const StoredBuildState = BuildState.extend({ runs: z.record(z.string(), StoredRunState) });

export function encodeState(state: BuildState): string {
  const runs: Record<string, z.infer<typeof StoredRunState>> = {};
  for (const [folder, run] of Object.entries(state.runs)) runs[folder] = storedRun(run);
  return `${objectJson(state, { files: recordJson(state.files), runs: recordJson(runs) })}\n`;
}

/** A run's form in state.json, one object per run state, so that its text is serialised once (memoJson). */
const storedRuns = new WeakMap<RunState, z.infer<typeof StoredRunState>>();
function storedRun(run: RunState): z.infer<typeof StoredRunState> {
  if (run.lastGood === undefined || run.lastGood !== run.current) return run;
  let stored = storedRuns.get(run);
  if (!stored) storedRuns.set(run, (stored = { ...run, lastGood: "current" }));
  return stored;
}

/** The state of state.json, or undefined when it is not one this version wrote (a full rebuild follows). */
export function decodeState(text: string): BuildState | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = StoredBuildState.safeParse(json);
  if (!parsed.success) return undefined;
  const runs: Record<string, RunState> = {};
  for (const [folder, run] of Object.entries(parsed.data.runs)) {
    if (run.lastGood !== "current") runs[folder] = run as RunState;
    else if (run.current) runs[folder] = { ...run, lastGood: run.current };
    else return undefined; // "current" without a current build: not a file this version wrote
  }
  return { ...parsed.data, runs };
}
