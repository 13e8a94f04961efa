/**
 * Withdrawing a run: every folder of runs/ that holds a build of the reftime moves to the archive
 * directory (outside runs/), so the next build withdraws it and the changelog says so. Nothing is
 * deleted: moving a folder back publishes it again.
 */
import { mkdir, rename, stat } from "node:fs/promises";
import path from "node:path";
import { compactInstant } from "../time/instant.ts";

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
