/** Runs an operator's job on the watcher, in turn with its builds. */
import type { JobOrder, JobOutcome } from "../contract/jobs.ts";
import type { Watcher } from "./watch.ts";

export async function runJob(watcher: Watcher, order: JobOrder, signal: AbortSignal): Promise<JobOutcome> {
  if (order.kind === "cleanup") return { kind: "cleanup", ...(await watcher.cleanDist(signal)) };
  const result = await watcher.rebuild(order.runs, signal);
  return {
    kind: "rebuild",
    release: result.release,
    published: result.published,
    rebuilt: result.report.runs.filter((run) => run.rebuilt !== undefined).map((run) => run.folder),
    errors: result.report.counts.errors,
  };
}
