/**
 * `ashcast watch`: builds once, then rebuilds whenever runs/ changes.
 * Files must be complete before they are read: chokidar's awaitWriteFinish holds an event until the
 * file has stopped growing, `*.part` files and folders are ignored until renamed, and a build waits for
 * runs/ to be quiet (debounce). One build at a time; changes that arrive during a build start another.
 * Whatever a build finds is validated fully, so a file caught half-written is an invalid run, never a
 * published one.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import path from "node:path";
import chokidar, { type FSWatcher } from "chokidar";
import { formatError } from "../errors.ts";
import { build, type BuildOptions, type BuildResult } from "./build.ts";
import type { CachePurger } from "./cachePurger.ts";
import { cleanDist, ensureDistDirectory, type DistCleanup } from "./releaseStore.ts";
import { checkRunsDirectory, runsAnEmptyBuildWouldWithdraw } from "./runsDirectory.ts";
import { listRunFolders } from "./scanRuns.ts";
import { isModelOutputName, isTemporaryName } from "../contract/runFolderNames.ts";
import { warmStepPool } from "./stepPool.ts";

export interface WatchOptions extends BuildOptions {
  /** Quiet time on runs/ before a build starts. */
  debounceMs?: number;
  /** How long a file's size must stay unchanged before its event is delivered. */
  stabilityMs?: number;
  /** Told what each publish changed, to purge the shared caches (in the background). */
  purger?: CachePurger;
  /** Called after every build, successful or not. */
  onBuild?: (outcome: { result?: BuildResult; error?: unknown }) => void;
}

export interface Watcher {
  /** Resolves when no build is running or pending. */
  idle(): Promise<void>;
  /**
   * Builds now, reading and rendering `runs` again although unchanged ("all", or folder names), in turn
   * with the builds the watcher starts itself. Rejects with the build's error (the signal's reason when
   * cancelled); the last release then stays.
   */
  rebuild(runs: "all" | readonly string[], signal: AbortSignal): Promise<BuildResult>;
  /** Removes old releases, unused run directories and what killed builds left, in turn with the builds. */
  cleanDist(signal: AbortSignal): Promise<DistCleanup>;
  close(): Promise<void>;
}

export async function watchRuns(options: WatchOptions): Promise<Watcher> {
  const log = options.log ?? (() => {});
  const debounceMs = options.debounceMs ?? 400;
  const stabilityMs = options.stabilityMs ?? 1000;
  const runsDir = path.resolve(options.runsDir);
  const distDir = path.resolve(options.distDir);
  // Refused before watching starts: a missing folder or one run folder is the operator's mistake, not a build's.
  await checkRunsDirectory(runsDir);
  await ensureDistDirectory(distDir);
  /** The runs directory being watched (its inode): when it is replaced or gone, the rearm guard below takes over. */
  let watchedInode = (await stat(runsDir)).ino;

  let building: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  /** Latest modification time among the changes waiting for a build (for the publish latency). */
  let changedAt: number | undefined;
  const reasons = new Set<string>();
  /** Run folders touched by events since the last build; undefined until the first build has scanned all. */
  let changedFolders: Set<string> | undefined;
  /** The release the last build left current, handed to the next build so it need not read it back. */
  let current: BuildResult["current"] | undefined;
  const idleWaiters: Array<() => void> = [];

  /** Operator jobs, run by the build loop one at a time, between the builds changes start. */
  const jobs: Array<() => Promise<void>> = [];

  const runBuild = async (job?: { rebuild: "all" | ReadonlySet<string>; signal: AbortSignal }): Promise<{ result: BuildResult } | { error: unknown } | undefined> => {
    // Events of a runs directory that was moved away or replaced (its folders "removed" as it went) are not
    // changes of runs: building on them would withdraw every run. The guard below looks at the new one.
    const now = await stat(runsDir).catch(() => undefined);
    if (!job && (now === undefined || now.ino !== watchedInode)) {
      pending = false;
      return undefined;
    }
    const changes = [...reasons];
    const since = changedAt;
    const folders = changedFolders;
    reasons.clear();
    changedAt = undefined;
    changedFolders = new Set();
    pending = false;
    if (changes.length) log(`change: ${changes.slice(0, 5).join(", ")}${changes.length > 5 ? ` and ${changes.length - 5} more` : ""}`);
    try {
      // Only the folders the events named are looked at: a change costs the same with 10 runs or 1,000.
      const result = await build({
        ...options,
        ...(folders ? { changedFolders: folders } : {}),
        ...(current ? { previous: current } : {}),
        ...(job ? { rebuild: job.rebuild, signal: job.signal } : {}),
      });
      current = result.current;
      if (result.published) options.purger?.purge(result.release, result.changedTags);
      if (since !== undefined && result.published) log(`published ${Math.round(Date.now() - since)} ms after the last change was written`);
      options.onBuild?.({ result });
      return { result };
    } catch (error) {
      // A failed build leaves the last release served; say why and keep watching. Its folders are
      // looked at again next time (all of them, if this was the first build).
      if (folders && changedFolders) for (const folder of folders) changedFolders.add(folder);
      else changedFolders = undefined;
      if (job?.signal.aborted) {
        log("the rebuild was cancelled, the last release is still served");
        // Changes it had taken on are built now rather than at the next change.
        for (const change of changes) reasons.add(change);
        if (changes.length) pending = true;
      } else log(`build failed, the last release is still served:\n${formatError(error)}`);
      options.onBuild?.({ error });
      return { error };
    }
  };

  const loop = async (): Promise<void> => {
    do {
      while (jobs.length) await jobs.shift()!();
      if (pending && !timer) await runBuild();
    } while ((pending && !timer) || jobs.length);
    building = undefined;
    if (!timer) for (const resolve of idleWaiters.splice(0)) resolve();
  };

  /** Queues a job for the build loop and starts the loop if it is idle. */
  const enqueue = <T>(work: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      jobs.push(() => work().then(resolve, reject));
      if (!building) building = loop();
    });

  const schedule = (): void => {
    pending = true;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!building) building = loop();
    }, debounceMs);
  };

  const onEvent = (event: string, filePath: string, stats?: { mtimeMs: number }): void => {
    const relative = path.relative(runsDir, filePath) || ".";
    reasons.add(`${event} ${relative}`);
    const folder = relative.split(path.sep)[0];
    if (folder && folder !== ".") changedFolders?.add(folder);
    const written = stats?.mtimeMs ?? Date.now();
    changedAt = Math.max(changedAt ?? 0, Math.min(written, Date.now()));
    // Model output to read: the build's workers load their modules during the quiet time rather than after it.
    if ((event === "add" || event === "change") && isModelOutputName(path.basename(filePath))) warmStepPool();
    schedule();
  };

  // The first build, before watching catches up; none while the runs directory is empty and the release serves
  // runs (a volume not mounted yet): nothing is withdrawn until a run folder appears in it.
  const withdrawn = await runsAnEmptyBuildWouldWithdraw(runsDir, distDir);
  if (withdrawn > 0) {
    log(`the runs directory ${runsDir} is empty: nothing is withdrawn and the last release (${withdrawn} run(s)) stays served until a run folder appears in it (withdraw runs one by one with the operator route)`);
  } else {
    pending = true;
    building = loop();
  }
  const startWatching = async (): Promise<FSWatcher> => {
    const created = chokidar.watch(runsDir, {
      ignoreInitial: true,
      ignored: (candidate: string) => isIgnored(candidate, runsDir),
      awaitWriteFinish: { stabilityThreshold: stabilityMs, pollInterval: Math.min(100, stabilityMs) },
      depth: 2,
    });
    created.on("all", (event, filePath, stats) => {
      if (event === "addDir") whenSettled(filePath, 0);
      else onEvent(event, filePath, stats);
    });
    await new Promise<void>((resolve, reject) => {
      created.once("ready", resolve);
      created.once("error", reject);
    });
    created.on("error", (error) => log(`watch error: ${formatError(error)}`));
    return created;
  };
  /**
   * A new folder is built once its files are all in place: at once for a finished folder renamed in, and for one
   * still being copied once nothing in it has changed for `stabilityMs` (looked at again every `stabilityMs`, for
   * a minute at most). Its files' own events come too, but chokidar may miss files made as the folder is.
   */
  const settling = new Set<NodeJS.Timeout>();
  let closed = false;
  const whenSettled = (folder: string, attempt: number): void => {
    void settledFolder(folder, stabilityMs).then((state) => {
      if (state === "gone" || closed) return; // a look still under way when the watcher closed starts nothing
      if (state === "settled" || attempt * stabilityMs >= 60_000) return onEvent("addDir", folder);
      const retry = setTimeout(() => {
        settling.delete(retry);
        whenSettled(folder, attempt + 1);
      }, stabilityMs);
      settling.add(retry);
    });
  };
  let watcher = await startWatching();
  // A folder deleted while chokidar was starting would otherwise go unnoticed until the next change.
  const gone = await stat(runsDir).then(() => undefined, (error: unknown) => error);
  if (gone !== undefined) {
    await watcher.close();
    await building;
    await checkRunsDirectory(runsDir); // says what is wrong, as a user error
    throw gone;
  }

  // The runs directory itself removed, or swapped for another (mv runs runs.old; mv new runs): chokidar stops
  // following it. Looked at every second: while it is gone the last release stays served (and the process stays
  // up); when it is back, watching starts again on it and every run folder is looked at.
  watchedInode = (await stat(runsDir)).ino;
  let missing = false;
  let rearming: Promise<void> | undefined;
  const rearm = async (): Promise<void> => {
    const now = await stat(runsDir).catch(() => undefined);
    if (now === undefined || !now.isDirectory()) {
      if (!missing) log(`the runs directory ${runsDir} is gone: the last release stays served; watching again once it is back`);
      missing = true;
      return;
    }
    if (!missing && now.ino === watchedInode) return;
    const why = missing ? "came back" : "was replaced";
    await watcher.close();
    // Noted as followed only once watching has started again: if it fails, the next look tries again.
    watcher = await startWatching();
    missing = false;
    watchedInode = now.ino;
    reasons.add(`the runs directory ${why}`);
    changedFolders = undefined; // every folder looked at
    // Empty, it is far likelier a mount that failed (the bare mount point) than every run withdrawn on purpose:
    // nothing is built, so nothing is withdrawn, until a run folder appears in it.
    if (listRunFolders(runsDir).length === 0) {
      log(`the runs directory ${runsDir} ${why} empty: nothing is withdrawn and the last release stays served until a run folder appears in it (withdraw runs one by one with the operator route)`);
      return;
    }
    log(`the runs directory ${runsDir} ${why}: watching it again`);
    schedule();
  };
  const guard = setInterval(() => {
    rearming ??= rearm()
      .catch((error: unknown) => log(`watch error: ${formatError(error)}`))
      .finally(() => (rearming = undefined));
  }, 1000);

  return {
    idle: () => (building || timer ? new Promise<void>((resolve) => idleWaiters.push(resolve)) : Promise.resolve()),
    rebuild: (runs, signal) =>
      enqueue(async () => {
        signal.throwIfAborted();
        const outcome = (await runBuild({ rebuild: runs === "all" ? "all" : new Set(runs), signal }))!; // a job's build is never skipped
        if ("error" in outcome) throw outcome.error;
        return outcome.result;
      }),
    cleanDist: (signal) =>
      enqueue(async () => {
        signal.throwIfAborted();
        const cleaned = await cleanDist(distDir, Date.now());
        log(`cleanup: removed ${cleaned.releases} old release(s), ${cleaned.runs} unused run director${cleaned.runs === 1 ? "y" : "ies"} and ${cleaned.temporaries} temporary item(s)`);
        return cleaned;
      }),
    async close() {
      closed = true;
      clearInterval(guard);
      for (const retry of settling) clearTimeout(retry);
      await rearming;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await watcher.close();
      await building;
    },
  };
}

/** Ignores hidden entries, partial uploads and editor temporaries (dist/ is never inside runs/: src/cli/settings.ts). */
export function isIgnored(candidate: string, runsDir: string): boolean {
  const absolute = path.resolve(candidate);
  const relative = path.relative(runsDir, absolute);
  if (!relative || relative.startsWith("..")) return false;
  return relative.split(path.sep).some((segment) => isTemporaryName(segment));
}

/** Whether a folder holds files and none of them (nor the folder's list) changed within the last `stabilityMs`. */
async function settledFolder(folder: string, stabilityMs: number): Promise<"settled" | "changing" | "gone"> {
  const since = Date.now() - stabilityMs;
  const entries = await readdir(folder).catch(() => undefined);
  if (entries === undefined) return "gone";
  if (entries.length === 0) return "changing";
  const times = await Promise.all([folder, ...entries.map((name) => path.join(folder, name))].map((entry) => lstat(entry).then((stats) => stats.mtimeMs, () => Number.POSITIVE_INFINITY)));
  return times.every((mtimeMs) => mtimeMs < since) ? "settled" : "changing";
}
