// Entry of ashcast's worker threads (watchWorker.ts, checkWorker.ts): a worker does not inherit its parent's
// loaders, so it registers them as bin/ashcast does, then loads the module named in workerData.entry.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

await import("h5wasm/node");
register();
await import(workerData.entry);
