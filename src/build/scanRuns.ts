/**
 * Finds the run folders under runs/ and fingerprints their files.
 * A file's sha256 is recomputed only when its size, mtime, ctime or inode changed since the last build,
 * so a build with 1,000 unchanged runs costs stats, not reads; and a folder whose own times and inode are
 * as the last build saw them is not listed again (its entries are those it had), so it costs one stat more
 * than its files. A time is trusted only when it lies before the scan began (see ScanOptions.settledBefore).
 */
import { createHash } from "node:crypto";
import { createReadStream, lstatSync, readdirSync } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { isArrivingName, isModelOutputName, isRunFolderName, isTemporaryName } from "../contract/runFolderNames.ts";

export interface FileFingerprint {
  size: number;
  mtimeMs: number;
  /**
   * Absent when the fingerprint is not to be trusted by the next build, which then hashes the file again:
   * the file changed too close to the scan (a change within the same tick of the file system's clock would
   * leave its times as they are), or an older version made the fingerprint.
   */
  ctimeMs?: number;
  ino: number;
  sha256: string;
}

/**
 * A run folder's own times and inode when it was last listed, kept only when they lay before that scan
 * began and the folder held no entry still arriving or refused: while they are the same, the folder holds
 * the same names (a name added, removed or renamed changes the folder's mtime and ctime), so it is not
 * listed again and its files are statted by name.
 */
export interface FolderStat {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export interface ScannedFile {
  name: string;
  absolutePath: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string;
}

export interface ScannedRun {
  /** Folder name under runs/ (the run's identity in reports). */
  folder: string;
  absolutePath: string;
  files: ScannedFile[];
  /** Files still arriving (`*.part`, rsync's `.name.XXXXXX`): the run waits until they are renamed. */
  partial: string[];
  /** Entries that are not plain files (directories, symlinks), or cannot be read or named: never read. `fix` when not the usual one. */
  refused: Array<{ name: string; why: string; fix?: string }>;
}

/** Fingerprints of one folder's files by name, as the last build saw them. */
export type FolderFingerprints = Record<string, FileFingerprint>;

/** An entry of runs/: a run folder, or a symbolic link to report. */
export interface RunFolder {
  name: string;
  isLink: boolean;
}

/**
 * Run folder names under runs/, sorted; a symbolic link in runs/ is listed too, to be reported. dist/ is never
 * inside runs/ (src/cli/settings.ts refuses it), so every folder of a run's name is one.
 */
export function listRunFolders(runsDir: string): RunFolder[] {
  // Synchronously: one call, where the thread pool's round trip costs more than listing 1,000 names.
  const entries = readdirSync(runsDir, { withFileTypes: true });
  return entries
    .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && isRunFolderName(entry.name))
    .map((entry) => ({ name: entry.name, isLink: entry.isSymbolicLink() }))
    .sort(byName);
}

/**
 * The run folders after the changes a watcher saw: the folders known before, with each changed name
 * looked at again (added when it is now a run folder, dropped when it is gone). Same order and form as
 * listRunFolders; the known folders' `isLink` is not looked at (their files are not scanned).
 */
export function foldersAfterChanges(runsDir: string, known: readonly string[], changed: ReadonlySet<string>): RunFolder[] {
  const folders = known.filter((name) => !changed.has(name)).map((name) => ({ name, isLink: false }));
  for (const name of changed) {
    if (!isRunFolderName(name)) continue;
    let entry: ReturnType<typeof lstatSync> | undefined;
    try {
      entry = lstatSync(path.join(runsDir, name));
    } catch {
      continue; // removed
    }
    if (entry.isDirectory() || entry.isSymbolicLink()) folders.push({ name, isLink: entry.isSymbolicLink() });
  }
  return folders.sort(byName);
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Files hashed at once: only hashing a new or changed file waits on I/O. */
const HASH_CONCURRENCY = 32;

export interface ScanOptions {
  /** Each folder's stat when the last build listed it (BuildState.folders). */
  folderStats?: Readonly<Record<string, FolderStat>>;
  /**
   * A time on the file system's clock taken before the scan began (the build lock's ctime). A file or folder
   * whose mtime or ctime is not before it may still change within the same tick of that clock without its times
   * moving: its fingerprint is kept without ctimeMs, and its folder stat not at all, so the next build hashes
   * and lists it again. Absent: nothing is trusted (`ashcast check`, benchmarks).
   */
  settledBefore?: number;
  /**
   * Called once, before any file is hashed, when a new or changed file is named like model output: the build
   * starts its worker threads then, so that they have loaded their modules by the time the file is read.
   */
  beforeModelOutputRead?: () => void;
}

/** One folder scanned, and what the scan had to do there. */
export interface ScannedFolder {
  run: ScannedRun;
  fingerprints: FolderFingerprints;
  /** To keep for the next build (see FolderStat); absent when the folder must be listed again. */
  folderStat?: FolderStat;
  /** The folder was listed (readdir); false when its stat was as last listed. */
  listed: boolean;
  /** Files whose content was read and hashed. */
  hashed: number;
}

/**
 * Scans the given run folders, in their order. `cache` holds each folder's fingerprints of the last build;
 * the result carries the new ones. Lists and stats synchronously: through the thread pool each call costs a
 * round trip several times the call itself (measured: 1,000 folders of 2 files in 35 ms synchronously, 92 ms
 * as promises 32 at a time). Builds never share a thread with request handling (`start` runs them in a
 * worker), so the brief block is harmless. Only new or changed files are then read, a few at a time.
 */
export async function scanRuns(runsDir: string, folders: ReadonlyArray<{ name: string; isLink: boolean }>, cache: Readonly<Record<string, FolderFingerprints>>, options: ScanOptions = {}): Promise<ScannedFolder[]> {
  const toHash: FileToHash[] = [];
  const results = folders.map((folder): ScannedFolder => {
    if (folder.isLink) return { run: linkedFolder(runsDir, folder.name), fingerprints: {}, listed: false, hashed: 0 };
    return statFolder(runsDir, folder.name, cache[folder.name] ?? {}, options.settledBefore, options.folderStats?.[folder.name], toHash);
  });
  if (options.beforeModelOutputRead && toHash.some((file) => isModelOutputName(file.file.name))) options.beforeModelOutputRead();
  await hashFiles(toHash);
  return results;
}

/**
 * One folder scanned (`ashcast check` of a single run folder). `known.folderStat`: the folder's stat when the
 * last build listed it; equal now, the folder is not listed.
 */
export async function scanRun(runsDir: string, folder: string, cache: Readonly<FolderFingerprints>, known: { settledBefore?: number | undefined; folderStat?: FolderStat | undefined } = {}): Promise<ScannedFolder> {
  const toHash: FileToHash[] = [];
  const result = statFolder(runsDir, folder, cache, known.settledBefore, known.folderStat, toHash);
  await hashFiles(toHash);
  return result;
}

/** A run folder that is a symbolic link: reported rather than skipped, so whoever linked it learns it is not published. */
function linkedFolder(runsDir: string, folder: string): ScannedRun {
  const why = "is a symbolic link; links are not followed, so nothing outside runs/ can be published (copy the folder instead)";
  return { folder, absolutePath: path.join(runsDir, folder), files: [], partial: [], refused: [{ name: ".", why }] };
}

/** Whether times read now can be trusted by the next build (see ScanOptions.settledBefore). */
function settled(stats: { mtimeMs: number; ctimeMs: number }, settledBefore: number | undefined): boolean {
  if (settledBefore === undefined) return false;
  // A time in whole seconds may come from a file system that keeps no finer ones (FAT: 2 s): its tick may
  // still be open although its start lies before the scan, so it is trusted only two seconds later.
  const margin = (time: number) => (time % 1000 === 0 ? 2000 : 0);
  return stats.mtimeMs + margin(stats.mtimeMs) < settledBefore && stats.ctimeMs + margin(stats.ctimeMs) < settledBefore;
}

/** A new or changed file found by a scan: its fingerprint and entry get their sha256 once it is read. */
interface FileToHash {
  run: ScannedRun;
  /** The folder's fingerprints, which lose this file's when it cannot be read (it is hashed again next time). */
  fingerprints: FolderFingerprints;
  path: string;
  fingerprint: FileFingerprint;
  file: ScannedFile;
}

async function hashFiles(files: readonly FileToHash[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const file = files[i]!;
      try {
        file.fingerprint.sha256 = file.file.sha256 = await sha256File(file.path, file.file.size);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "EACCES" && code !== "EPERM") throw error;
        // One unreadable file makes its own run invalid, naming it; the other runs are built (it stopped them all).
        const { run } = file;
        run.files = run.files.filter((scanned) => scanned !== file.file);
        delete file.fingerprints[file.file.name];
        run.refused.push({ name: file.file.name, why: "cannot be read (permission denied)", fix: "give the user ashcast runs as read access to it (chmod a+r), or remove it" });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, files.length) }, worker));
}

/**
 * A folder's files with their fingerprints, those of new or changed files to hash (added to `toHash`);
 * `fingerprints` is `cache` itself when every file is as cached.
 */
function statFolder(runsDir: string, folder: string, cache: Readonly<FolderFingerprints>, settledBefore: number | undefined, lastStat: FolderStat | undefined, toHash: FileToHash[]): ScannedFolder {
  const absolutePath = `${runsDir}${path.sep}${folder}`;
  const refusedFolder = (why: string, fix: string): ScannedFolder => ({ run: { folder, absolutePath, files: [], partial: [], refused: [{ name: ".", why, fix }] }, fingerprints: {}, listed: true, hashed: 0 });
  if (folder.includes("\uFFFD")) return refusedFolder("the folder's name is not valid UTF-8, so it cannot be read by that name", "rename the folder with UTF-8 characters only (e.g. convmv -f latin1 -t utf8 --notest)");
  const folderStats = lstatSync(absolutePath, { throwIfNoEntry: false });
  // The same folder with the same times: the same names, which are those of the last fingerprints.
  const sameNames = lastStat !== undefined && folderStats !== undefined && folderStats.mtimeMs === lastStat.mtimeMs && folderStats.ctimeMs === lastStat.ctimeMs && folderStats.ino === lastStat.ino;
  const byName = sameNames ? statFiles(absolutePath, folder, Object.keys(cache), cache, settledBefore, true) : undefined;
  // Listed (not by name), every name is taken as found: never undefined.
  let names: string[];
  try {
    names = byName ? [] : readdirSync(absolutePath).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Removed or renamed while the build looked: waits, as a file that vanished does; the next build sees where it went.
    if (code === "ENOENT" || code === "ENOTDIR") return { run: { folder, absolutePath, files: [], partial: ["(the folder, moved while it was read)"], refused: [] }, fingerprints: {}, listed: true, hashed: 0 };
    if (code === "EACCES" || code === "EPERM") return refusedFolder("the folder cannot be listed (permission denied)", "give the user ashcast runs as read and execute access to the folder (chmod a+rx)");
    throw error;
  }
  const result = byName ?? statFiles(absolutePath, folder, names, cache, settledBefore, false)!;
  toHash.push(...result.toHash);
  const scanned: ScannedFolder = { run: result.run, fingerprints: result.fingerprints, listed: !byName, hashed: result.toHash.length };
  if (folderStats && !result.run.partial.length && !result.run.refused.length && settled(folderStats, settledBefore)) {
    scanned.folderStat = sameNames ? lastStat : { mtimeMs: folderStats.mtimeMs, ctimeMs: folderStats.ctimeMs, ino: folderStats.ino };
  }
  return scanned;
}

/**
 * Stats the files `names` of a folder. `byName`: the names are the last build's, taken on the folder's word;
 * a name that is no longer a plain file answers undefined (list the folder).
 */
function statFiles(absolutePath: string, folder: string, names: readonly string[], cache: Readonly<FolderFingerprints>, settledBefore: number | undefined, byName: boolean): { run: ScannedRun; fingerprints: FolderFingerprints; toHash: FileToHash[] } | undefined {
  const run: ScannedRun = { folder, absolutePath, files: [], partial: [], refused: [] };
  const fingerprints: FolderFingerprints = {};
  const toHash: FileToHash[] = [];
  for (const name of names) {
    if (isArrivingName(name)) {
      run.partial.push(name);
      continue;
    }
    if (isTemporaryName(name)) continue;
    // A name that is not UTF-8 (a Latin-1 zip from Windows) was decoded lossily: that path does not exist.
    if (name.includes("\uFFFD")) {
      if (byName) return undefined;
      run.refused.push({ name, why: "has a name that is not valid UTF-8, so it cannot be read by that name", fix: "rename it with UTF-8 characters only (e.g. convmv -f latin1 -t utf8 --notest), or remove it" });
      continue;
    }
    const filePath = `${absolutePath}${path.sep}${name}`;
    const stats = lstatSync(filePath, { throwIfNoEntry: false });
    if (!stats) {
      if (byName) return undefined;
      continue; // removed while we looked
    }
    if (stats.isSymbolicLink()) {
      if (byName) return undefined;
      run.refused.push({ name, why: "is a symbolic link; links are not followed, so nothing outside runs/ can be published" });
      continue;
    }
    if (!stats.isFile()) {
      if (byName) return undefined;
      run.refused.push({ name, why: "is not a plain file (runs are flat folders)" });
      continue;
    }
    const last = cache[name];
    const file: ScannedFile = { name, absolutePath: filePath, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino, sha256: "" };
    if (last && last.ctimeMs === stats.ctimeMs && last.size === stats.size && last.mtimeMs === stats.mtimeMs && last.ino === stats.ino) {
      fingerprints[name] = last;
      file.sha256 = last.sha256;
    } else {
      const fingerprint: FileFingerprint = { size: stats.size, mtimeMs: stats.mtimeMs, ...(settled(stats, settledBefore) ? { ctimeMs: stats.ctimeMs } : {}), ino: stats.ino, sha256: "" };
      fingerprints[name] = fingerprint;
      toHash.push({ run, fingerprints, path: filePath, fingerprint, file });
    }
    run.files.push(file);
  }
  // Nothing changed (every file's fingerprint is the cached one, and they are as many): the last fingerprints
  // themselves, which tells the build its inputs hash needs no recomputing.
  const unchanged = !toHash.length && !run.partial.length && !run.refused.length && run.files.length === Object.keys(cache).length;
  return { run, fingerprints: unchanged ? cache : fingerprints, toHash };
}

/**
 * Read in chunks of up to 1 MiB (no larger than the file, which each read allocates in full): a 30 MB model
 * output hashed in ~50 ms against ~120 ms with the stream's 64 KiB, most of which was a trip through the thread pool per chunk.
 */
const HASH_CHUNK_BYTES = { least: 64 * 1024, most: 1024 * 1024 };

async function sha256File(filePath: string, size: number): Promise<string> {
  const hash = createHash("sha256");
  const highWaterMark = Math.min(HASH_CHUNK_BYTES.most, Math.max(HASH_CHUNK_BYTES.least, size));
  for await (const chunk of createReadStream(filePath, { highWaterMark })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The hash of a run's inputs: file names and contents, refused entries, and whatever else decides its output. */
export function inputsHash(run: ScannedRun, pipelineKey: string): string {
  const hash = createHash("sha256").update(pipelineKey);
  for (const file of run.files) hash.update(`\n${file.name}\0${file.sha256}`);
  // A link or folder dropped into a run changes its outcome (an error), so it changes its hash.
  for (const refused of run.refused) hash.update(`\nrefused\0${refused.name}`);
  return hash.digest("hex");
}

/**
 * Whether the folder still holds exactly the files scanned (same names, sizes, mtimes, ctimes, inodes).
 * Checked after a run was read: a file replaced meanwhile must not be published under the old hash.
 */
export async function unchangedSinceScan(run: ScannedRun): Promise<boolean> {
  const names = (await readdir(run.absolutePath).catch(() => [] as string[])).filter((name) => !isTemporaryName(name) || isArrivingName(name)).sort();
  const expected = [...run.files.map((f) => f.name), ...run.refused.map((r) => r.name), ...run.partial].sort();
  if (names.join("\0") !== expected.join("\0")) return false;
  for (const file of run.files) {
    const stats = await lstat(file.absolutePath).catch(() => undefined);
    if (!stats || stats.size !== file.size || stats.mtimeMs !== file.mtimeMs || stats.ino !== file.ino || stats.ctimeMs !== file.ctimeMs) return false;
  }
  return true;
}
