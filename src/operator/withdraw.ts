/**
 * Withdrawing a run: every folder of runs/ that holds a build of the reftime moves to the archive
 * directory (outside runs/), so the next build withdraws it and the changelog says so. Nothing is
 * deleted: moving a folder back publishes it again.
 */
import { mkdir, readdir, readFile, rename, stat } from "node:fs/promises";
import path from "node:path";
import { decodeManifest } from "../build/readers/manifest.ts";
import { isRunFolderName } from "../contract/runFolderNames.ts";
import { compactInstant, normaliseInstant } from "../time/instant.ts";

export interface WithdrawResult {
  reftime: string;
  /** Folder name to where it now is. */
  moved: Array<{ folder: string; to: string }>;
}

export async function withdrawFolders(options: { runsDir: string; archiveDir: string; reftime: string; folders: readonly string[]; now: Date }): Promise<WithdrawResult> {
  const { runsDir, archiveDir, reftime, folders, now } = options;
  await mkdir(archiveDir, { recursive: true });
  const stamp = compactInstant(now.toISOString().replace(/\.\d{3}Z$/, "Z"));
  const moved: WithdrawResult["moved"] = [];
  for (const folder of folders) {
    // Names come from the build report, never from the request: still, refuse anything that is not one plain name.
    if (folder !== path.basename(folder) || folder.startsWith(".")) throw new Error(`Internal error: "${folder}" is not a run folder name`);
    const from = path.join(runsDir, folder);
    if (!(await stat(from).catch(() => undefined))?.isDirectory()) continue; // already gone: the next build withdraws it
    const to = path.join(archiveDir, `${folder}.withdrawn-${stamp}`);
    await rename(from, to);
    moved.push({ folder, to });
  }
  return { reftime, moved };
}

/**
 * Folders of runs/ the last build has not seen (copied or uploaded since) that hold a run of `reftime`: a
 * withdrawal takes them too, or the next build would publish the run again after a 202. Their run.json is read
 * as the build reads it; one that names no reftime (the build then takes the model file's) is checked as the
 * build would (`reftimeOf`), when given.
 */
export async function foldersSinceTheBuild(runsDir: string, reported: ReadonlySet<string>, reftime: string, reftimeOf?: (dir: string) => Promise<string | undefined>): Promise<string[]> {
  const entries = await readdir(runsDir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !isRunFolderName(entry.name) || reported.has(entry.name)) continue;
    const dir = path.join(runsDir, entry.name);
    const bytes = await readFile(path.join(dir, "run.json")).catch(() => undefined);
    const text = bytes === undefined ? undefined : decodeManifest(bytes);
    let named: unknown;
    try {
      named = text === undefined ? undefined : (JSON.parse(text) as { reftime?: unknown }).reftime;
    } catch {
      continue; // not readable yet: its build will say so
    }
    const its = typeof named === "string" ? normaliseInstant(named) : await reftimeOf?.(dir);
    if (its === reftime) found.push(entry.name);
  }
  return found.sort();
}
