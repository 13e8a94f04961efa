/**
 * The job board behind /jobs: operators submit a rebuild (all runs or one) or a cleanup, follow its
 * state, and cancel it. Jobs run one at a time, in submission order, on the builder (the watcher), which
 * also serialises them with the builds that changes in runs/ start. The board keeps the newest jobs in
 * memory; the audit log keeps every submission, cancellation and outcome for good.
 */
import { randomBytes } from "node:crypto";
import { formatError, UserError } from "../errors.ts";
import { JobCancelled, JobQueueFull, MAX_QUEUED_JOBS, type Job, type JobExecutor, type JobOrder } from "../contract/jobs.ts";
import type { CachePurge } from "../contract/cachePurges.ts";
import type { AuditLog } from "./auditLog.ts";
import { oneAtATime } from "../flow/oneAtATime.ts";
import { compactInstant, formatInstant } from "../time/instant.ts";

export type JobRequest = { kind: "rebuild"; runs: "all" | readonly string[] } | { kind: "cleanup" };

/** Finished jobs kept for GET /jobs; older ones are only in the audit log. */
const KEEP_FINISHED = 100;

export class JobBoard {
  readonly #executor: JobExecutor;
  readonly #audit: AuditLog;
  readonly #now: () => number;
  readonly #cachePurges: (() => readonly CachePurge[]) | undefined;
  readonly #jobs = new Map<string, Job>();
  readonly #controllers = new Map<string, AbortController>();
  readonly #inTurn = oneAtATime();
  readonly #submitting = oneAtATime();

  /** `cachePurges`: the publisher's recent purges (with --purge), for the records of the jobs that published. */
  constructor(options: { executor: JobExecutor; audit: AuditLog; now?: () => number; cachePurges?: () => readonly CachePurge[] }) {
    this.#executor = options.executor;
    this.#audit = options.audit;
    this.#now = options.now ?? Date.now;
    this.#cachePurges = options.cachePurges;
  }

  /**
   * Queues the job and answers it as queued; it runs once the jobs before it have finished. The same job
   * waiting already is that job (a second full rebuild before the first began would only repeat it); a full
   * queue throws JobQueueFull.
   */
  submit(request: JobRequest, who: string): Promise<Job> {
    // One at a time: a burst submitted together must each see the jobs queued before it.
    return this.#submitting(() => this.#submit(request, who));
  }

  async #submit(request: JobRequest, who: string): Promise<Job> {
    const id = `${compactInstant(formatInstant(this.#now()))}-${randomBytes(3).toString("hex")}`;
    const job: Job = { id, kind: request.kind, ...(request.kind === "rebuild" ? { runs: request.runs === "all" ? "all" : [...request.runs] } : {}), state: "queued", submittedBy: who, submitted: formatInstant(this.#now()) };
    const queued = [...this.#jobs.values()].filter((other) => other.state === "queued");
    const same = queued.find((other) => describe(other) === describe(job));
    if (same) {
      await this.#audit.record({ who, action: "job-submit", target: same.id, outcome: "done", detail: `${describe(job)}: the same as job ${same.id}, still waiting` });
      return this.#shown(same);
    }
    if (queued.length >= MAX_QUEUED_JOBS) {
      await this.#audit.record({ who, action: "job-submit", target: id, outcome: "refused", detail: `${describe(job)}: ${MAX_QUEUED_JOBS} jobs waiting` });
      throw new JobQueueFull();
    }
    // Recorded first: a job the audit log cannot record is refused, never left on the board unrun.
    await this.#audit.record({ who, action: "job-submit", target: id, outcome: "done", detail: describe(job) });
    this.#jobs.set(id, job);
    this.#forgetOldest();
    const controller = new AbortController();
    this.#controllers.set(id, controller);
    void this.#inTurn(() => this.#run(job, controller.signal));
    return { ...job };
  }

  get(id: string): Job | undefined {
    const job = this.#jobs.get(id);
    return job && this.#shown(job);
  }

  /** Newest first. */
  list(): Job[] {
    return [...this.#jobs.values()].reverse().map((job) => this.#shown(job));
  }

  /**
   * A queued job is cancelled at once; a running one is asked to stop (it stops between run folders,
   * publishing nothing); a finished one cannot be cancelled.
   */
  async cancel(id: string, who: string): Promise<{ kind: "cancelled" | "stopping" | "finished"; job: Job } | undefined> {
    const job = this.#jobs.get(id);
    if (!job) return undefined;
    if (job.state !== "queued" && job.state !== "running") {
      await this.#audit.record({ who, action: "job-cancel", target: id, outcome: "refused", detail: `the job has ${job.state}` });
      return { kind: "finished", job: { ...job } };
    }
    const running = job.state === "running";
    this.#controllers.get(id)?.abort(new JobCancelled());
    if (running) job.cancelRequested = true;
    else this.#finish(job, "cancelled");
    await this.#audit.record({ who, action: "job-cancel", target: id, outcome: "done", detail: running ? "asked the running job to stop" : "cancelled before it started" });
    return { kind: running ? "stopping" : "cancelled", job: { ...job } };
  }

  async #run(job: Job, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return; // cancelled while queued
    job.state = "running";
    job.started = formatInstant(this.#now());
    const order: JobOrder = job.kind === "cleanup" ? { id: job.id, kind: "cleanup" } : { id: job.id, kind: "rebuild", runs: job.runs ?? "all" };
    let ended: "succeeded" | "failed" | "cancelled";
    try {
      job.outcome = await this.#executor.run(order, signal);
      this.#notePurges(job);
      ended = "succeeded";
    } catch (error) {
      ended = signal.aborted ? "cancelled" : "failed";
      if (!signal.aborted) {
        // What the operator can act on; a bug's stack stays in the server's log, not in an API answer.
        job.error = error instanceof UserError ? formatError(error) : "Internal error: the job failed; the server's log has the details";
        if (!(error instanceof UserError)) console.error(`job ${job.id}: ${formatError(error)}`);
      }
    }
    this.#finish(job, ended);
    const outcome = ended === "succeeded" ? "done" : ended;
    await this.#audit
      .record({ who: job.submittedBy, action: `job-${job.kind}`, target: job.id, outcome, detail: job.error ?? JSON.stringify(job.outcome ?? {}) })
      .catch((error: unknown) => console.error(`Internal error: the audit log could not record job ${job.id}: ${formatError(error)}`));
  }

  /** A copy of the job, with the purges of its publish as they stand now. */
  #shown(job: Job): Job {
    this.#notePurges(job);
    return { ...job, ...(job.cachePurges ? { cachePurges: job.cachePurges.map((purge) => ({ ...purge, tags: [...purge.tags] })) } : {}) };
  }

  /**
   * The purger sent the job's purges before the job's outcome came back (the builder posts them first), so
   * they are there when it succeeds; they are read again while they are sent. A purge the purger no
   * longer keeps (it keeps the newest) stays as last seen.
   */
  #notePurges(job: Job): void {
    const outcome = job.outcome;
    if (!this.#cachePurges || outcome?.kind !== "rebuild" || !outcome.published) return;
    const sent = this.#cachePurges().filter((purge) => purge.release === outcome.release);
    const gone = (job.cachePurges ?? []).filter((seen) => !sent.some((purge) => purge.cache === seen.cache));
    job.cachePurges = [...sent.map((purge) => ({ ...purge })), ...gone];
  }

  #finish(job: Job, state: "succeeded" | "failed" | "cancelled"): void {
    job.state = state;
    job.finished = formatInstant(this.#now());
    this.#controllers.delete(job.id);
  }

  #forgetOldest(): void {
    const finished = [...this.#jobs.values()].filter((job) => job.finished !== undefined);
    for (const job of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.#jobs.delete(job.id);
  }
}

function describe(job: Job): string {
  if (job.kind === "cleanup") return "clean up old releases and temporaries";
  return job.runs === "all" || job.runs === undefined ? "rebuild every run" : `rebuild ${job.runs.join(", ")}`;
}
