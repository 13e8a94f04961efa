/**
 * A worker thread of the build's step pool (src/build/stepPool.ts): it runs the tasks of stepTasks.ts.
 * Node's compile cache (in the temp directory, keyed by source and Node version) spares each new worker
 * stripping and compiling the same modules again: 0.3 s of CPU a worker without it, 0.1 s with it.
 */
import { enableCompileCache } from "node:module";
import { serveTasks } from "../flow/workerPool.ts";

enableCompileCache();
const { STEP_TASKS } = await import("./stepTasks.ts");
// No h5wasm here: the main thread describes each model output file, and workers read its steps with Node's
// zlib (src/model/describedSource.ts); h5wasm loads only for a file whose layout that reader does not know.
serveTasks(STEP_TASKS);
