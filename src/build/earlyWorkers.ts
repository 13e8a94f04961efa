/**
 * A one-off `ashcast build` starts its step workers before it loads its own code when a run folder holds
 * model output that arrived after the release being served (or nothing is served yet). A worker takes
 * ~0.7 s to load its modules and h5wasm when the machine's two cores are shared; started only once the
 * scan found model output, that load followed the main thread's own (~0.3 s) instead of overlapping it.
 *
 * Only a hint, read in the background: the scan still starts the workers whenever it finds model output to
 * read (a file copied with its old times, a new pipeline), and a wrong guess costs a worker's start-up.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { isModelOutputName } from "../contract/runFolderNames.ts";

/** Whether a run folder holds a model output file written or moved in after the current release was switched to. */
export async function modelOutputSinceRelease(runsDir: string, distDir: string): Promise<boolean> {
  const releasedMs = await lstat(path.join(distDir, "current")).then((link) => link.mtimeMs, () => Number.NEGATIVE_INFINITY);
  const folders = await readdir(runsDir, { withFileTypes: true }).catch(() => []);
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    const folderPath = path.join(runsDir, folder.name);
    for (const name of await readdir(folderPath).catch(() => [])) {
      if (!isModelOutputName(name)) continue;
      const file = await stat(path.join(folderPath, name)).catch(() => undefined);
      // A rename into the folder keeps the file's mtime but sets its ctime.
      if (file && Math.max(file.mtimeMs, file.ctimeMs) >= releasedMs) return true;
    }
  }
  return false;
}

/** Starts the step workers if modelOutputSinceRelease; never fails (the build reports what is wrong with its inputs). */
export async function startWorkersEarly(runsDir: string, distDir: string): Promise<void> {
  try {
    if (await modelOutputSinceRelease(runsDir, distDir)) (await import("./stepPool.ts")).warmStepPool();
  } catch {
    // A hint only: the scan starts the workers when it finds model output to read.
  }
}
