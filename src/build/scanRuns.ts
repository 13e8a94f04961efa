/**
 * Finds the run folders under runs/ and fingerprints their files.
 * A file's sha256 is recomputed only when its size, mtime or inode changed since the last build,
 * so a build with 1,000 unchanged runs costs stats, not reads.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

export interface FileFingerprint {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

export interface ScannedFile {
  name: string;
  absolutePath: string;
  size: number;
  sha256: string;
}

export interface ScannedRun {
  /** Folder name under runs/ (the run's identity in reports). */
  folder: string;
  absolutePath: string;
  files: ScannedFile[];
  /** Files still arriving (`*.part`): the run waits until they are renamed. */
  partial: string[];
  /** Entries that are not plain files (directories, symlinks): never read. */
  refused: Array<{ name: string; why: string }>;
}

/** Folder names that are not runs: hidden, private (`_resources`), or still being copied. */
export function isRunFolderName(name: string): boolean {
  return !name.startsWith(".") && !name.startsWith("_") && !isTemporaryName(name);
}

/** Names of files that are never inputs: hidden files, partial uploads, editor temporaries. */
export function isTemporaryName(name: string): boolean {
  return (
    name.startsWith(".") ||
    name.endsWith(".part") ||
    name.endsWith(".tmp") ||
    name.endsWith("~") ||
    name.endsWith(".swp") ||
    name.endsWith(".swx") ||
    (name.startsWith("#") && name.endsWith("#")) ||
    name.startsWith(".~lock.")
  );
}

/**
 * Lists run folders (sorted by name) and fingerprints their files.
 * `cache` maps `folder/name` to the fingerprint of the last build; `nextCache` receives the new ones.
 */
export async function scanRuns(
  runsDir: string,
  cache: ReadonlyMap<string, FileFingerprint>,
  nextCache: Map<string, FileFingerprint>,
): Promise<ScannedRun[]> {
  const entries = await readdir(runsDir, { withFileTypes: true });
  const candidates = entries.filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && isRunFolderName(entry.name));
  const runs: ScannedRun[] = [];
  for (const entry of candidates.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isSymbolicLink()) {
      // Reported rather than skipped: a forecaster who linked a run in must learn it is not published.
      const why = "is a symbolic link; links are not followed, so nothing outside runs/ can be published (copy the folder instead)";
      runs.push({ folder: entry.name, absolutePath: path.join(runsDir, entry.name), files: [], partial: [], refused: [{ name: ".", why }] });
      continue;
    }
    runs.push(await scanRun(runsDir, entry.name, cache, nextCache));
  }
  return runs;
}

export async function scanRun(
  runsDir: string,
  folder: string,
  cache: ReadonlyMap<string, FileFingerprint>,
  nextCache: Map<string, FileFingerprint>,
): Promise<ScannedRun> {
  const absolutePath = path.join(runsDir, folder);
  const run: ScannedRun = { folder, absolutePath, files: [], partial: [], refused: [] };
  const names = (await readdir(absolutePath)).sort();
  for (const name of names) {
    if (name.endsWith(".part")) {
      run.partial.push(name);
      continue;
    }
    if (isTemporaryName(name)) continue;
    const filePath = path.join(absolutePath, name);
    let stats;
    try {
      stats = await lstat(filePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // removed while we looked
      throw error;
    }
    if (stats.isSymbolicLink()) {
      run.refused.push({ name, why: "is a symbolic link; links are not followed, so nothing outside runs/ can be published" });
      continue;
    }
    if (!stats.isFile()) {
      run.refused.push({ name, why: "is not a plain file (runs are flat folders)" });
      continue;
    }
    const key = `${folder}/${name}`;
    const known = cache.get(key);
    const fingerprint =
      known && known.size === stats.size && known.mtimeMs === stats.mtimeMs && known.ino === stats.ino
        ? known
        : { size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino, sha256: await sha256File(filePath) };
    nextCache.set(key, fingerprint);
    run.files.push({ name, absolutePath: filePath, size: fingerprint.size, sha256: fingerprint.sha256 });
  }
  return run;
}

async function sha256File(filePath: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The hash of a run's inputs: file names and contents, plus whatever else decides its output. */
export function inputsHash(run: ScannedRun, pipelineKey: string): string {
  const hash = createHash("sha256").update(pipelineKey);
  for (const file of run.files) hash.update(`\n${file.name}\0${file.sha256}`);
  return hash.digest("hex");
}
