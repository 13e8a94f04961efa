/**
 * One build: scan runs/, rebuild the run folders whose inputs changed, decide what is published for
 * each reftime, and publish a new release atomically (or nothing, when nothing changed).
 * Read → validate → transform → write: nothing is written before a run has been fully validated,
 * and every problem of every run is collected into the report.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { AshModel, RUN_TYPES, type RunType } from "../contract/ashModel.ts";
import type { BuildReport, RunReport } from "../contract/buildReport.ts";
import { INDEX_CHUNKS_DIR, RELEASE_INDEX_FORMAT, RUN_ARTEFACTS_FILE, RUN_ARTEFACTS_FORMAT, RunArtefacts, type Artefact, type ListArtefact, type ReleaseIndex, type StoredReleaseIndex } from "../contract/releaseIndex.ts";
import { UserError } from "../errors.ts";
import { arrayJson, entryJson, objectJson } from "../formats/memoJson.ts";
import { compactInstant, formatInstant, parseInstant } from "../time/instant.ts";
import { CONTENT_TYPES, jsonBody, writeArtefacts, type ArtefactDraft } from "./artefacts.ts";
import { resourceKey, runPngKey } from "./artefactNames.ts";
import { BUILD_STATE_FORMAT, emptyState, encodeState, type BuildState, type RunBuild, type RunState } from "./buildState.ts";
import { MAX_CHANGELOG_EVENTS, publishedEvent, renderChangelog, updatedEvent, withdrawnEvent, type ChangelogEvent } from "./changelog.ts";
import {
  RELEASES_DIR,
  RUNS_DIR,
  DIRS_FILE,
  STATE_FILE,
  writeSharedChunks,
  STATE_DIR,
  acquireBuildLock,
  currentReleaseId,
  runDirsUsed,
  type LoadedRelease,
  collectGarbage,
  recountSharedDirs,
  createStagingDir,
  loadCurrentRelease,
  sweepTemporaries,
  switchToRelease,
} from "./releaseStore.ts";
import { encodeIndexRuns } from "./indexChunks.ts";
import { renderRun } from "./renderRun.ts";
import { foldersAfterChanges, inputsHash, listRunFolders, scanRuns, unchangedSinceScan, type FolderFingerprints, type ScannedRun } from "./scanRuns.ts";
import { validateRun } from "./validateRun.ts";
import { pipelineKey, type PipelineSettings } from "./pipelineSettings.ts";
import { publishViewer } from "./viewer.ts";

/** The resource listing the volcanoes of the published runs. */
export const VOLCANOES_RESOURCE = "volcanoes.json";

export interface BuildOptions extends PipelineSettings {
  runsDir: string;
  distDir: string;
  /** Absolute URL of the product base path, for links in the changelog. */
  publicUrl: string;
  /** The clock; tests inject one. */
  now?: () => Date;
  log?: (line: string) => void;
  /**
   * Run folders known to have changed since the last build (the watcher's events). Other folders that
   * the last build knew are taken as they were, without a look at their files. Absent: scan them all.
   */
  changedFolders?: ReadonlySet<string>;
  /**
   * The release this process published last (BuildResult.current), reused when dist/current still points
   * at it: the watcher saves reading and checking the whole state on every change.
   */
  previous?: LoadedRelease;
  /**
   * Folders to read, validate and render again although their inputs are unchanged (an operator's
   * rebuild job); "all" for every folder. Their artefacts go to fresh run directories.
   */
  rebuild?: ReadonlySet<string> | "all";
  /** Cancels the build between run folders; nothing is published and the last release stays. */
  signal?: AbortSignal;
  /** Called after each run folder is handled (progress display). */
  onProgress?: (done: number, total: number, folder: string) => void;
}

export interface BuildResult {
  /** The release served after this build. */
  release: string;
  /** That release as loaded in memory, for the next build of this process (BuildOptions.previous). */
  current: LoadedRelease;
  /** False when nothing changed and no new release was written. */
  published: boolean;
  report: BuildReport;
  events: ChangelogEvent[];
}

export async function build(options: BuildOptions): Promise<BuildResult> {
  const runsStat = await stat(options.runsDir).catch(() => undefined);
  if (!runsStat?.isDirectory()) {
    throw new UserError("the runs directory does not exist", { where: options.runsDir, fix: "create it, or point --runs at the folder that holds the run folders" });
  }
  const lock = await acquireBuildLock(options.distDir);
  try {
    return await buildLocked(options, lock.takenOver);
  } catch (error) {
    recountSharedDirs(options.distDir); // it may have written run directories that no release uses
    throw error;
  } finally {
    await lock.release();
  }
}

async function buildLocked(options: BuildOptions, lockTakenOver: boolean): Promise<BuildResult> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const nowDate = (options.now ?? (() => new Date()))();
  const now = formatInstant(nowDate.getTime());
  const { distDir, runsDir } = options;

  // The release this process published last is still current: no build has run since, so none has left
  // temporaries, unless one died holding the lock. Otherwise read it back (and sweep) from disk.
  const inMemory = options.previous?.state !== undefined && (await currentReleaseId(distDir)) === options.previous.id;
  if (!inMemory || lockTakenOver) {
    recountSharedDirs(distDir); // another process may have written to dist/ since
    const swept = await sweepTemporaries(distDir);
    if (swept) log(`swept ${swept} temporary item(s) left by an interrupted build`);
  }

  const pipeline = pipelineKey(options);
  const previous = inMemory ? options.previous : await loadCurrentRelease(distDir);
  const prevState: BuildState = previous?.state ?? emptyState(pipeline);
  const pipelineChanged = prevState.pipeline !== pipeline;
  if (previous && !previous.state) log("no readable build state in the current release: rebuilding every run");
  else if (pipelineChanged) log("the pipeline or its configuration changed: rebuilding every run");
  // The pipeline key is part of every input hash, so a change rebuilds every run by itself, while
  // each folder's last good version stays known (and served if the rebuild fails).
  const priorRuns = prevState.runs;

  // 1. Bring every run folder up to date: scan (stat calls; skipped for folders the watcher saw
  //    unchanged), then read and render only the folders whose inputs changed.
  // The watcher names the folders that changed, added and removed ones included: the others are those of
  // the last build, so runs/ need not be listed (1,000 entries: several ms). A rebuild job lists it again.
  const folders =
    inMemory && !pipelineChanged && options.changedFolders !== undefined && options.rebuild === undefined
      ? foldersAfterChanges(runsDir, distDir, Object.keys(priorRuns), options.changedFolders)
      : listRunFolders(runsDir, distDir);
  const forced = (name: string) => options.rebuild === "all" || options.rebuild?.has(name) === true;
  const known = (name: string) => !forced(name) && !pipelineChanged && options.changedFolders !== undefined && !options.changedFolders.has(name) && priorRuns[name] !== undefined && prevState.files[name] !== undefined;
  const scanned = await scanRuns(runsDir, folders.filter((folder) => !known(folder.name)), prevState.files);
  const scannedByName = new Map(scanned.map((entry) => [entry.run.folder, entry]));
  const runs: Record<string, RunState> = {};
  const files: BuildState["files"] = {};
  const rebuiltWhy = new Map<string, string>();
  let done = 0;
  for (const { name: folder } of folders) {
    options.signal?.throwIfAborted();
    const entry = scannedByName.get(folder);
    const prior = priorRuns[folder];
    if (!entry || (entry.fingerprints === prevState.files[folder] && prior && !prior.waiting && !pipelineChanged && !forced(folder))) {
      // Not looked at (the watcher saw no change), or every file as last built: its outcome stands.
      runs[folder] = prior!;
      files[folder] = prevState.files[folder]!;
    } else {
      files[folder] = entry.fingerprints;
      runs[folder] = await updateRun(entry.run, prior, pipeline, prevState.files[folder] ?? {}, { ...options, builtAt: now, forced: forced(folder) }, (why) => {
        rebuiltWhy.set(folder, why);
        log(`rebuilding ${folder}: ${why}`);
      });
    }
    options.onProgress?.(++done, folders.length, folder);
  }

  // 2. Decide which folder is served for each reftime.
  const decision = decidePublished(runs);
  for (const { name: folder } of folders) {
    const state = runs[folder]!;
    const served = decision.servedBuild.get(folder);
    // An unchanged run keeps its state object, and with it the JSON text already made of it (memoJson).
    if (state.lastGood !== served) runs[folder] = { ...state, lastGood: served };
  }

  // 3. Changelog events: compare with what was served before.
  const events: ChangelogEvent[] = [];
  const servedBefore = (reftime: string) => (Object.hasOwn(prevState.published, reftime) ? prevState.runs[prevState.published[reftime]!]?.lastGood : undefined);
  for (const [reftime, build] of decision.byReftime) {
    const old = servedBefore(reftime);
    if (!old) events.push(publishedEvent(await readModel(distDir, build), now));
    else if (old.contentSha256 !== build.contentSha256) {
      const [oldList, newList] = await Promise.all([readRunArtefacts(distDir, old), readRunArtefacts(distDir, build)]);
      events.push(updatedEvent(await readModel(distDir, old), await readModel(distDir, build), changedResources(oldList, newList), now));
    }
  }
  for (const reftime of Object.keys(prevState.published)) {
    const old = decision.byReftime.has(reftime) ? undefined : servedBefore(reftime);
    if (old) events.push(withdrawnEvent(reftime, old.type, now));
  }
  for (const event of events) log(`${event.kind} ${event.type} run ${event.reftime}: ${event.detail}`);
  const history = [...events, ...prevState.events].slice(0, MAX_CHANGELOG_EVENTS);

  // The viewer's files depend on its templates only: made once per content of those, then reused.
  const viewer = await publishViewer(distDir);

  // 4. The report.
  const runReports = folders.map(({ name }) => reportRun(name, runs[name]!, decision, rebuiltWhy.get(name)));
  let errors = 0;
  let warnings = 0;
  for (const run of runReports) {
    for (const issue of run.issues) {
      if (issue.severity === "error") errors++;
      else warnings++;
    }
  }
  const reftimes = [...decision.byReftime.keys()].sort().reverse();
  const withdrawn = events.filter((e) => e.kind === "withdrawn").map((e) => e.reftime);
  // What is served, and what is reported apart from why runs were rebuilt: equal means nothing to publish.
  // One text hashed at once: 2,000 small hash updates cost more than joining the same bytes.
  const digestParts = [viewer.dir];
  for (const [reftime, build] of decision.byReftime) digestParts.push(reftime, build.dir);
  for (const run of runReports) digestParts.push(run.rebuilt === undefined ? entryJson(run) : JSON.stringify({ ...run, rebuilt: undefined }));
  const digest = createHash("sha256").update(digestParts.join("\n")).digest("hex");

  const report: BuildReport = {
    release: previous?.id ?? "",
    built: now,
    durationMs: 0,
    counts: {
      folders: folders.length,
      published: reftimes.length,
      rebuilt: rebuiltWhy.size,
      errors,
      warnings,
    },
    runs: runReports,
    withdrawn,
  };

  if (previous && !pipelineChanged && events.length === 0 && prevState.digest === digest && options.publicUrl === prevState.publicUrl) {
    log("nothing changed: the current release stays");
    if (rebuiltWhy.size) recountSharedDirs(distDir); // a rebuilt run's new directory is used by no release
    report.durationMs = Math.round(performance.now() - started);
    return { release: previous.id, current: previous, published: false, report, events };
  }

  options.signal?.throwIfAborted();
  // 5. Write the release: lists and shared resources, state, then the index last, then switch.
  const releaseId = `${compactInstant(now)}-${String(nowDate.getUTCMilliseconds()).padStart(3, "0")}-${createHash("sha256").update(digest + Math.random()).digest("hex").slice(0, 6)}`;
  const releaseFromDist = path.posix.join(RELEASES_DIR, releaseId);
  report.release = releaseId;

  const staged = await createStagingDir(distDir, RELEASES_DIR);
  const volcanoes = volcanoesResource(reftimes.map((reftime) => decision.byReftime.get(reftime)!));
  const drafts: ArtefactDraft[] = [
    { key: "reftimes.json", file: "reftimes.json", contentType: CONTENT_TYPES.json, body: jsonBody([{ reftimes }]) },
    { key: "changelog.rss", file: "changelog.rss", contentType: CONTENT_TYPES.rss, body: Buffer.from(renderChangelog(history, { publicUrl: options.publicUrl })) },
    volcanoes,
  ];
  report.durationMs = Math.round(performance.now() - started);
  const indexRuns: ReleaseIndex["runs"] = {};
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
      modified: before && before.contentSha256 === build.contentSha256 ? before.modified : laterThan(before?.modified, now),
      contentSha256: build.contentSha256,
      json: build.json,
      ...(build.png ? { png: build.png } : {}),
    };
    // The unchanged entry of the previous release is kept, and with it its JSON text (memoJson).
    indexRuns[reftime] = before && sameFlatRecord(before, entry) ? before : entry;
  }
  const state: BuildState = {
    format: BUILD_STATE_FORMAT,
    pipeline,
    files,
    runs,
    published: samePublished(prevState.published, decision.folderOf) ? prevState.published : sortKeys(Object.fromEntries(decision.folderOf)),
    events: history,
    digest,
    publicUrl: options.publicUrl,
  };
  // The lists are compressed on the thread pool while this thread serialises the state. The report is
  // not: GET /datasets sends it to operators as it is, and at 1,000 runs compressing it cost ~4 ms a build.
  const encodedState = encodeState(state);
  const runChunks = encodeIndexRuns(indexRuns);
  const [written, stateChunks, indexChunks] = await Promise.all([
    writeArtefacts(staged.dir, releaseFromDist, [...drafts, { key: "report.json", file: "report.json", contentType: CONTENT_TYPES.json, body: Buffer.from(`${objectJson(report, { runs: arrayJson(report.runs) })}\n`), precompress: false }]),
    writeSharedChunks(distDir, STATE_DIR, encodedState.chunks, previous?.stateChunks ?? new Set()),
    writeSharedChunks(distDir, INDEX_CHUNKS_DIR, runChunks, new Set(previous?.index.runChunks)),
    writeFile(path.join(staged.dir, STATE_FILE), encodedState.head),
  ]);
  const dirsUsed = [...runDirsUsed(indexRuns, state), ...stateChunks, ...indexChunks, viewer.dir];
  await writeFile(path.join(staged.dir, DIRS_FILE), jsonBody(dirsUsed));
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
  };
  const { runs: _inChunks, ...storedIndex } = index;
  await switchToRelease(distDir, staged, releaseId, `${JSON.stringify(storedIndex satisfies StoredReleaseIndex)}\n`);
  const garbage = await collectGarbage(distDir, nowDate.getTime(), { id: releaseId, dirs: dirsUsed });
  log(`published release ${releaseId}: ${reftimes.length} run(s), ${rebuiltWhy.size} rebuilt, ${report.counts.errors} error(s) (${report.durationMs} ms)`);
  if (garbage.releases || garbage.runs) log(`removed ${garbage.releases} old release(s) and ${garbage.runs} unused run director${garbage.runs === 1 ? "y" : "ies"}`);
  return { release: releaseId, current: { id: releaseId, index, state, stateChunks: new Set(encodedState.chunks.map((chunk) => chunk.name)) }, published: true, report, events };
}

/** Reuses a folder's last outcome when its inputs are unchanged; otherwise reads, validates and renders it. */
async function updateRun(
  run: ScannedRun,
  prior: RunState | undefined,
  pipeline: string,
  priorFiles: FolderFingerprints,
  options: BuildOptions & { builtAt: string; forced: boolean },
  rebuilding: (why: string) => void,
): Promise<RunState> {
  if (run.partial.length) {
    return {
      inputs: prior?.inputs ?? "",
      waiting: true,
      issues: [{ severity: "warning", file: `${run.folder}/${run.partial[0]}`, message: `files are still arriving (${run.partial.join(", ")})`, fix: "the run is built once every *.part file has been renamed to its final name" }],
      ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}),
    };
  }
  const inputs = inputsHash(run, pipeline);
  const unchanged = prior !== undefined && prior.inputs === inputs && !prior.waiting;
  if (unchanged && !options.forced) return prior;
  rebuilding(unchanged ? "an operator asked for a rebuild" : whyRebuild(run, prior, priorFiles));

  const { issues, assembled } = await validateRun(run, options);
  const base: RunState = { inputs, waiting: false, issues: issues.list, ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}) };
  if (!assembled) return base;

  const reftime = assembled.model.meta.reftime;
  const drafts = await renderRun(assembled);
  if (!(await unchangedSinceScan(run))) {
    // Its inputs hash no longer names what was read: build it again once the files are still.
    return {
      inputs: "",
      waiting: true,
      issues: [{ severity: "warning", file: run.folder, message: "files changed while they were being read", fix: "nothing to do: the run is built again from its new files" }],
      ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}),
    };
  }
  // Same inputs make the same directory name; a requested rebuild must not trust what is there.
  const dirName = `${compactInstant(reftime)}-${inputs.slice(0, 16)}${options.forced ? `-${randomBytes(4).toString("hex")}` : ""}`;
  const dirFromDist = path.posix.join(RUNS_DIR, dirName);
  const staged = await createStagingDir(options.distDir, RUNS_DIR);
  const artefacts = await writeArtefacts(staged.dir, dirFromDist, drafts);
  const resources = Object.fromEntries(drafts.flatMap((d) => (d.resourceName ? [[d.resourceName, d.key]] : [])));
  const list: RunArtefacts = { format: RUN_ARTEFACTS_FORMAT, reftime, artefacts: sortKeys(artefacts), resources: sortKeys(resources) };
  await writeFile(path.join(staged.dir, RUN_ARTEFACTS_FILE), jsonBody(list));
  await staged.commit(dirName);
  const current: RunBuild = {
    inputs,
    reftime,
    type: assembled.model.meta.type,
    contentSha256: contentHash(artefacts),
    dir: dirFromDist,
    json: drafts[0]!.key,
    ...(drafts.some((d) => d.key === runPngKey(reftime)) ? { png: runPngKey(reftime) } : {}),
    ...(assembled.volcano ? { volcano: { name: assembled.volcano.name, lat: assembled.volcano.lat, lon: assembled.volcano.lon } } : {}),
  };
  return { ...base, current };
}

function whyRebuild(run: ScannedRun, prior: RunState | undefined, priorFiles: FolderFingerprints): string {
  if (!prior) return "new run folder";
  if (prior.waiting) return "its files have arrived";
  const now = new Map(run.files.map((f) => [f.name, f.sha256]));
  const changed: string[] = [];
  const priorNames = Object.keys(priorFiles);
  for (const name of priorNames) {
    if (!now.has(name)) changed.push(`${name} removed`);
    else if (now.get(name) !== priorFiles[name]!.sha256) changed.push(`${name} changed`);
  }
  for (const name of now.keys()) if (!priorNames.includes(name)) changed.push(`${name} added`);
  return changed.length ? changed.join(", ") : "the pipeline or its configuration changed";
}

interface PublishDecision {
  byReftime: Map<string, RunBuild>;
  folderOf: Map<string, string>;
  /** Folder to the build of it that is served. */
  servedBuild: Map<string, RunBuild>;
  /** Folder to why it is not served although valid. */
  losers: Map<string, { status: "duplicate" | "variant-conflict"; winner: string }>;
}

const TYPE_RANK: Record<RunType, number> = Object.fromEntries(RUN_TYPES.map((t, i) => [t, i])) as Record<RunType, number>;

/**
 * One folder per reftime. Identical content is a duplicate (the first folder by name is served).
 * Different content is a variant conflict, settled by a fixed rule: a Real Eruption beats a
 * Rehearsal beats an Exercise (an exercise must never hide a real eruption), then the folder whose
 * name sorts last wins (a corrected copy is named after the original, e.g. `..._v2`).
 */
export function decidePublished(runs: Readonly<Record<string, RunState>>): PublishDecision {
  const candidates = new Map<string, Array<{ folder: string; build: RunBuild }>>();
  // A build lists its folders in name order already: sorting 1,000 names again cost a millisecond.
  let folders = Object.keys(runs);
  if (!folders.every((folder, i) => i === 0 || folders[i - 1]! < folder)) folders = folders.sort();
  for (const folder of folders) {
    const state = runs[folder]!;
    const build = state.current ?? state.lastGood;
    if (!build) continue;
    const list = candidates.get(build.reftime);
    if (list) list.push({ folder, build });
    else candidates.set(build.reftime, [{ folder, build }]);
  }
  const decision: PublishDecision = { byReftime: new Map(), folderOf: new Map(), servedBuild: new Map(), losers: new Map() };
  for (const [reftime, list] of candidates) {
    if (list.length === 1) {
      const only = list[0]!;
      decision.byReftime.set(reftime, only.build);
      decision.folderOf.set(reftime, only.folder);
      decision.servedBuild.set(only.folder, only.build);
      continue;
    }
    const winner = [...list].sort((a, b) => TYPE_RANK[b.build.type] - TYPE_RANK[a.build.type] || (a.folder < b.folder ? 1 : -1))[0]!;
    // Among identical copies, the first folder by name is the one served.
    const served = list.find((c) => c.build.contentSha256 === winner.build.contentSha256)!;
    decision.byReftime.set(reftime, served.build);
    decision.folderOf.set(reftime, served.folder);
    decision.servedBuild.set(served.folder, served.build);
    for (const other of list) {
      if (other === served) continue;
      decision.losers.set(other.folder, { status: other.build.contentSha256 === served.build.contentSha256 ? "duplicate" : "variant-conflict", winner: served.folder });
    }
  }
  return decision;
}

/** The report entry last made for each run state, reused while it says the same (its JSON text with it). */
const reportOf = new WeakMap<RunState, RunReport>();

function reportRun(folder: string, state: RunState, decision: PublishDecision, rebuilt: string | undefined): RunReport {
  const { status, note } = runStatus(folder, state, decision);
  const cached = reportOf.get(state);
  if (cached && cached.folder === folder && cached.status === status && cached.note === note && cached.rebuilt === rebuilt) return cached;
  const build = state.current ?? state.lastGood;
  const report: RunReport = {
    folder,
    ...(build ? { reftime: build.reftime, type: build.type } : {}),
    ...(rebuilt ? { rebuilt } : {}),
    issues: state.issues,
    status,
    ...(note ? { note } : {}),
  };
  reportOf.set(state, report);
  return report;
}

function runStatus(folder: string, state: RunState, decision: PublishDecision): Pick<RunReport, "status" | "note"> {
  const served = decision.servedBuild.get(folder);
  const loser = decision.losers.get(folder);
  if (served && state.current === served) return { status: "published" };
  if (served) {
    return {
      status: "kept-last-good",
      note: state.waiting ? "files are still arriving; the last good version stays published" : "its files are invalid now; the last good version stays published until they are fixed or the folder is removed",
    };
  }
  if (loser?.status === "duplicate") return { status: "duplicate", note: `same content as ${loser.winner}, which is published` };
  if (loser) return { status: "variant-conflict", note: `same reftime as ${loser.winner} with other content; ${loser.winner} is published (a higher run type wins, then the folder name that sorts last)` };
  return { status: state.waiting ? "waiting" : "invalid" };
}

/**
 * Last-Modified for new content: now, but always after the date of the content it replaces. HTTP dates
 * have whole seconds: content changed twice within one second would otherwise keep its date, and a
 * client revalidating with If-Modified-Since alone would keep the old content.
 */
function laterThan(previous: string | undefined, now: string): string {
  const before = previous === undefined ? undefined : parseInstant(previous);
  const at = parseInstant(now)!;
  return before !== undefined && before >= at ? formatInstant(before + 1000) : now;
}

/** One hash for everything a run publishes: equal hashes mean clients see exactly the same run. */
export function contentHash(artefacts: Readonly<Record<string, Artefact>>): string {
  const hash = createHash("sha256");
  for (const key of Object.keys(artefacts).sort()) hash.update(`${key}\0${artefacts[key]!.sha256}\n`);
  return hash.digest("hex");
}

/** Resource names whose content differs between two builds of a run (added, removed or changed). */
function changedResources(before: RunArtefacts, after: RunArtefacts): string[] {
  const names = new Set([...Object.keys(before.resources), ...Object.keys(after.resources)]);
  const sha = (list: RunArtefacts, name: string) => {
    const key = list.resources[name];
    return key ? list.artefacts[key]?.sha256 : undefined;
  };
  return [...names].filter((name) => sha(before, name) !== sha(after, name)).sort();
}

async function readRunArtefacts(distDir: string, build: RunBuild): Promise<RunArtefacts> {
  return RunArtefacts.parse(JSON.parse(await readFile(path.join(distDir, build.dir, RUN_ARTEFACTS_FILE), "utf8")));
}

async function readModel(distDir: string, build: RunBuild): Promise<AshModel> {
  const list = await readRunArtefacts(distDir, build);
  return AshModel.parse(JSON.parse(await readFile(path.join(distDir, list.artefacts[build.json]!.identity.file), "utf8")));
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

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
