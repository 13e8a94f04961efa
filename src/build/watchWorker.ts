/**
 * `ashcast start` runs the watcher here, in a worker thread of the serving process: contouring and
 * drawing take seconds of CPU, which on the server's thread would stall every request meanwhile.
 * Messages to the parent: { log }, { built } after each build, { job, done | failed } for operator jobs,
 * { purges } when a cache purge changes; from the parent: { job: JobOrder }, { cancel: id }, "close".
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { BuildOptions } from "./build.ts";
import { watchRuns } from "./watch.ts";
import { runJob } from "./runJob.ts";
import { createPurger } from "./cachePurger.ts";
import type { CachePurge } from "../contract/cachePurges.ts";
import type { RunReport } from "../contract/buildReport.ts";
import { formatError, UserError } from "../errors.ts";
import { JobCancelled, type JobExecutor, type JobOrder, type JobOutcome } from "../contract/jobs.ts";

/**
 * `purgeUrls`: the shared caches each publish purges (the purger lives here, beside the builds).
 * `debounceMs`: the watcher's quiet time (start keeps its default; tests hold its own builds back with a long one).
 */
type WorkerOptions = Omit<BuildOptions, "log" | "onProgress" | "now" | "previous"> & { purgeUrls?: readonly string[]; debounceMs?: number };
type FromWorker = { log?: string; built?: true; runs?: RunReport[]; job?: string; done?: JobOutcome; failed?: { message: string; cancelled: boolean }; purges?: CachePurge[] };
type ToWorker = "close" | { job: JobOrder } | { cancel: string };

export interface WatchWorker extends JobExecutor {
  /** Resolves after the first build (whatever its outcome); rejects when the watcher stops before it. */
  firstBuild: Promise<void>;
  /** The recent cache purges, newest first (for GET /datasets). */
  readonly cachePurges: readonly CachePurge[];
  close(): Promise<void>;
}

/** Starts the watcher in a worker thread; its log lines go to `log`, each build's run reports to `onReport` (what `watch` prints). */
export function startWatchWorker(options: WorkerOptions, log: (line: string) => void, onReport: (runs: RunReport[]) => void = () => {}): WatchWorker {
  const worker = new Worker(new URL(import.meta.url), { workerData: { watch: options } });
  let built: () => void = () => {};
  let failedToStart: (error: Error) => void = () => {};
  const firstBuild = new Promise<void>((resolve, reject) => {
    built = resolve;
    failedToStart = reject;
  });
  const waiting = new Map<string, { resolve: (outcome: JobOutcome) => void; reject: (error: Error) => void }>();
  let cachePurges: readonly CachePurge[] = [];
  worker.on("message", (message: FromWorker) => {
    if (message.log !== undefined) log(message.log);
    if (message.purges !== undefined) cachePurges = message.purges;
    if (message.runs !== undefined) onReport(message.runs);
    if (message.built) built();
    const job = message.job === undefined ? undefined : waiting.get(message.job);
    if (job && message.job !== undefined) {
      waiting.delete(message.job);
      if (message.done) job.resolve(message.done);
      else job.reject(message.failed?.cancelled ? new JobCancelled() : new UserError(message.failed?.message ?? "the job failed"));
    }
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.on("error", (error) => {
    log(`Internal error: the watcher stopped: ${error.stack ?? error.message}`);
    // Before the first build nothing was published by it: the start fails rather than serve without a builder.
    failedToStart(error);
  });
  worker.once("exit", () => {
    for (const job of waiting.values()) job.reject(new UserError("the watcher stopped before the job finished"));
    waiting.clear();
  });
  const post = (message: ToWorker) => worker.postMessage(message);
  return {
    firstBuild,
    get cachePurges() {
      return cachePurges;
    },
    run(order, signal) {
      return new Promise<JobOutcome>((resolve, reject) => {
        waiting.set(order.id, { resolve, reject });
        post({ job: order });
        signal.addEventListener("abort", () => post({ cancel: order.id }), { once: true });
      });
    },
    async close() {
      post("close");
      await exited;
    },
  };
}

const watchOptions = isMainThread ? undefined : (workerData as { watch?: WorkerOptions } | undefined)?.watch;
if (parentPort && watchOptions) {
  const port = parentPort;
  const send = (message: FromWorker) => port.postMessage(message);
  const { purgeUrls, ...buildOptions } = watchOptions;
  const log = (line: string) => send({ log: line });
  const watcher = await watchRuns({
    ...buildOptions,
    purger: createPurger({ urls: purgeUrls ?? [], log, onChange: (purges) => send({ purges: purges.map((p) => ({ ...p })) }) }),
    log,
    // The runs' issues with their fixes, for the operator's log: `start` said only how many errors there were.
    onBuild: ({ result }) => send({ built: true, ...(result ? { runs: result.report.runs } : {}) }),
  });
  const running = new Map<string, AbortController>();
  port.on("message", async (message: ToWorker) => {
    if (message === "close") {
      await watcher.close();
      port.close();
    } else if ("cancel" in message) {
      running.get(message.cancel)?.abort(new JobCancelled());
    } else {
      const { id } = message.job;
      const controller = new AbortController();
      running.set(id, controller);
      try {
        send({ job: id, done: await runJob(watcher, message.job, controller.signal) });
      } catch (error) {
        send({ job: id, failed: { message: formatError(error), cancelled: controller.signal.aborted } });
      } finally {
        running.delete(id);
      }
    }
  });
}
