/**
 * A one-off `ashcast build` starts its step workers before it loads its own code when a run folder holds
 * model output that arrived after the release being served (or nothing is served yet), and has them open
 * those files (modelOutputDescriptions.ts). A worker takes ~0.2 s to start and load its modules, and opening
 * a NetCDF-4 file ~0.2 s more; started only once the scan found model output, all that followed the main
 * thread's own start (~0.3 s) instead of overlapping it.
 *
 * Only a hint, and a cheap one (1,000 run folders: a few ms): a folder is looked into only when its own times
 * are newer than the release, as creating, renaming or deleting a file in it makes them. A file rewritten in
 * place, or copied with its old times, is not seen here; the scan still starts the workers whenever it finds
 * model output to read, and a wrong guess costs a worker's start-up.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { isModelOutputName } from "../contract/runFolderNames.ts";
import { askForDescription } from "./modelOutputDescriptions.ts";
import { warmStepPool } from "./stepPool.ts";

/** The model output files of run folders changed since the current release was switched to that changed too. */
export function modelOutputSinceRelease(runsDir: string, distDir: string): Array<{ path: string; displayPath: string }> {
  const releasedMs = lstatSync(path.join(distDir, "current"), { throwIfNoEntry: false })?.mtimeMs ?? Number.NEGATIVE_INFINITY;
  const changedSinceRelease = (itemPath: string): boolean => {
    const item = statSync(itemPath, { throwIfNoEntry: false });
    // A rename into a folder keeps the file's mtime but sets its ctime.
    return item !== undefined && Math.max(item.mtimeMs, item.ctimeMs) >= releasedMs;
  };
  let folders;
  try {
    folders = readdirSync(runsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: Array<{ path: string; displayPath: string }> = [];
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    // As the scan names them (scanRuns.ts), so that the reader finds the description asked for here.
    const folderPath = `${runsDir}${path.sep}${folder.name}`;
    if (!changedSinceRelease(folderPath)) continue;
    let names: string[];
    try {
      names = readdirSync(folderPath);
    } catch {
      continue;
    }
    for (const name of names) {
      const filePath = `${folderPath}${path.sep}${name}`;
      if (isModelOutputName(name) && changedSinceRelease(filePath)) files.push({ path: filePath, displayPath: `${folder.name}/${name}` });
    }
  }
  return files;
}

/**
 * Starts the step workers if modelOutputSinceRelease found files, and asks them to open those files
 * (modelOutputDescriptions.ts), at most a few: this thread need not load h5wasm then. Never fails (the build
 * reports what is wrong with its inputs).
 */
export function startWorkersEarly(runsDir: string, distDir: string): void {
  try {
    const files = modelOutputSinceRelease(runsDir, distDir);
    if (files.length === 0) return;
    warmStepPool();
    for (const file of files.slice(0, MOST_FILES_DESCRIBED_EARLY)) void askForDescription(file.path, file.displayPath);
  } catch {
    // A hint only: the scan starts the workers when it finds model output to read.
  }
}

/** Files described before the build asks for them: a few runs arriving at once; a wrong guess costs one file's opening. */
const MOST_FILES_DESCRIBED_EARLY = 4;
