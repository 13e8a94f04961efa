/**
 * Both cores for the per-step work of a build: reading and contouring the steps of model output, and
 * drawing and encoding the maps, go to a pool of worker threads (src/flow/workerPool.ts), one per core.
 * The pool starts with the first task and stops when idle; each worker draws its own base maps and opens
 * model output itself. Results are merged in step order by the callers, so a build's bytes do not depend
 * on the number of workers (test/build/parallelBuild.test.ts).
 *
 * ASHCAST_WORKERS sets the number of workers; 0 runs every task on the calling thread, as one core would
 * (the default on a one-core machine).
 */
import { availableParallelism } from "node:os";
import type { Transferable } from "node:worker_threads";
import { UserError } from "../errors.ts";
import { eventLoopTurn } from "../flow/pauses.ts";
import { WorkerPool } from "../flow/workerPool.ts";
import type { StepTasks } from "./stepTasks.ts";

/** Without ASHCAST_WORKERS: one worker per core, at most this many (each holds its base maps and fonts: ~100 MB). */
const MOST_WORKERS_BY_DEFAULT = 8;
/**
 * Each worker's young generation, in MB (semi-spaces of 4 MB). Node gives a worker 192 MB on a large machine:
 * V8 then starts marking the old generation whenever its headroom is below that, and a worker whose old
 * generation holds ~11 MB was marked every ~100 ms. With 12 MB: 6 of 6 alternating full-size builds faster,
 * 0.97× wall and CPU, RSS 742 against 845 MB (6 MB and 24 MB measured the same as 12; docs/benchmarks.md, issue 18).
 */
const WORKER_YOUNG_GENERATION_MB = 12;

/** How many worker threads per-step work gets: ASHCAST_WORKERS, else one per core (none on a one-core machine). */
export function stepWorkers(env: NodeJS.ProcessEnv = process.env): number {
  const setting = env["ASHCAST_WORKERS"]?.trim();
  if (setting !== undefined && setting !== "") {
    if (!/^\d{1,3}$/.test(setting)) throw new UserError(`ASHCAST_WORKERS is "${setting}", not a number of worker threads`, { where: "ASHCAST_WORKERS", fix: "set it to 0 (no worker threads) or a whole number such as 2, or unset it for one per core" });
    return Number(setting);
  }
  cores ??= availableParallelism();
  return cores < 2 ? 0 : Math.min(cores, MOST_WORKERS_BY_DEFAULT);
}
/** The cores this process may use, asked once: every task asks how many workers there are (a system call each time, ~20 ms a full-size build). */
let cores: number | undefined;

let pool: WorkerPool | undefined;

function currentPool(): WorkerPool | undefined {
  const size = stepWorkers();
  if (pool && pool.size !== size) {
    void pool.close();
    pool = undefined;
  }
  if (size > 0) pool ??= new WorkerPool(new URL("./stepWorker.ts", import.meta.url), { size, name: "build", youngGenerationMb: WORKER_YOUNG_GENERATION_MB });
  return pool;
}

/**
 * How many tasks to have started ahead of the one whose result is merged next: three per worker, so that
 * each has work queued while this thread merges (the end of a band's point grid takes a few hundred ms).
 */
export function stepTaskWindow(): number {
  return 3 * Math.max(1, stepWorkers());
}

/**
 * How long work on the build's own thread goes on between pauses (src/flow/pauses.ts) while workers have
 * tasks: a worker that finished one starts the one it holds, and is handed another at most this long later
 * (a map takes ~6–30 ms; 12 ms made builds slower).
 */
export const MAIN_THREAD_PAUSE_MS = 3;

/** Starts the workers now, ahead of their first task: they load their modules while this thread opens files. */
export function warmStepPool(): void {
  currentPool()?.warm();
}

type Input<K extends keyof StepTasks> = Parameters<StepTasks[K]>[0];
type Output<K extends keyof StepTasks> = Awaited<ReturnType<StepTasks[K]>>["output"];

/**
 * Runs a task of stepTasks.ts in a worker, or `here` on this thread when there are no workers; `label`
 * names the file the task works on, for errors; `transfer`: buffers of the input to move to the worker
 * (unusable here afterwards).
 */
export function runStepTask<K extends keyof StepTasks>(task: K, input: Input<K>, label: string, here: () => Promise<Output<K>>, transfer: readonly Transferable[] = []): Promise<Output<K>> {
  const workers = currentPool();
  // A task run on this thread starts after a turn of the event loop, as a worker's next task does: Node frees
  // the memory of native objects (a map's canvas pixels, its PNG) in callbacks of the event loop, so tasks run
  // back to back on promises alone piled up the maps' memory. A full-size build on one thread peaked at
  // 1.0–1.1 GB of RSS without the turn, 0.57–0.67 GB with it (docs/benchmarks.md, issue 18).
  return workers ? workers.run<Output<K>>(task, input, label, transfer) : eventLoopTurn().then(here);
}

/** Bytes from a worker arrive as a Uint8Array: the same bytes, as a Buffer (no copy). */
export const bufferOf = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** Worker threads running now, loaded or loading (tests see with it when the pool was started). */
export function stepPoolWorkers(): number {
  return pool?.workers ?? 0;
}

/** Stops the workers now (they also stop by themselves when idle). */
export async function closeStepPool(): Promise<void> {
  await pool?.close();
  pool = undefined;
}
