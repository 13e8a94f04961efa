/**
 * The dist directory as a store of immutable releases, switched atomically:
 *
 *   dist/current             symlink -> releases/<id>   (swapped with rename: readers see old or new, whole)
 *   dist/releases/<id>/      index.json (written last), state.json, reftimes.json, changelog.rss, report.json ...
 *   dist/runs/<reftime>-<h>/ a run's artefacts, immutable, named by its input hash and shared by releases
 *   dist/state/<h>.json      chunks of the releases' build states, named by their content and shared likewise
 *   dist/index/<h>.json      chunks of the releases' run lists (what the server reads), likewise
 *
 * Everything is written under a `.tmp-*` name first and renamed into place, so SIGKILL at any moment
 * leaves the previous release whole; the next build sweeps the temporaries.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { lstat, open, mkdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { readReleaseIndex } from "../contract/readReleaseIndex.ts";
import { CURRENT_LINK, INDEX_CHUNKS_DIR, INDEX_FILE, type ReleaseIndex } from "../contract/releaseIndex.ts";
import { UserError } from "../errors.ts";
import { parseInstant } from "../time/instant.ts";
import { decodeStoredState, type BuildState } from "./buildState.ts";
import { indexChunksAsWritten } from "./indexChunks.ts";
import { tryLock } from "../os/lockFile.ts";

export const RELEASES_DIR = "releases";
export const RUNS_DIR = "runs";
/** The viewer's files, one directory per content of its templates (src/build/viewer.ts). */
export const VIEWER_DIR = "viewer";
export const STATE_FILE = "state.json";
/** The chunks of the releases' states, shared between releases (buildState.ts). */
export const STATE_DIR = "state";
/** What a release needs of the shared directories: its run directories (served, or valid and kept for later), state and index chunks and viewer directory. Garbage collection reads it. */
export const DIRS_FILE = "dirs.json";
const LOCK_FILE = ".build.lock";
const TMP_PREFIX = ".tmp-";
/**
 * Releases kept: the newest few, and every release younger than a few minutes, so a server that has not
 * yet moved on (it follows dist/current within a second; longer if it missed file events) finds its files
 * even when builds follow each other quickly.
 */
export const KEEP_RELEASES = 3;
export const KEEP_RELEASES_YOUNGER_THAN_MS = 5 * 60_000;
const MAX_KEPT_RELEASES = 100;

const tmpName = () => `${TMP_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}`;

/**
 * Creates the dist directory if need be. What stops it is the operator's to fix (a path that is a file, a
 * dangling link to a volume not mounted, a directory this user may not write), not a bug: a UserError, which
 * `watch` and `start` meet before their first build rather than build by build.
 */
export async function ensureDistDirectory(distDir: string): Promise<void> {
  await mkdir(distDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (!["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "ENOENT", "ELOOP"].includes(error.code ?? "")) throw error;
    throw new UserError("cannot create the dist directory", {
      where: distDir,
      fix: "give --out (ASHCAST_DIST) a directory this user may create and write, on a writable file system",
      cause: error,
    });
  });
}

/**
 * Takes the build lock (one build at a time across processes). Returns the function that releases it,
 * whether the lock was taken over from a build that died (whose temporaries then need sweeping), and when
 * it was taken on the file system's clock (the lock file's ctime): file times from before it can be
 * trusted by the next build (scanRuns.ts, ScanOptions.settledBefore).
 */
export async function acquireBuildLock(distDir: string): Promise<{ release: () => Promise<void>; takenOver: boolean; takenAtMs: number }> {
  await ensureDistDirectory(distDir);
  const lockPath = path.join(distDir, LOCK_FILE);
  const attempt = await tryLock(lockPath, TMP_PREFIX);
  if (attempt.kind === "taken") {
    // Unreadable (it cannot be, held by us): no file time is trusted, every changed-looking file is hashed.
    const takenAtMs = await lstat(lockPath).then((stats) => stats.ctimeMs, () => Number.NEGATIVE_INFINITY);
    return { ...attempt, takenAtMs };
  }
  if (Number.isNaN(attempt.pid)) throw new UserError("could not take the build lock", { where: lockPath, fix: "remove the lock file if no build is running" });
  throw new UserError(`another build is running (pid ${attempt.pid})`, {
    where: distDir,
    fix: `wait for it to finish, or stop process ${attempt.pid}; only one build may write ${distDir} at a time`,
  });
}

/**
 * The names in a directory, none when it does not exist. Synchronously: dist/runs/ holds an entry per run,
 * and listing 1,000 names costs less than the thread pool's round trip (which compression keeps busy).
 */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Removes what killed builds left behind. Call with the lock held. Returns how many were removed. */
export async function sweepTemporaries(distDir: string): Promise<number> {
  let removed = 0;
  for (const dir of [distDir, ...[RELEASES_DIR, RUNS_DIR, STATE_DIR, INDEX_CHUNKS_DIR, VIEWER_DIR].map((shared) => path.join(distDir, shared))]) {
    const names = namesIn(dir);
    for (const name of names) {
      if (name.startsWith(TMP_PREFIX)) {
        await rm(path.join(dir, name), { recursive: true, force: true });
        removed++;
      }
    }
  }
  return removed;
}

export interface LoadedRelease {
  id: string;
  index: ReleaseIndex;
  state: BuildState | undefined;
  /** The names of the state chunks it uses (in dist/state/). */
  stateChunks: ReadonlySet<string>;
}

/** The id of the release `dist/current` points at, without reading it. */
export async function currentReleaseId(distDir: string): Promise<string | undefined> {
  return readlink(path.join(distDir, CURRENT_LINK)).then((target) => path.basename(target), () => undefined);
}

/** Run directories served by a release, and valid builds it keeps for later (duplicates, conflict losers, last good versions). */
export function runDirsUsed(runs: ReleaseIndex["runs"], state: BuildState): string[] {
  const dirs = new Set(Object.values(runs).map((run) => run.dir));
  for (const run of Object.values(state.runs)) {
    if (run.current) dirs.add(run.current.dir);
    if (run.lastGood) dirs.add(run.lastGood.dir);
  }
  return [...dirs];
}

/** The release `dist/current` points at, or undefined when there is none (or it cannot be read). */
export async function loadCurrentRelease(distDir: string): Promise<LoadedRelease | undefined> {
  let target: string;
  try {
    target = await readlink(path.join(distDir, CURRENT_LINK));
  } catch {
    return undefined;
  }
  const releaseDir = path.resolve(distDir, target);
  try {
    const index = await readReleaseIndex(distDir, releaseDir, indexChunksAsWritten(distDir));
    const loaded = await readState(distDir, releaseDir);
    return { id: path.basename(releaseDir), index, state: loaded?.state, stateChunks: new Set(loaded?.chunks ?? []) };
  } catch {
    return undefined;
  }
}

/** A release's state.json and its chunks, or undefined when they cannot be read as this version wrote them. */
async function readState(distDir: string, releaseDir: string): Promise<{ state: BuildState; chunks: string[] } | undefined> {
  const head = await readFile(path.join(releaseDir, STATE_FILE), "utf8").catch(() => undefined);
  if (head === undefined) return undefined;
  // Synchronously, as the scan of runs/ (scanRuns.ts): 64 small files cost less than 64 round trips through the thread pool.
  return decodeStoredState(head, (name) => {
    try {
      return readFileSync(path.join(distDir, STATE_DIR, name), "utf8");
    } catch {
      return undefined;
    }
  });
}

/**
 * Writes the chunks (of a state, in dist/state/, or of a run list, in dist/index/) that `dist/<shared>/`
 * does not hold yet (`known`: those of the release before), each whole under a temporary name first.
 * Returns the paths (from dist) of every chunk given, for dirs.json.
 */
export async function writeSharedChunks(distDir: string, shared: typeof STATE_DIR | typeof INDEX_CHUNKS_DIR, chunks: ReadonlyArray<{ name: string; text: string }>, known: ReadonlySet<string>): Promise<string[]> {
  const dir = path.join(distDir, shared);
  await mkdir(dir, { recursive: true });
  await Promise.all(
    chunks.map(async ({ name, text }) => {
      if (known.has(name)) return;
      const temporary = path.join(dir, tmpName());
      await writeFile(temporary, text);
      await rename(temporary, path.join(dir, name)); // an existing chunk of that name holds the same text
    }),
  );
  return chunks.map(({ name }) => `${shared}/${name}`);
}

/**
 * A fresh temporary directory under `dist/<parent>`, the function that renames it into place, and `discard`,
 * which removes it when what was written there failed (a full disk), so a watching process gives the space
 * back at once rather than at its next start.
 */
export async function createStagingDir(distDir: string, parent: string): Promise<StagingDir> {
  const parentDir = path.join(distDir, parent);
  await mkdir(parentDir, { recursive: true });
  const dir = path.join(parentDir, tmpName());
  await mkdir(dir);
  return {
    dir,
    discard: () => rm(dir, { recursive: true, force: true }).catch(() => {}),
    async commit(name: string) {
      const target = path.join(parentDir, name);
      try {
        await rename(dir, target);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Same name means same inputs, hence same bytes: the existing directory is as good.
        if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface StagingDir {
  dir: string;
  commit(name: string): Promise<void>;
  discard(): Promise<void>;
}

/** Runs `work` on a fresh staging directory under `parent`, which `work` commits under its name (StagingDir.commit); if `work` throws, the directory is removed. */
export async function writeStaged<T>(distDir: string, parent: string, work: (staged: StagingDir) => Promise<T>): Promise<T> {
  const staged = await createStagingDir(distDir, parent);
  try {
    return await work(staged);
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

/** Writes the index (its JSON text) last into the staged release, renames it into place and swaps `current` to it. */
export async function switchToRelease(distDir: string, staged: { dir: string; commit(name: string): Promise<void> }, id: string, indexText: string): Promise<void> {
  const indexPath = path.join(staged.dir, INDEX_FILE);
  const handle = await open(indexPath, "w");
  await handle.writeFile(indexText);
  await handle.sync();
  await handle.close();
  await staged.commit(id);
  const link = path.join(distDir, tmpName());
  await symlink(path.posix.join(RELEASES_DIR, id), link);
  await rename(link, path.join(distDir, CURRENT_LINK));
}

/**
 * Deletes releases that are neither among the newest KEEP_RELEASES nor younger than
 * KEEP_RELEASES_YOUNGER_THAN_MS, and the run, state, index and viewer directories no kept release uses.
 * Call with the lock held.
 *
 * `published` (the release just published and the directories it uses) lets a long-running watcher
 * collect from what changed since its last collection: this process counts, per directory, the kept
 * releases that use it, so a publish adds the new release's directories and retires those of the releases
 * it deletes, without listing dist/runs (1,000 names) or joining every kept release's list again. Without
 * it, or when the count is not known to be whole (first collection, another process built, a build failed
 * or published nothing after writing run directories), everything is listed and counted afresh.
 */
export async function collectGarbage(distDir: string, nowMs: number, published?: { id: string; dirs: readonly string[] }): Promise<{ releases: number; runs: number }> {
  const releasesDir = path.join(distDir, RELEASES_DIR);
  const releaseIds = namesIn(releasesDir).filter((name) => !name.startsWith(TMP_PREFIX)).sort();
  // A release id starts with its build time (YYYYMMDDTHHMMSSZ), on the same clock as `nowMs`.
  const young = releaseIds.filter((id) => nowMs - (parseInstant(id.slice(0, 16)) ?? 0) < KEEP_RELEASES_YOUNGER_THAN_MS);
  const kept = [...new Set([...young, ...releaseIds.slice(-KEEP_RELEASES)])].sort().slice(-MAX_KEPT_RELEASES);
  const current = await readlink(path.join(distDir, CURRENT_LINK)).then((t) => path.basename(t), () => undefined);
  if (current && !kept.includes(current)) kept.push(current);
  const keptSet = new Set(kept);
  const deleted = releaseIds.filter((id) => !keptSet.has(id));

  // The counts hold when they cover exactly the releases there are, apart from the one just published.
  const counts = published ? dirCounts.get(path.resolve(distDir)) : undefined;
  const countsHold =
    counts !== undefined &&
    published !== undefined &&
    keptSet.has(published.id) &&
    releaseIds.every((id) => id === published.id || counts.releases.has(id)) &&
    [...counts.releases.keys()].every((id) => releaseIds.includes(id));
  if (countsHold) {
    const retired: string[] = [];
    counts.add(published.id, published.dirs);
    for (const id of deleted) {
      await rm(path.join(releasesDir, id), { recursive: true, force: true });
      retired.push(...counts.remove(id));
      dirsOfReleaseRead.delete(path.join(releasesDir, id));
    }
    let runs = 0;
    for (const dir of retired) {
      await rm(path.join(distDir, dir), { recursive: true, force: true });
      if (dir.startsWith(`${RUNS_DIR}/`)) runs++;
    }
    return { releases: deleted.length, runs };
  }

  dirCounts.delete(path.resolve(distDir));
  for (const id of deleted) await rm(path.join(releasesDir, id), { recursive: true, force: true });
  const fresh = new DirCounts();
  for (const id of kept) {
    const dirs = id === published?.id ? published.dirs : await dirsOfRelease(path.join(releasesDir, id));
    if (!dirs) return { releases: deleted.length, runs: 0 }; // a kept release without its list: delete no run data it might use
    fresh.add(id, dirs);
  }
  for (const release of dirsOfReleaseRead.keys()) if (!keptSet.has(path.basename(release))) dirsOfReleaseRead.delete(release);
  let runs = 0;
  for (const shared of [RUNS_DIR, STATE_DIR, INDEX_CHUNKS_DIR, VIEWER_DIR]) {
    for (const name of namesIn(path.join(distDir, shared))) {
      if (!name.startsWith(TMP_PREFIX) && !fresh.uses(`${shared}/${name}`)) {
        await rm(path.join(distDir, shared, name), { recursive: true, force: true });
        if (shared === RUNS_DIR) runs++;
      }
    }
  }
  dirCounts.set(path.resolve(distDir), fresh);
  if (dirCounts.size > MAX_COUNTED_DISTS) dirCounts.delete(dirCounts.keys().next().value!);
  return { releases: deleted.length, runs };
}

/** Per shared directory (`runs/<dir>`, `state/<chunk>`, `viewer/<dir>`), how many of the counted releases use it. */
class DirCounts {
  readonly releases = new Map<string, readonly string[]>();
  readonly #counts = new Map<string, number>();

  add(id: string, dirs: readonly string[]): void {
    if (this.releases.has(id)) return;
    this.releases.set(id, dirs);
    for (const dir of dirs) this.#counts.set(dir, (this.#counts.get(dir) ?? 0) + 1);
  }

  /** Stops counting a release; returns the directories no counted release uses any more. */
  remove(id: string): string[] {
    const dirs = this.releases.get(id);
    if (!dirs) return [];
    this.releases.delete(id);
    const unused: string[] = [];
    for (const dir of dirs) {
      const count = (this.#counts.get(dir) ?? 1) - 1;
      if (count > 0) this.#counts.set(dir, count);
      else if (this.#counts.delete(dir)) unused.push(dir);
    }
    return unused;
  }

  uses(dir: string): boolean {
    return this.#counts.has(dir);
  }
}

/** Per dist directory, the counts of its last collection while they are known to be whole (see collectGarbage). */
const dirCounts = new Map<string, DirCounts>();
/** A process builds one dist/ (tests and benchmarks a few): the counts of others are dropped, oldest first. */
const MAX_COUNTED_DISTS = 4;

/**
 * The next collection of `distDir` lists it again: a build may have left directories no release uses (it
 * failed, was cancelled, or published nothing after writing a run directory), which only a listing finds.
 */
export function recountSharedDirs(distDir: string): void {
  dirCounts.delete(path.resolve(distDir));
}

/** A release's dirs.json as read before: releases are immutable, so a long-running watcher reads each once. */
const dirsOfReleaseRead = new Map<string, readonly string[]>();

async function dirsOfRelease(releaseDir: string): Promise<readonly string[] | undefined> {
  let dirs = dirsOfReleaseRead.get(releaseDir);
  if (!dirs) {
    try {
      dirs = JSON.parse(await readFile(path.join(releaseDir, DIRS_FILE), "utf8")) as string[];
    } catch {
      return undefined;
    }
    dirsOfReleaseRead.set(releaseDir, dirs);
  }
  return dirs;
}

/** Writes a small file in a staging directory (creating sub-directories). */
export async function writeStagedFile(dir: string, file: string, body: Buffer | string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await writeFile(path.join(dir, file), body);
}

export interface DistCleanup {
  releases: number;
  runs: number;
  temporaries: number;
}

/**
 * What an operator's cleanup job does: the garbage collection that otherwise follows a publish (so old
 * releases go even while nothing is published), and the temporaries of killed builds. Takes the build lock.
 */
export async function cleanDist(distDir: string, nowMs: number): Promise<DistCleanup> {
  const { release } = await acquireBuildLock(distDir);
  try {
    const temporaries = await sweepTemporaries(distDir);
    return { ...(await collectGarbage(distDir, nowMs)), temporaries };
  } finally {
    await release();
  }
}
