/**
 * A worker thread of the build's step pool (src/build/stepPool.ts): it runs the tasks of stepTasks.ts.
 * Node's compile cache (in the temp directory, keyed by source and Node version) spares each new worker
 * stripping and compiling the same modules again: 0.3 s of CPU a worker without it, 0.1 s with it.
 */
import { enableCompileCache } from "node:module";
import { serveTasks } from "../flow/workerPool.ts";

enableCompileCache();
const { STEP_TASKS } = await import("./stepTasks.ts");
// Workers start when model output is found to read (src/build/scanRuns.ts, src/build/watch.ts): h5wasm's
// WebAssembly is compiled now (~100 ms), while the build still scans or the watcher waits for quiet, not in the first read.
await (await import("../model/netcdf4.ts")).h5wasmReady();
serveTasks(STEP_TASKS);
