/**
 * Operator jobs (/jobs): what the server asks the builder to do, what the builder answers, and a job as
 * the API shows it (its zod schema is also the OpenAPI document's). Shared by src/operator (the job
 * board), src/server (the routes) and src/build (the watcher that runs them).
 */
import { z } from "zod";
import { UserError } from "../errors.ts";
import { PublishedInstant } from "./ashModel.ts";
import { CachePurge } from "./cachePurges.ts";

export type JobOrder = { id: string; kind: "rebuild"; runs: "all" | readonly string[] } | { id: string; kind: "cleanup" };

export const JobOutcome = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("rebuild"), release: z.string(), published: z.boolean(), rebuilt: z.array(z.string()), errors: z.number().int() }),
  z.object({ kind: z.literal("cleanup"), releases: z.number().int(), runs: z.number().int(), temporaries: z.number().int() }),
]);
export type JobOutcome = z.infer<typeof JobOutcome>;

export const JOB_STATES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A job as GET /jobs/{id} shows it. */
export const Job = z.object({
  id: z.string(),
  kind: z.enum(["rebuild", "cleanup"]),
  /** Rebuild only: "all", or the one run folder. */
  runs: z.union([z.literal("all"), z.array(z.string())]).optional(),
  state: z.enum(JOB_STATES),
  /** Set when a running job was asked to stop; it stops between run folders. */
  cancelRequested: z.literal(true).optional(),
  submittedBy: z.string(),
  submitted: PublishedInstant,
  started: PublishedInstant.optional(),
  finished: PublishedInstant.optional(),
  outcome: JobOutcome.optional(),
  /** Why it failed, as the build log says it. */
  error: z.string().optional(),
  /**
   * A rebuild that published, with --purge: what each shared cache was told of it and whether it heard
   * (as in /datasets; the purges go on in the background after the job has succeeded). Empty when the
   * publish changed no answer a cache holds.
   */
  cachePurges: z.array(CachePurge).optional(),
});
export type Job = z.infer<typeof Job>;

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

/** Jobs waiting their turn at most: each may be a full rebuild of every run. */
export const MAX_QUEUED_JOBS = 20;

/** The queue holds MAX_QUEUED_JOBS already (a 429 to the operator). */
export class JobQueueFull extends UserError {
  constructor() {
    super(`${MAX_QUEUED_JOBS} jobs are waiting their turn already`, { fix: "wait for them to run (GET /jobs), or cancel some, then submit again" });
  }
}
