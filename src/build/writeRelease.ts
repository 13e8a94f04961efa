/**
 * The last stage of a build that publishes: the release's lists and shared resources, its state and run
 * list (in shared chunks), the index last, then the switch of `dist/current` and the garbage collection.
 */
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { BuildReport } from "../contract/buildReport.ts";
import { INDEX_CHUNKS_DIR, RELEASE_INDEX_FORMAT, type ListArtefact, type ReleaseIndex, type StoredReleaseIndex } from "../contract/releaseIndex.ts";
import { arrayJson, objectJson } from "../formats/memoJson.ts";
import { sortKeys } from "../formats/sortKeys.ts";
import { compactInstant, formatInstant, parseInstant } from "../time/instant.ts";
import { CONTENT_TYPES, jsonBody, writeArtefacts, type ArtefactDraft } from "./artefacts.ts";
import { resourceKey } from "./artefactNames.ts";
import { BUILD_STATE_FORMAT, encodeState, type BuildState, type RunBuild } from "./buildState.ts";
import { renderChangelog, type ChangelogEvent } from "./changelog.ts";
import { encodeIndexRuns } from "./indexChunks.ts";
import type { PublishDecision } from "./publishDecision.ts";
import { DIRS_FILE, RELEASES_DIR, STATE_DIR, STATE_FILE, collectGarbage, createStagingDir, runDirsUsed, switchToRelease, writeSharedChunks, type LoadedRelease } from "./releaseStore.ts";
import type { PublishedViewer } from "./viewer.ts";

/** The resource listing the volcanoes of the published runs. */
export const VOLCANOES_RESOURCE = "volcanoes.json";

export interface ReleaseContent {
  distDir: string;
  publicUrl: string;
  /** The build's clock reading, and the same instant as published text. */
  nowDate: Date;
  now: string;
  previous: LoadedRelease | undefined;
  prevState: BuildState;
  pipeline: string;
  decision: PublishDecision;
  /** Newest first. */
  reftimes: string[];
  runs: BuildState["runs"];
  files: BuildState["files"];
  folders: BuildState["folders"];
  history: ChangelogEvent[];
  digest: string;
  viewer: PublishedViewer;
  /** Its `release` is set here. */
  report: BuildReport;
}

/** Writes and switches to a new release; answers its id and the release as loaded, for the next build. */
export async function writeRelease(content: ReleaseContent, log: (line: string) => void): Promise<LoadedRelease> {
  const { distDir, now, nowDate, previous, prevState, decision, reftimes, viewer, report } = content;
  const releaseId = `${compactInstant(now)}-${String(nowDate.getUTCMilliseconds()).padStart(3, "0")}-${createHash("sha256").update(content.digest + Math.random()).digest("hex").slice(0, 6)}`;
  const releaseFromDist = path.posix.join(RELEASES_DIR, releaseId);
  report.release = releaseId;

  const staged = await createStagingDir(distDir, RELEASES_DIR);
  // A write that fails (a full disk) takes the staged release with it: the space is back at once.
  const failed = async (error: unknown): Promise<never> => {
    await staged.discard();
    throw error;
  };
  const volcanoes = volcanoesResource(reftimes.map((reftime) => decision.byReftime.get(reftime)!));
  const drafts: ArtefactDraft[] = [
    { key: "reftimes.json", file: "reftimes.json", contentType: CONTENT_TYPES.json, body: jsonBody([{ reftimes }]) },
    { key: "changelog.rss", file: "changelog.rss", contentType: CONTENT_TYPES.rss, body: Buffer.from(renderChangelog(content.history, { publicUrl: content.publicUrl })) },
    volcanoes,
  ];
  const indexRuns = indexEntries(content);
  const state: BuildState = {
    format: BUILD_STATE_FORMAT,
    pipeline: content.pipeline,
    files: content.files,
    folders: content.folders,
    runs: content.runs,
    published: samePublished(prevState.published, decision.folderOf) ? prevState.published : sortKeys(Object.fromEntries(decision.folderOf)),
    events: content.history,
    digest: content.digest,
    publicUrl: content.publicUrl,
  };
  // The lists are compressed on the thread pool while this thread serialises the state. The report is
  // not: GET /datasets sends it to operators as it is, and at 1,000 runs compressing it cost ~4 ms a build.
  const encodedState = encodeState(state);
  const runChunks = encodeIndexRuns(indexRuns);
  const writes = [
    writeArtefacts(staged.dir, releaseFromDist, [...drafts, { key: "report.json", file: "report.json", contentType: CONTENT_TYPES.json, body: Buffer.from(`${objectJson(report, { runs: arrayJson(report.runs) })}\n`), precompress: false }]),
    writeSharedChunks(distDir, STATE_DIR, encodedState.chunks, previous?.stateChunks ?? new Set()),
    writeSharedChunks(distDir, INDEX_CHUNKS_DIR, runChunks, new Set(previous?.index.runChunks)),
    writeFile(path.join(staged.dir, STATE_FILE), encodedState.head),
  ] as const;
  // Every write ended before the staged release is removed: one still under way would make its directories again.
  const failure = (await Promise.allSettled(writes)).find((outcome) => outcome.status === "rejected");
  if (failure) await failed(failure.reason);
  const [written, stateChunks, indexChunks] = await Promise.all(writes);
  const dirsUsed = [...runDirsUsed(indexRuns, state), ...stateChunks, ...indexChunks, viewer.dir];
  await writeFile(path.join(staged.dir, DIRS_FILE), jsonBody(dirsUsed)).catch(failed);
  // Last-Modified of a list: when its content was first published (unchanged content keeps its date).
  const previousLists = previous?.index.artefacts ?? {};
  const artefacts: Record<string, ListArtefact> = {};
  for (const [key, artefact] of [...Object.entries(written), ...Object.entries(viewer.artefacts)]) {
    const before = previousLists[key];
    artefacts[key] = { ...artefact, modified: before && before.sha256 === artefact.sha256 ? before.modified : laterThan(before?.modified, now) };
  }
  const index: ReleaseIndex = {
    format: RELEASE_INDEX_FORMAT,
    release: releaseId,
    built: now,
    reftimes,
    runChunks: runChunks.map((chunk) => chunk.name),
    runs: indexRuns,
    resources: { [VOLCANOES_RESOURCE]: volcanoes.key },
    lists: { reftimes: "reftimes.json", changelog: "changelog.rss", report: "report.json" },
    artefacts: sortKeys(artefacts),
    viewer: viewer.files,
    feedBase: content.publicUrl,
  };
  const { runs: _inChunks, ...storedIndex } = index;
  await switchToRelease(distDir, staged, releaseId, `${JSON.stringify(storedIndex satisfies StoredReleaseIndex)}\n`).catch(failed);
  const garbage = await collectGarbage(distDir, nowDate.getTime(), { id: releaseId, dirs: dirsUsed });
  log(`published release ${releaseId}: ${reftimes.length} run(s), ${report.counts.rebuilt} rebuilt, ${report.counts.errors} error(s) (${report.durationMs} ms)`);
  if (garbage.releases || garbage.runs) log(`removed ${garbage.releases} old release(s) and ${garbage.runs} unused run director${garbage.runs === 1 ? "y" : "ies"}`);
  return { id: releaseId, index, state, stateChunks: new Set(encodedState.chunks.map((chunk) => chunk.name)) };
}

/** The run list of the release, oldest first; an unchanged entry of the previous release is kept as it was. */
function indexEntries({ reftimes, decision, previous, now }: ReleaseContent): ReleaseIndex["runs"] {
  const indexRuns: ReleaseIndex["runs"] = {};
  const listModified = previous?.index.artefacts[previous.index.lists.reftimes]?.modified;
  for (const reftime of [...reftimes].reverse()) {
    const build = decision.byReftime.get(reftime)!;
    // A run's Last-Modified is when its current content was first served under this reftime, whenever
    // it was built (a conflict loser built long ago becomes new content the moment it takes over).
    const before = previous?.index.runs[reftime];
    const source = decision.folderOf.get(reftime)!;
    // The same build from the same folder as before: its entry is the same (and its JSON text is kept).
    if (before && before.source === source && before.dir === build.dir && before.contentSha256 === build.contentSha256 && before.type === build.type && before.json === build.json && before.png === build.png) {
      indexRuns[reftime] = before;
      continue;
    }
    const entry: ReleaseIndex["runs"][string] = {
      reftime,
      type: build.type,
      source,
      dir: build.dir,
      // New content is dated after its own last date and after the reftimes list's: an unpinned answer is dated
      // the later of its run and that list (answerModified), so with the clock stepped back a run's new date
      // could fall behind a date clients already hold, and If-Modified-Since would keep the old forecast.
      modified: before && before.contentSha256 === build.contentSha256 ? before.modified : laterThan(latestOf(before?.modified, listModified), now),
      contentSha256: build.contentSha256,
      json: build.json,
      ...(build.png ? { png: build.png } : {}),
    };
    // The unchanged entry of the previous release is kept, and with it its JSON text (memoJson).
    indexRuns[reftime] = before && sameFlatRecord(before, entry) ? before : entry;
  }
  return indexRuns;
}

/**
 * Last-Modified for new content: now, but always after the date of the content it replaces. HTTP dates
 * have whole seconds: content changed twice within one second would otherwise keep its date, and a
 * client revalidating with If-Modified-Since alone would keep the old content.
 */
/** The later of two instants (either may be missing). */
function latestOf(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return parseInstant(a)! >= parseInstant(b)! ? a : b;
}

function laterThan(previous: string | undefined, now: string): string {
  const before = previous === undefined ? undefined : parseInstant(previous);
  const at = parseInstant(now)!;
  return before !== undefined && before >= at ? formatInstant(before + 1000) : now;
}

/** `volcanoes.json`: the volcanoes of the published runs, newest reftime first, for clients' pickers. */
function volcanoesResource(newestFirst: readonly RunBuild[]): ArtefactDraft {
  const volcanoes = new Map<string, { name: string; lat: number; lon: number; reftimes: string[] }>();
  for (const build of newestFirst) {
    if (!build.volcano) continue;
    const entry = volcanoes.get(build.volcano.name) ?? { ...build.volcano, reftimes: [] };
    entry.reftimes.push(build.reftime);
    volcanoes.set(build.volcano.name, entry);
  }
  const body = jsonBody([...volcanoes.values()].sort((a, b) => (a.name < b.name ? -1 : 1)));
  return { key: resourceKey(VOLCANOES_RESOURCE), file: `resources/${VOLCANOES_RESOURCE}`, contentType: CONTENT_TYPES.json, body, resourceName: VOLCANOES_RESOURCE };
}

/** Whether the served folder of every reftime is as before: the previous object (and its JSON text) is kept then. */
function samePublished(before: Readonly<Record<string, string>>, now: ReadonlyMap<string, string>): boolean {
  let count = 0;
  for (const [reftime, folder] of now) {
    if (before[reftime] !== folder) return false;
    count++;
  }
  return count === Object.keys(before).length;
}

function sameFlatRecord(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
