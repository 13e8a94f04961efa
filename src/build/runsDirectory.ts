/**
 * The runs directory a build or a watcher is given, checked before anything is read or published: it must
 * exist, and it must not be one run folder (a run's files and no run folder beside them). A build of a run
 * folder would find no run folders in it and publish a release without runs, withdrawing every published run.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { isRunFolderName } from "../contract/runFolderNames.ts";
import { UserError } from "../errors.ts";
import { loadCurrentRelease } from "./releaseStore.ts";
import { listRunFolders } from "./scanRuns.ts";

/** Files that only a run folder holds: its manifest, the eruption, model output and forecasters' drawings. */
export const RUN_FILE = /^(run\.json|volcano\.xml)$|\.(nc|nc4|kml|kmz)$/i;

export async function checkRunsDirectory(runsDir: string): Promise<void> {
  const runsStat = await stat(runsDir).catch(() => undefined);
  if (runsStat !== undefined && !runsStat.isDirectory()) {
    throw new UserError("the runs directory is a file, not a directory", { where: runsDir, fix: "point --runs (ASHCAST_RUNS) at the folder that holds the run folders" });
  }
  if (!runsStat) {
    throw new UserError("the runs directory does not exist", { where: runsDir, fix: "create it, or point --runs (ASHCAST_RUNS) at the folder that holds the run folders" });
  }
  const entries = await readdir(runsDir, { withFileTypes: true });
  // A stray file beside run folders is left alone (the runs keep publishing); run files and no run folder is the mistake.
  const runFiles = entries.filter((entry) => entry.isFile() && RUN_FILE.test(entry.name)).map((entry) => entry.name);
  if (runFiles.length > 0 && !entries.some((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && isRunFolderName(entry.name))) {
    throw new UserError(`this is a run folder (it holds ${runFiles.slice(0, 3).join(", ")}), not the folder of run folders; building it would withdraw every published run`, {
      where: runsDir,
      fix: `point --runs (ASHCAST_RUNS) at the folder that holds the run folders, e.g. ${path.dirname(runsDir)}; to check one run alone, run ashcast check ${runsDir}`,
    });
  }
}

/**
 * How many runs a build would withdraw because the runs directory holds no run folder while the release in
 * dist serves some (0 otherwise). At the start of a process that is far likelier a volume that did not mount
 * (its bare mount point) than every run withdrawn on purpose: `build` refuses it, `watch` and `start` wait.
 */
export async function runsAnEmptyBuildWouldWithdraw(runsDir: string, distDir: string): Promise<number> {
  if (listRunFolders(runsDir).length > 0) return 0;
  return (await loadCurrentRelease(distDir))?.index.reftimes.length ?? 0;
}
