/**
 * `ashcast serve --workers N`: N server processes on one listening socket (node:cluster; the primary
 * accepts and hands connections out in turn), so one host uses all its cores. The primary only
 * supervises: it loads no server code. A worker that dies is replaced, after a growing wait while workers
 * die at start (restartBackoff.ts); SIGHUP replaces the workers one at a time (a new one listening before
 * an old one stops taking connections and finishes its requests); SIGTERM/SIGINT stop them all the same
 * way. Each worker follows dist/current itself, like any server on the same published tree, and keeps
 * its own throttle state unless REDIS_URL shares it.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { UserError } from "../errors.ts";
import { RESTART, restartBackoff, seconds, type Restart, type RestartBackoff } from "./restartBackoff.ts";

/** The most workers one host is given: each holds ~100 MB, and more processes than cores only contend. */
const MAX_WORKERS = 64;

/** `--workers`: a whole number from 1 written in digits (not `1e1` or `0x2`), or `auto` (the cores this process may use). */
export function parseWorkers(text: string | undefined): number {
  if (text === undefined || text === "") return 1;
  if (text === "auto") return Math.min(availableParallelism(), MAX_WORKERS);
  const n = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_WORKERS)) throw new UserError(`"${text}" is not a number of worker processes`, { where: "--workers", fix: `give a whole number from 1 to ${MAX_WORKERS} in digits, or auto for one per core` });
  return n;
}

/** What a worker tells the primary once every listener of it is bound (`listening` comes with the first). */
const SERVING_MESSAGE = "ashcast:serving";

/** In a worker, once it serves: the primary counts it as started only then. */
export function tellPrimaryServing(): void {
  cluster.worker?.send(SERVING_MESSAGE);
}

/** How long a stopping worker may take to finish its requests before it is killed. */
const STOP_GRACE_MS = 10_000;

/**
 * Runs in the primary: forks `workers` processes running the same command (cluster re-runs this
 * script), replaces those that die (with a growing wait while they die at start: restartBackoff.ts),
 * reloads on SIGHUP, and resolves when all have stopped after SIGTERM/SIGINT. Rejects when the first
 * workers cannot start (each printed its error), or when they keep dying at start and none is left serving.
 */
export async function superviseWorkers(workers: number, log: (line: string) => void): Promise<void> {
  let stopping = false;
  /** Workers being replaced or stopped on purpose: their exit is not a crash. */
  const retiring = new WeakSet<Worker>();
  /** Workers that listen and are not being retired: those that serve. */
  const serving = new Set<Worker>();
  /** Replacements waiting for their backoff. */
  const waits = new Set<NodeJS.Timeout>();
  let started = 0;
  let end: (error?: Error) => void = () => {};
  const ended = new Promise<void>((resolve, reject) => (end = (error) => (error ? reject(error) : resolve())));
  ended.catch(() => {}); // awaited below; a crash loop may end it before that

  /**
   * Forks a worker in `slot`; `waiter` (the first start, SIGHUP) learns when it serves. With it, one that stops
   * before serving is that caller's failure; otherwise it is replaced like any worker that stops.
   */
  const fork = (slot: RestartBackoff, waiter?: { serving: (worker: Worker) => void; onEarlyExit: (error: Error) => void }): Worker => {
    const worker = cluster.fork();
    const forkedAt = Date.now();
    let listened = false;
    // Having served a while, it shows the workers start fine again: the next stop is replaced at once.
    const survived = setTimeout(() => {
      if (listened && slot.served()) log(`worker ${worker.process.pid} has served for ${seconds(RESTART.quickMs)}: workers start again`);
    }, RESTART.quickMs);
    survived.unref();
    // Started once all its listeners are bound (with --http-port, a second one after the first `listening`).
    const onMessage = (message: unknown) => {
      if (message !== SERVING_MESSAGE || listened) return;
      listened = true;
      serving.add(worker);
      started++;
      waiter?.serving(worker);
    };
    worker.on("message", onMessage);
    // Sending to a worker that is exiting fails (EPIPE on its channel: retire's disconnect() when it stopped on its
    // own a moment before); its "exit" follows and is handled below. Unhandled, the error ended the primary.
    worker.on("error", (error) => {
      if (!stopping && !retiring.has(worker)) log(`worker ${worker.process.pid}: ${error.message}`);
    });
    worker.once("exit", (code, signal) => {
      clearTimeout(survived);
      serving.delete(worker);
      // A reload or first start waiting for this worker learns it will not serve, also during a stop.
      if (!listened && waiter) return waiter.onEarlyExit(new UserError("a server worker stopped before listening", { where: "--workers", fix: "read the worker's error above; it is the same as `ashcast serve` without --workers would print" }));
      if (stopping || retiring.has(worker)) return;
      replace(slot, `worker ${worker.process.pid} stopped (${signal ?? `exit code ${code}`})${listened ? "" : " before listening"}`, slot.stopped({ listened, livedMs: Date.now() - forkedAt }));
    });
    return worker;
  };

  const forkListening = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      fork(restartBackoff(), { serving: resolve, onEarlyExit: reject });
    });

  /** Forks the slot's next worker after its backoff; in a crash loop with nobody serving, stops everything. */
  const replace = (slot: RestartBackoff, what: string, next: Restart): void => {
    if (next.crashLoop && serving.size === 0) {
      log(`${what}; no worker is left serving`);
      end(new UserError(`${next.inRow} server workers in a row stopped within ${seconds(RESTART.quickMs)} of starting, and none is left serving`, { where: "--workers", fix: "read the workers' errors above (the same as `ashcast serve` without --workers prints: a broken file, a full disk, a bad release), remove their cause and start again" }));
      return;
    }
    if (next.crashLoop) {
      log(`${what}; ${next.inRow} workers in a row stopped within ${seconds(RESTART.quickMs)} of starting: they fail at start (their errors are above), not by chance. ${serving.size} worker${serving.size === 1 ? "" : "s"} still serve${serving.size === 1 ? "s" : ""}; starting another in ${seconds(next.delayMs)}, then at most every ${seconds(RESTART.maxDelayMs)} until one stays up`);
    } else log(`${what}; starting another${next.delayMs ? ` in ${seconds(next.delayMs)}` : ""}`);
    const wait = setTimeout(() => {
      waits.delete(wait);
      if (!stopping) fork(slot);
    }, next.delayMs);
    waits.add(wait);
  };

  /** Stops taking connections, lets the worker finish its requests, kills it if it hangs (at once if it serves nothing yet). */
  const retire = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      retiring.add(worker);
      if (worker.isDead()) return resolve();
      const timer = setTimeout(() => worker.kill("SIGKILL"), serving.has(worker) ? STOP_GRACE_MS : 0);
      worker.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      worker.disconnect();
    });

  const current = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !retiring.has(w));

  let reloading = Promise.resolve();
  try {
    for (let i = 0; i < workers; i++) await forkListening();
    log(`${started} server workers share the listening socket`);

    process.on("SIGHUP", () => {
      if (stopping) return;
      reloading = reloading.then(async () => {
        log("SIGHUP: replacing the workers one at a time");
        for (const old of current()) {
          // A stop during the reload ends it: no worker is started after SIGTERM.
          if (stopping) return;
          await forkListening();
          if (stopping) return;
          await retire(old);
        }
        log("workers replaced");
      }).catch((error: Error) => log(stopping ? "reload ended by the stop" : `reload stopped: ${error.message}; the remaining workers still serve`));
    });
    // `on`, not `once`: a second signal during the stop is the same stop, not node's default exit that orphans the workers.
    process.on("SIGINT", () => end());
    process.on("SIGTERM", () => end());
    await ended;
  } finally {
    stopping = true;
    for (const wait of waits) clearTimeout(wait);
    await Promise.all(current().map(retire));
    // A reload under way forks no more; what it forked meanwhile is retired too.
    await reloading;
    await Promise.all(current().map(retire));
  }
}

/**
 * In a worker: resolves when the primary has retired it (reload or stop). Cluster closes the worker's
 * listening socket first and disconnects once its connections have ended, so requests in flight finish.
 * Ctrl-C reaches every process of the terminal: the primary's stop is what ends a worker.
 */
export function untilRetired(): Promise<void> {
  process.on("SIGINT", () => {});
  return new Promise((resolve) => cluster.worker!.once("disconnect", () => resolve()));
}

export const isWorker = (): boolean => cluster.isWorker;

/**
 * In a worker that could not start: lets go of the primary's channel, which would keep it alive, so it
 * exits with its code. Through the worker's own disconnect: a bare process.disconnect() makes cluster exit
 * the worker at once with code 0, and the primary would log a failed start as a clean exit.
 */
export function leavePrimary(): void {
  cluster.worker?.disconnect();
}
