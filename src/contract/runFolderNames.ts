/** Names in runs/ that the pipeline never reads: shared by the build, the watcher and uploads. */

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

/** Whether a name is that of NetCDF model output (`.nc`, `.nc4`); the reader also takes such output by its bytes, whatever its name. */
export function isModelOutputName(name: string): boolean {
  return /\.nc4?$/i.test(name);
}

/**
 * A file still arriving: `name.part` (docs/runs.md), or rsync's temporary `.name.XXXXXX`, which it renames over
 * `name` when that file is complete: while one is in a folder, the folder is being delivered.
 */
export function isArrivingName(name: string): boolean {
  return name.endsWith(".part") || /^\..+\.[A-Za-z0-9]{6}$/.test(name);
}
