/** A worker thread of the build's step pool (src/build/stepPool.ts): it runs the tasks of stepTasks.ts. */
import { serveTasks } from "../flow/workerPool.ts";
import { STEP_TASKS } from "./stepTasks.ts";

serveTasks(STEP_TASKS);
