/**
 * `ashcast start` runs the watcher here, in a worker thread of the serving process: contouring and
 * drawing take seconds of CPU, which on the server's thread would stall every request meanwhile.
 * Messages to the parent: { log }, { built } after each build; from the parent: "close".
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { BuildOptions } from "./build.ts";
import { watchRuns } from "./watch.ts";

type WorkerOptions = Omit<BuildOptions, "log" | "onProgress" | "now" | "previous">;

export interface WatchWorker {
  /** Resolves after the first build (whatever its outcome). */
  firstBuild: Promise<void>;
  close(): Promise<void>;
}

/** Starts the watcher in a worker thread; its log lines go to `log`. */
export function startWatchWorker(options: WorkerOptions, log: (line: string) => void): WatchWorker {
  // A worker does not inherit this process's loaders: its entry registers them as bin/ashcast does.
  const worker = new Worker(new URL("./workerBoot.mjs", import.meta.url), { workerData: { entry: import.meta.url, watch: options } });
  let built: () => void = () => {};
  const firstBuild = new Promise<void>((resolve) => (built = resolve));
  worker.on("message", (message: { log?: string; built?: true }) => {
    if (message.log !== undefined) log(message.log);
    if (message.built) built();
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.on("error", (error) => {
    log(`Internal error: the watcher stopped: ${error.stack ?? error.message}`);
    built();
  });
  return {
    firstBuild,
    async close() {
      worker.postMessage("close");
      await exited;
    },
  };
}

const watchOptions = isMainThread ? undefined : (workerData as { watch?: WorkerOptions } | undefined)?.watch;
if (parentPort && watchOptions) {
  const port = parentPort;
  const watcher = await watchRuns({
    ...watchOptions,
    log: (line) => port.postMessage({ log: line }),
    onBuild: () => port.postMessage({ built: true }),
  });
  port.on("message", async (message) => {
    if (message === "close") {
      await watcher.close();
      port.close();
    }
  });
}
