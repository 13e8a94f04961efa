/**
 * One build: scan runs/, rebuild the run folders whose inputs changed, decide what is published for
 * each reftime, and publish a new release atomically (or nothing, when nothing changed).
 * Read → validate → transform → write: nothing is written before a run has been fully validated,
 * and every problem of every run is collected into the report.
 *
 * The stages, in order (buildLocked): take the lock (build) → read what the last build left
 * (previousBuild: release, state, sweep) → bring every run folder up to date (updateRuns) → decide what
 * is served (decidePublished) → changelog events (changelogEvents) → the report and its digest
 * (reportBuild) → write the release, switch to it and collect garbage (writeRelease).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { AshModel } from "../contract/ashModel.ts";
import type { BuildReport, RunReport } from "../contract/buildReport.ts";
import { changedTags } from "../contract/cacheTags.ts";
import { RUN_ARTEFACTS_FILE, RunArtefacts } from "../contract/releaseIndex.ts";
import { checkRunsDirectory } from "./runsDirectory.ts";
import { entryJson } from "../formats/memoJson.ts";
import { formatInstant } from "../time/instant.ts";
import { emptyState, type BuildState, type RunBuild, type RunState } from "./buildState.ts";
import { describeChanges, eventsFromFeed, eventTime, MAX_CHANGELOG_EVENTS, publishedEvent, updatedEvent, withdrawnEvent, type ChangelogEvent } from "./changelog.ts";
import { decidePublished, reportRun, type PublishDecision } from "./publishDecision.ts";
import { acquireBuildLock, currentReleaseId, loadCurrentRelease, recountSharedDirs, sweepTemporaries, type LoadedRelease } from "./releaseStore.ts";
import { foldersAfterChanges, inputsHash, listRunFolders, scanRuns, type RunFolder } from "./scanRuns.ts";
import { warmStepPool } from "./stepPool.ts";
import { isEarlierVersionOf, pipelineKey, type PipelineSettings } from "./pipelineSettings.ts";
import { updateRun } from "./updateRun.ts";
import { publishViewer, type PublishedViewer } from "./viewer.ts";
import { writeRelease } from "./writeRelease.ts";

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
  /** The cache tags whose answers this publish changed (src/contract/cacheTags.ts); empty when nothing was published. */
  changedTags: string[];
  /** What finding the changes cost: the folders scanned, those of them listed, and the files read and hashed. */
  scan: ScanCounts;
}

/** See BuildResult.scan: a folder whose stat is as last listed is not listed, a file whose stat is as last hashed is not read. */
export interface ScanCounts {
  folders: number;
  listed: number;
  hashed: number;
}

export async function build(options: BuildOptions): Promise<BuildResult> {
  await checkRunsDirectory(options.runsDir);
  const lock = await acquireBuildLock(options.distDir);
  let result: BuildResult;
  try {
    result = await buildLocked(options, lock);
  } catch (error) {
    recountSharedDirs(options.distDir); // it may have written run directories that no release uses
    // The build's own error is the one to tell: a lock that cannot be removed either (dist/ turned read-only) would hide it.
    await lock.release().catch(() => {});
    throw error;
  }
  await lock.release();
  return result;
}

async function buildLocked(options: BuildOptions, lock: { takenOver: boolean; takenAtMs: number }): Promise<BuildResult> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const nowDate = (options.now ?? (() => new Date()))();
  const now = formatInstant(nowDate.getTime());
  const { distDir } = options;

  const last = await previousBuild(options, lock.takenOver, log);
  // The viewer's files depend on its templates only: made once per content of those, then reused. Made while
  // the runs are read (the thread pool is idle then), not after them, where a first build waited ~0.1 s on it;
  // after previousBuild, whose sweep of temporaries would take the viewer's staging directory for one.
  const viewerPublished = publishViewer(distDir);
  viewerPublished.catch(() => undefined); // awaited below: a failure before then is not unhandled
  // Settled either way before going on: a failed build leaves no write in flight behind the lock.
  const { folders, runs, files, folderStats, rebuiltWhy, sameFilesNewPipeline, scan } = await updateRuns(options, last, lock.takenAtMs, log).finally(() => viewerPublished.catch(() => undefined));

  const decision = decidePublished(runs);
  for (const { name: folder } of folders) {
    const state = runs[folder]!;
    const served = decision.servedBuild.get(folder);
    // An unchanged run keeps its state object, and with it the JSON text already made of it (memoJson).
    if (state.lastGood !== served) runs[folder] = { ...state, lastGood: served };
  }

  const events = await changelogEvents(distDir, last, decision, sameFilesNewPipeline, eventTime(now, last.state.events[0]?.time));
  for (const event of events) log(`${event.kind} ${event.type} run ${event.reftime}: ${event.detail}`);
  const history = [...events, ...last.state.events].slice(0, MAX_CHANGELOG_EVENTS);

  const viewer = await viewerPublished;
  const { report, reftimes, digest } = reportBuild({ release: last.release?.id ?? "", now, folders, runs, decision, rebuiltWhy, events, viewer });

  const { release: previous, state: prevState } = last;
  if (previous && !last.pipelineChanged && events.length === 0 && prevState.digest === digest && options.publicUrl === prevState.publicUrl) {
    log("nothing changed: the current release stays");
    if (rebuiltWhy.size) recountSharedDirs(distDir); // a rebuilt run's new directory is used by no release
    report.durationMs = Math.round(performance.now() - started);
    return { release: previous.id, current: previous, published: false, report, events, changedTags: [], scan };
  }

  options.signal?.throwIfAborted();
  report.durationMs = Math.round(performance.now() - started);
  const current = await writeRelease({ distDir, publicUrl: options.publicUrl, nowDate, now, previous, prevState, pipeline: last.pipeline, decision, reftimes, runs, files, folders: folderStats, history, digest, viewer, report }, log);
  return { release: current.id, current, published: true, report, events, changedTags: changedTags(previous?.index, current.index), scan };
}

/** What the last build left: its release and state, and whether the pipeline changed since. */
interface PreviousBuild {
  release: LoadedRelease | undefined;
  state: BuildState;
  pipeline: string;
  pipelineChanged: boolean;
  /** The release this process published last is still current: its state was not read back from disk. */
  inMemory: boolean;
  /** The pipeline changed only by an upgrade of ashcast (PIPELINE_VERSION), not by the settings. */
  upgradeOnly: boolean;
}

async function previousBuild(options: BuildOptions, lockTakenOver: boolean, log: (line: string) => void): Promise<PreviousBuild> {
  const { distDir } = options;
  // The release this process published last is still current: no build has run since, so none has left
  // temporaries, unless one died holding the lock. Otherwise read it back (and sweep) from disk.
  const inMemory = options.previous?.state !== undefined && (await currentReleaseId(distDir)) === options.previous.id;
  if (!inMemory || lockTakenOver) {
    recountSharedDirs(distDir); // another process may have written to dist/ since
    const swept = await sweepTemporaries(distDir);
    if (swept) log(`swept ${swept} temporary item(s) left by an interrupted build`);
  }
  const pipeline = pipelineKey(options);
  const release = inMemory ? options.previous : await loadCurrentRelease(distDir);
  const state: BuildState = release?.state ?? { ...emptyState(pipeline), events: release ? await eventsOfRelease(distDir, release) : [] };
  const pipelineChanged = state.pipeline !== pipeline;
  if (release && !release.state) log(`no readable build state in the current release: rebuilding every run (the changelog's ${state.events.length} event(s) carried over from its feed)`);
  else if (pipelineChanged) log("the pipeline or its configuration changed: rebuilding every run");
  const upgradeOnly = pipelineChanged && isEarlierVersionOf(state.pipeline, options);
  return { release, state, pipeline, pipelineChanged, inMemory, upgradeOnly };
}

/** The changelog events of a release whose state cannot be read, from its feed; none when that cannot be read either. */
async function eventsOfRelease(distDir: string, release: LoadedRelease): Promise<ChangelogEvent[]> {
  const stored = release.index.artefacts[release.index.lists.changelog]?.identity.file;
  const rss = stored === undefined ? undefined : await readFile(path.join(distDir, stored), "utf8").catch(() => undefined);
  return rss === undefined ? [] : eventsFromFeed(rss).slice(0, MAX_CHANGELOG_EVENTS);
}

interface UpdatedRuns {
  /** In name order. */
  folders: RunFolder[];
  runs: Record<string, RunState>;
  files: BuildState["files"];
  folderStats: BuildState["folders"];
  /** Folder to why it was read and rendered again. */
  rebuiltWhy: Map<string, string>;
  /** Folders rendered again only because ashcast was upgraded: the same files and settings as the build before. */
  sameFilesNewPipeline: Set<string>;
  scan: ScanCounts;
}

/**
 * Every run folder brought up to date: scanned (stat calls; skipped for folders the watcher saw
 * unchanged; a folder whose stat is as last listed is not listed), then read and rendered only where the
 * inputs changed. The pipeline key is part of every input hash, so a changed pipeline rebuilds every run
 * by itself, while each folder's last good version stays known (and served if the rebuild fails).
 * `settledBefore`: when the build lock was taken, on the file system's clock (ScanOptions).
 */
async function updateRuns(options: BuildOptions, last: PreviousBuild, settledBefore: number, log: (line: string) => void): Promise<UpdatedRuns> {
  const { runsDir } = options;
  const { state: prevState, pipeline, pipelineChanged } = last;
  const priorRuns = prevState.runs;
  // The watcher names the folders that changed, added and removed ones included: the others are those of
  // the last build, so runs/ need not be listed (1,000 entries: several ms). A rebuild job lists it again.
  const folders =
    last.inMemory && !pipelineChanged && options.changedFolders !== undefined && options.rebuild === undefined
      ? foldersAfterChanges(runsDir, Object.keys(priorRuns), options.changedFolders)
      : listRunFolders(runsDir);
  const forced = (name: string) => options.rebuild === "all" || options.rebuild?.has(name) === true;
  const known = (name: string) => !forced(name) && !pipelineChanged && options.changedFolders !== undefined && !options.changedFolders.has(name) && priorRuns[name] !== undefined && prevState.files[name] !== undefined;
  const priorFolders = prevState.folders;
  // A changed pipeline rebuilds every run from a fresh scan: no folder is taken on its stat.
  const scanned = await scanRuns(runsDir, folders.filter((folder) => !known(folder.name)), prevState.files, { folderStats: pipelineChanged ? {} : priorFolders, settledBefore, beforeModelOutputRead: warmStepPool });
  const scannedByName = new Map(scanned.map((entry) => [entry.run.folder, entry]));
  const runs: Record<string, RunState> = {};
  const files: BuildState["files"] = {};
  const folderStats: BuildState["folders"] = {};
  const rebuiltWhy = new Map<string, string>();
  const sameFilesNewPipeline = new Set<string>();
  const scan: ScanCounts = { folders: scanned.length, listed: 0, hashed: 0 };
  for (const entry of scanned) {
    if (entry.listed) scan.listed++;
    scan.hashed += entry.hashed;
  }
  let done = 0;
  for (const { name: folder } of folders) {
    options.signal?.throwIfAborted();
    const entry = scannedByName.get(folder);
    const prior = priorRuns[folder];
    const folderStat = entry ? entry.folderStat : priorFolders[folder];
    if (folderStat) folderStats[folder] = folderStat;
    if (!entry || (entry.fingerprints === prevState.files[folder] && prior && !prior.waiting && !pipelineChanged && !forced(folder))) {
      // Not looked at (the watcher saw no change), or every file as last built: its outcome stands.
      runs[folder] = prior!;
      files[folder] = prevState.files[folder]!;
    } else {
      files[folder] = entry.fingerprints;
      if (last.upgradeOnly && prior !== undefined && inputsHash(entry.run, prevState.pipeline) === prior.inputs) sameFilesNewPipeline.add(folder);
      runs[folder] = await updateRun(entry.run, prior, pipeline, prevState.files[folder] ?? {}, { ...options, forced: forced(folder) }, (why) => {
        rebuiltWhy.set(folder, why);
        log(`rebuilding ${folder}: ${why}`);
      });
    }
    options.onProgress?.(++done, folders.length, folder);
  }
  return { folders, runs, files, folderStats, rebuiltWhy, sameFilesNewPipeline, scan };
}

/**
 * Changelog events: what is served now compared with what was served before. A run an upgraded ashcast
 * rendered again from the same files in the same folder, with the same settings, is no event: nothing in the
 * forecast changed (an upgrade would otherwise announce every run as updated). When the last release's state
 * could not be read, what it served is taken from its run list: a run it served is not announced again, only
 * what a client sees of it changing (type, description, layers).
 */
async function changelogEvents(distDir: string, last: PreviousBuild, decision: PublishDecision, sameFilesNewPipeline: ReadonlySet<string>, now: string): Promise<ChangelogEvent[]> {
  const prevState = last.state;
  const events: ChangelogEvent[] = [];
  const servedBefore = (reftime: string) => (Object.hasOwn(prevState.published, reftime) ? prevState.runs[prevState.published[reftime]!]?.lastGood : undefined);
  const listedWithoutState = last.release && !last.release.state ? last.release.index.runs : {};
  for (const [reftime, build] of decision.byReftime) {
    const old = servedBefore(reftime);
    const folder = decision.folderOf.get(reftime);
    if (!old) {
      const listed = Object.hasOwn(listedWithoutState, reftime) ? listedWithoutState[reftime] : undefined;
      if (!listed) events.push(publishedEvent(await readModel(distDir, build), now));
      else if (listed.contentSha256 !== build.contentSha256) {
        // What that release served against what is served now: without the state, only what a client sees is
        // known to have changed (a type, a description, a layer), not a new rendering of the same forecast.
        const before = await readModel(distDir, listed).catch(() => undefined);
        const after = await readModel(distDir, build);
        if (before && describeChanges(before, after).length > 0) events.push(updatedEvent(before, after, [], now));
      }
    } else if (old.contentSha256 !== build.contentSha256 && !(folder !== undefined && prevState.published[reftime] === folder && sameFilesNewPipeline.has(folder))) {
      const [oldList, newList] = await Promise.all([readRunArtefacts(distDir, old), readRunArtefacts(distDir, build)]);
      events.push(updatedEvent(await readModel(distDir, old), await readModel(distDir, build), changedResources(oldList, newList), now));
    }
  }
  for (const reftime of Object.keys(prevState.published)) {
    const old = decision.byReftime.has(reftime) ? undefined : servedBefore(reftime);
    if (old) events.push(withdrawnEvent(reftime, old.type, now));
  }
  for (const [reftime, listed] of Object.entries(listedWithoutState)) {
    if (!decision.byReftime.has(reftime)) events.push(withdrawnEvent(reftime, listed.type, now));
  }
  return events;
}

/**
 * The build report, the published reftimes (newest first), and the digest of what is served and reported
 * (apart from why runs were rebuilt): an equal digest, and no event, means nothing to publish.
 */
function reportBuild(input: { release: string; now: string; folders: readonly RunFolder[]; runs: Readonly<Record<string, RunState>>; decision: PublishDecision; rebuiltWhy: ReadonlyMap<string, string>; events: readonly ChangelogEvent[]; viewer: PublishedViewer }): { report: BuildReport; reftimes: string[]; digest: string } {
  const { folders, runs, decision, rebuiltWhy } = input;
  const runReports: RunReport[] = folders.map(({ name }) => reportRun(name, runs[name]!, decision, rebuiltWhy.get(name)));
  let errors = 0;
  let warnings = 0;
  for (const run of runReports) {
    for (const issue of run.issues) {
      if (issue.severity === "error") errors++;
      else warnings++;
    }
  }
  const reftimes = [...decision.byReftime.keys()].sort().reverse();
  // One text hashed at once: 2,000 small hash updates cost more than joining the same bytes.
  const digestParts = [input.viewer.dir];
  for (const [reftime, build] of decision.byReftime) digestParts.push(reftime, build.dir);
  for (const run of runReports) digestParts.push(run.rebuilt === undefined ? entryJson(run) : JSON.stringify({ ...run, rebuilt: undefined }));
  const digest = createHash("sha256").update(digestParts.join("\n")).digest("hex");
  const report: BuildReport = {
    release: input.release,
    built: input.now,
    durationMs: 0,
    counts: { folders: folders.length, published: reftimes.length, rebuilt: rebuiltWhy.size, errors, warnings },
    runs: runReports,
    withdrawn: input.events.filter((e) => e.kind === "withdrawn").map((e) => e.reftime),
  };
  return { report, reftimes, digest };
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

async function readRunArtefacts(distDir: string, build: Pick<RunBuild, "dir">): Promise<RunArtefacts> {
  return RunArtefacts.parse(JSON.parse(await readFile(path.join(distDir, build.dir, RUN_ARTEFACTS_FILE), "utf8")));
}

async function readModel(distDir: string, build: Pick<RunBuild, "dir" | "json">): Promise<AshModel> {
  const list = await readRunArtefacts(distDir, build);
  return AshModel.parse(JSON.parse(await readFile(path.join(distDir, list.artefacts[build.json]!.identity.file), "utf8")));
}
