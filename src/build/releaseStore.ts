/**
 * The dist directory as a store of immutable releases, switched atomically:
 *
 *   dist/current             symlink -> releases/<id>   (swapped with rename: readers see old or new, whole)
 *   dist/releases/<id>/      index.json (written last), state.json, reftimes.json, changelog.rss, report.json ...
 *   dist/runs/<reftime>-<h>/ a run's artefacts, immutable, named by its input hash and shared by releases
 *
 * Everything is written under a `.tmp-*` name first and renamed into place, so SIGKILL at any moment
 * leaves the previous release whole; the next build sweeps the temporaries.
 */
import { randomBytes } from "node:crypto";
import { link, open, mkdir, readFile, readdir, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { CURRENT_LINK, INDEX_FILE, ReleaseIndex } from "../contract/releaseIndex.ts";
import { UserError } from "../errors.ts";
import { parseInstant } from "../time/instant.ts";
import { decodeState, type BuildState } from "./buildState.ts";
import { isProcessAlive } from "../os/processes.ts";

export const RELEASES_DIR = "releases";
export const RUNS_DIR = "runs";
/** The viewer's files, one directory per content of its templates (src/build/viewer.ts). */
export const VIEWER_DIR = "viewer";
export const STATE_FILE = "state.json";
/** The run directories a release needs (served, or valid and kept for later) and its viewer directory: what garbage collection reads. */
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
 * Takes the build lock (one build at a time across processes). Returns the function that releases it.
 * The lock file appears whole (written aside, then hard-linked into place), so no reader ever sees it
 * empty; a lock left by a dead process is moved aside atomically, so two builds cannot both take it over.
 */
export async function acquireBuildLock(distDir: string): Promise<() => Promise<void>> {
  await mkdir(distDir, { recursive: true });
  const lockPath = path.join(distDir, LOCK_FILE);
  const mine = `${process.pid} ${randomBytes(6).toString("hex")}\n`;
  const aside = path.join(distDir, tmpName());
  await writeFile(aside, mine);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(aside, lockPath);
        return async () => {
          // Only our own lock is removed, never one another build took after ours was judged stale.
          if ((await readFile(lockPath, "utf8").catch(() => "")) === mine) await rm(lockPath, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const text = await readFile(lockPath, "utf8").catch(() => undefined);
      if (text === undefined) continue; // released in between: try again
      const holder = Number.parseInt(text, 10);
      if (Number.isInteger(holder) && holder !== process.pid && isProcessAlive(holder)) {
        throw new UserError(`another build is running (pid ${holder})`, {
          where: distDir,
          fix: `wait for it to finish, or stop process ${holder}; only one build may write ${distDir} at a time`,
        });
      }
      // Left by a build that was killed: move it aside, and put it back if it was not the one we judged.
      const stale = path.join(distDir, tmpName());
      try {
        await rename(lockPath, stale);
      } catch {
        continue; // another build moved it first
      }
      if ((await readFile(stale, "utf8").catch(() => "")) !== text) await rename(stale, lockPath).catch(() => {});
      else await rm(stale, { force: true });
    }
    throw new UserError("could not take the build lock", { where: lockPath, fix: "remove the lock file if no build is running" });
  } finally {
    await rm(aside, { force: true });
  }
}

/** Removes what killed builds left behind. Call with the lock held. Returns how many were removed. */
export async function sweepTemporaries(distDir: string): Promise<number> {
  let removed = 0;
  for (const dir of [distDir, path.join(distDir, RELEASES_DIR), path.join(distDir, RUNS_DIR), path.join(distDir, VIEWER_DIR)]) {
    const names = await readdir(dir).catch(() => [] as string[]);
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
}

/** The id of the release `dist/current` points at, without reading it. */
export async function currentReleaseId(distDir: string): Promise<string | undefined> {
  return readlink(path.join(distDir, CURRENT_LINK)).then((target) => path.basename(target), () => undefined);
}

/** Run directories served by a release, and valid builds it keeps for later (duplicates, conflict losers, last good versions). */
export function runDirsUsed(runs: ReleaseIndex["runs"], state: BuildState): string[] {
  const dirs = new Set(Object.values(runs).map((run) => run.dir));
  for (const run of Object.values(state.runs)) for (const build of [run.current, run.lastGood]) if (build) dirs.add(build.dir);
  return [...dirs].sort();
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
    const index = ReleaseIndex.parse(JSON.parse(await readFile(path.join(releaseDir, INDEX_FILE), "utf8")));
    const stateText = await readFile(path.join(releaseDir, STATE_FILE), "utf8").catch(() => undefined);
    return { id: path.basename(releaseDir), index, state: stateText === undefined ? undefined : decodeState(stateText) };
  } catch {
    return undefined;
  }
}

/** A fresh temporary directory under `dist/<parent>`, and the function that renames it into place. */
export async function createStagingDir(distDir: string, parent: string): Promise<{ dir: string; commit(name: string): Promise<void> }> {
  const parentDir = path.join(distDir, parent);
  await mkdir(parentDir, { recursive: true });
  const dir = path.join(parentDir, tmpName());
  await mkdir(dir);
  return {
    dir,
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
 * KEEP_RELEASES_YOUNGER_THAN_MS, and the run and viewer directories no kept release uses.
 * Reads only the kept releases' lists of run directories. Call with the lock held.
 */
export async function collectGarbage(distDir: string, nowMs: number): Promise<{ releases: number; runs: number }> {
  const releasesDir = path.join(distDir, RELEASES_DIR);
  const releaseIds = (await readdir(releasesDir).catch(() => [] as string[])).filter((name) => !name.startsWith(TMP_PREFIX)).sort();
  // A release id starts with its build time (YYYYMMDDTHHMMSSZ), on the same clock as `nowMs`.
  const young = releaseIds.filter((id) => nowMs - (parseInstant(id.slice(0, 16)) ?? 0) < KEEP_RELEASES_YOUNGER_THAN_MS);
  const kept = [...new Set([...young, ...releaseIds.slice(-KEEP_RELEASES)])].sort().slice(-MAX_KEPT_RELEASES);
  const current = await readlink(path.join(distDir, CURRENT_LINK)).then((t) => path.basename(t), () => undefined);
  if (current && !kept.includes(current)) kept.push(current);
  let releases = 0;
  for (const id of releaseIds) {
    if (!kept.includes(id)) {
      await rm(path.join(releasesDir, id), { recursive: true, force: true });
      releases++;
    }
  }
  const used = new Set<string>();
  for (const id of kept) {
    const dirs = await dirsOfRelease(path.join(releasesDir, id));
    if (!dirs) return { releases, runs: 0 }; // a kept release without its list: delete no run data it might use
    for (const dir of dirs) used.add(dir);
  }
  for (const release of dirsOfReleaseRead.keys()) if (!kept.includes(path.basename(release))) dirsOfReleaseRead.delete(release);
  let runs = 0;
  for (const parent of [RUNS_DIR, VIEWER_DIR]) {
    for (const name of await readdir(path.join(distDir, parent)).catch(() => [] as string[])) {
      if (!name.startsWith(TMP_PREFIX) && !used.has(`${parent}/${name}`)) {
        await rm(path.join(distDir, parent, name), { recursive: true, force: true });
        if (parent === RUNS_DIR) runs++;
      }
    }
  }
  return { releases, runs };
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
