/**
 * `check` of one folder in a worker thread: an upload is validated exactly as a build would validate it,
 * NetCDF reading and rendering included, without stalling the requests the serving thread answers meanwhile.
 * This side loads no build code; the worker runs checkWorkerJob.ts.
 */
import { Worker } from "node:worker_threads";
import { InternalError } from "../errors.ts";
import type { CheckResult } from "./check.ts";
import type { PipelineSettings } from "./pipelineSettings.ts";

export interface CheckJob {
  dir: string;
  settings: PipelineSettings;
}

export type CheckAnswer = { result: CheckResult } | { error: string };

export function checkInWorker(dir: string, settings: PipelineSettings): Promise<CheckResult> {
  return new Promise((resolve, reject) => {
    const job: CheckJob = { dir, settings };
    const worker = new Worker(new URL("./checkWorkerJob.ts", import.meta.url), { workerData: { check: job } });
    let answered = false;
    worker.once("message", (answer: CheckAnswer) => {
      answered = true;
      if ("result" in answer) resolve(answer.result);
      else reject(new InternalError(`checking ${dir} failed: ${answer.error}`));
    });
    worker.once("error", (error) => reject(new InternalError(`the check worker failed on ${dir}`, { cause: error })));
    worker.once("exit", (code) => {
      if (!answered) reject(new InternalError(`the check worker for ${dir} exited with code ${code} before answering`));
    });
  });
}
