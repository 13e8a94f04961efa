import { UserError } from "../errors.ts";

/**
 * Operator jobs (POST /jobs): what the server asks the builder to do, and what the builder answers.
 * Shared by src/operator (the job board) and src/build (the watcher that runs them).
 */
export type JobKind = "rebuild" | "cleanup";

export type JobOrder = { id: string; kind: "rebuild"; runs: "all" | readonly string[] } | { id: string; kind: "cleanup" };

export type JobOutcome =
  | { kind: "rebuild"; release: string; published: boolean; rebuilt: string[]; errors: number }
  | { kind: "cleanup"; releases: number; runs: number; temporaries: number };

/** Runs one job at a time, in turn with the builds it starts itself; rejects when the job fails or is cancelled. */
export interface JobExecutor {
  run(order: JobOrder, signal: AbortSignal): Promise<JobOutcome>;
}

/** The reason a cancelled job's signal is aborted with, and the error its run then ends with. */
export class JobCancelled extends UserError {
  constructor() {
    super("the job was cancelled");
  }
}
