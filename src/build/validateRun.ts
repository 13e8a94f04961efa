/** Reads and validates one scanned run folder: the step `build` and `check` share. Writes nothing. */
import { assembleRun, type AssembledRun } from "./assembleRun.ts";
import { Issues } from "./issues.ts";
import { readRun } from "./readers/index.ts";
import type { ScannedRun } from "./scanRuns.ts";
import { thresholdsOf, type PipelineSettings } from "./pipelineSettings.ts";

export interface ValidatedRun {
  issues: Issues;
  /** The run ready to render, when it has no errors. */
  assembled?: AssembledRun;
}

export async function validateRun(run: ScannedRun, settings: PipelineSettings): Promise<ValidatedRun> {
  const issues = new Issues();
  for (const refused of run.refused) {
    const folder = refused.name === ".";
    issues.error(folder ? run.folder : `${run.folder}/${refused.name}`, refused.why, refused.fix ?? (folder ? "replace the link with the run folder itself" : "replace it with a plain file, or remove it (a run folder holds files only)"));
  }
  // The folder itself refused (a symbolic link): none of its files was read, so nothing more can be said of them.
  if (run.refused.some((refused) => refused.name === ".")) return { issues };
  const readings = await readRun(run, issues, { thresholds: thresholdsOf(settings) });
  const assembled = assembleRun(run.folder, readings, issues, settings);
  return assembled && !issues.hasErrors ? { issues, assembled } : { issues };
}
