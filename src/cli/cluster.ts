/**
 * `ashcast serve --workers N`: N server processes on one listening socket (node:cluster; the primary
 * accepts and hands connections out in turn), so one host uses all its cores. The primary only
 * supervises: it loads no server code. A worker that dies is replaced; SIGHUP replaces the workers one at
 * a time (a new one listening before an old one stops taking connections and finishes its requests);
 * SIGTERM/SIGINT stop them all the same way. Each worker follows dist/current itself, like any server on
 * the same published tree, and keeps its own throttle state unless REDIS_URL shares it.
 */
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { UserError } from "../errors.ts";

/** `--workers`: a whole number from 1, or `auto` (the cores this process may use). */
export function parseWorkers(text: string | undefined): number {
  if (text === undefined || text === "") return 1;
  if (text === "auto") return availableParallelism();
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new UserError(`"${text}" is not a number of worker processes`, { where: "--workers", fix: "give a whole number from 1, or auto for one per core" });
  return n;
}

/** How long a stopping worker may take to finish its requests before it is killed. */
const STOP_GRACE_MS = 10_000;

/**
 * Runs in the primary: forks `workers` processes running the same command (cluster re-runs this
 * script), replaces those that die, reloads on SIGHUP, and resolves when all have stopped after
 * SIGTERM/SIGINT. Rejects when the first worker cannot start (its error was printed by the worker).
 */
export async function superviseWorkers(workers: number, log: (line: string) => void): Promise<void> {
  let stopping = false;
  /** Workers being replaced or stopped on purpose: their exit is not a crash. */
  const retiring = new WeakSet<Worker>();
  let started = 0;

  const fork = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork();
      const failed = () => reject(new UserError("a server worker stopped before listening", { where: "--workers", fix: "read the worker's error above; it is the same as `ashcast serve` without --workers would print" }));
      worker.once("exit", failed);
      worker.once("listening", () => {
        worker.off("exit", failed);
        worker.on("exit", (code, signal) => {
          if (stopping || retiring.has(worker)) return;
          log(`worker ${worker.process.pid} stopped (${signal ?? `exit code ${code}`}); starting another`);
          void fork().catch((error: Error) => log(`could not replace the worker: ${error.message}`));
        });
        started++;
        resolve(worker);
      });
    });

  /** Stops taking connections, lets the worker finish its requests, kills it if it hangs. */
  const retire = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      retiring.add(worker);
      if (worker.isDead()) return resolve();
      const timer = setTimeout(() => worker.kill("SIGKILL"), STOP_GRACE_MS);
      worker.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      worker.disconnect();
    });

  const current = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !retiring.has(w));

  try {
    for (let i = 0; i < workers; i++) await fork();
  } catch (error) {
    stopping = true;
    await Promise.all(current().map(retire));
    throw error;
  }
  log(`${started} server workers share the listening socket`);

  let reloading = Promise.resolve();
  process.on("SIGHUP", () => {
    reloading = reloading.then(async () => {
      log("SIGHUP: replacing the workers one at a time");
      for (const old of current()) {
        await fork();
        await retire(old);
      }
      log("workers replaced");
    }).catch((error: Error) => log(`reload stopped: ${error.message}; the remaining workers still serve`));
  });
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  stopping = true;
  await Promise.all(current().map(retire));
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
