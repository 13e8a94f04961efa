/**
 * A one-off `ashcast build` starts its step workers before it loads its own code when a run folder holds
 * model output that arrived after the release being served (or nothing is served yet). A worker takes
 * ~0.7 s to load its modules when the machine's two cores are shared; started only once the scan found
 * model output, that load followed the main thread's own (~0.3 s) instead of overlapping it.
 *
 * Only a hint, and a cheap one (1,000 run folders: a few ms): a folder is looked into only when its own times
 * are newer than the release, as creating, renaming or deleting a file in it makes them. A file rewritten in
 * place, or copied with its old times, is not seen here; the scan still starts the workers whenever it finds
 * model output to read, and a wrong guess costs a worker's start-up.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { isModelOutputName } from "../contract/runFolderNames.ts";

/** Whether a run folder changed since the current release was switched to holds a model output file that did too. */
export function modelOutputSinceRelease(runsDir: string, distDir: string): boolean {
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
    return false;
  }
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    const folderPath = path.join(runsDir, folder.name);
    if (!changedSinceRelease(folderPath)) continue;
    let names: string[];
    try {
      names = readdirSync(folderPath);
    } catch {
      continue;
    }
    if (names.some((name) => isModelOutputName(name) && changedSinceRelease(path.join(folderPath, name)))) return true;
  }
  return false;
}

/**
 * Starts the step workers if modelOutputSinceRelease, and this thread's h5wasm, which opens the file before
 * any worker can read it; never fails (the build reports what is wrong with its inputs).
 */
export async function startWorkersEarly(runsDir: string, distDir: string): Promise<void> {
  try {
    if (!modelOutputSinceRelease(runsDir, distDir)) return;
    (await import("./stepPool.ts")).warmStepPool();
    await (await import("../model/netcdf4.ts")).h5wasmReady();
  } catch {
    // A hint only: the scan starts the workers when it finds model output to read.
  }
}
