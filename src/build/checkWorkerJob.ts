/** The worker side of checkWorker.ts: checks the folder it was given and posts the result. */
import { parentPort, workerData } from "node:worker_threads";
import { formatError } from "../errors.ts";
import { check } from "./check.ts";
import type { CheckAnswer, CheckJob } from "./checkWorker.ts";

const job = (workerData as { check: CheckJob }).check;
let answer: CheckAnswer;
try {
  answer = { result: await check(job.dir, job.settings) };
} catch (error) {
  answer = { error: formatError(error) };
}
parentPort!.postMessage(answer);
