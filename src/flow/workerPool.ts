/**
 * A bounded pool of worker threads that run named tasks: at most `size` workers, one task at a time each,
 * the rest queued in order. Workers start on demand and stop after `idleMs` without work; while idle they
 * do not keep the process alive.
 *
 * A busy worker is handed its next task before it finishes the one it runs (at most HELD_TASKS in its hands),
 * so it goes on without waiting for this thread to read its answer: a build's thread, busy writing text,
 * answered a worker 3–5 ms late (median), ~0.7 s of each worker's time a full-size build. A worker still
 * starts one task only when the one before has ended, and a free worker is always given work first.
 *
 * Failures never hang a caller: an error thrown by a task comes back as the task's rejection (a UserError
 * with its file and fix intact, anything else as an InternalError naming the task's label and carrying the
 * worker's stack); a worker that crashes or exits rejects the task it was running, naming its label, and is
 * replaced; a worker that dies before its module has loaded fails every queued and later task with that
 * error, rather than being started again and again.
 *
 * The worker side is `serveTasks(tasks)`, in the module the pool was given.
 *
 * @example
 * const pool = new WorkerPool(new URL("./myWorker.ts", import.meta.url), { size: 2, name: "render" });
 * const png = await pool.run<Uint8Array>("bandImage", input, "images/fl000-200/20260601T060000Z.png");
 */
import { isMainThread, parentPort, Worker, type ResourceLimits, type Transferable } from "node:worker_threads";
import { InternalError, UserError } from "../errors.ts";
import { eventLoopTurn } from "./pauses.ts";

/** What a task gives back: its output, and the buffers to move rather than copy to the other thread. */
export interface TaskResult<T> {
  output: T;
  transfer?: Transferable[];
}

export type Task<I, O> = (input: I) => TaskResult<O> | Promise<TaskResult<O>>;

interface Request {
  id: number;
  task: string;
  input: unknown;
}

interface SerialisedError {
  user: boolean;
  message: string;
  where?: string;
  fix?: string;
  stack?: string;
}

/** Tasks a worker holds at once: the one it runs and the next. */
const HELD_TASKS = 2;

type Reply = { ready: true } | { id: number; output: unknown } | { id: number; error: SerialisedError };

interface Job {
  id: number;
  task: string;
  input: unknown;
  transfer: readonly Transferable[];
  label: string;
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  /** Handed to the worker, in order: the first runs, the rest wait there for it. */
  jobs: Job[];
  /** Its module loaded (serveTasks said so): a worker that dies before that is broken, not unlucky. */
  ready: boolean;
}

export interface WorkerPoolOptions {
  /** Most workers at once (at least 1). */
  size: number;
  /** Shown in thread names and errors: "render" → "ashcast render 1". */
  name: string;
  /** Workers stop this long after the last task (default 2 s). */
  idleMs?: number;
  /** Most memory of each worker's young generation (V8's resource limit; Node's default for a worker is far larger than a main thread's). */
  youngGenerationMb?: number;
}

export class WorkerPool {
  readonly size: number;
  readonly #url: URL;
  readonly #name: string;
  readonly #idleMs: number;
  readonly #resourceLimits: ResourceLimits;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #started = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  #broken: Error | undefined;
  #closed = false;

  constructor(url: URL, options: WorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new InternalError(`a worker pool needs at least one worker, got ${options.size}`);
    this.size = options.size;
    this.#url = url;
    this.#name = options.name;
    this.#idleMs = options.idleMs ?? 2000;
    const young = options.youngGenerationMb;
    if (young !== undefined && !(Number.isInteger(young) && young >= 1)) throw new InternalError(`a worker's young generation is a whole number of MB, got ${young}`);
    this.#resourceLimits = young === undefined ? {} : { maxYoungGenerationSizeMb: young };
  }

  /** Runs `task` on `input` in a worker; `label` names what it works on (a file) in every error. */
  run<T>(task: string, input: unknown, label: string, transfer: readonly Transferable[] = []): Promise<T> {
    if (this.#closed) return Promise.reject(new InternalError(`the ${this.#name} worker pool is closed (task ${task} for ${label})`));
    if (this.#broken) return Promise.reject(this.#failure(label, this.#broken));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, task, input, transfer, label, resolve: resolve as (output: unknown) => void, reject });
      this.#pump();
    });
  }

  /** Starts every worker not yet running (each loads its modules), without giving it a task. */
  warm(): void {
    if (this.#closed || this.#broken) return;
    while (this.#slots.length < this.size) this.#start();
    this.#pump();
  }

  /** Workers running now (for tests). */
  get workers(): number {
    return this.#slots.length;
  }

  /** Stops every worker; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    for (const job of this.#queue.splice(0)) job.reject(new InternalError(`the ${this.#name} worker pool closed before ${job.label} was done`));
    await Promise.all(this.#slots.splice(0).map((slot) => this.#stop(slot, `the ${this.#name} worker pool closed`)));
  }

  #pump(): void {
    clearTimeout(this.#idleTimer);
    while (this.#queue.length > 0) {
      const slot = this.#nextSlot();
      if (!slot) break;
      const job = this.#queue.shift()!;
      slot.jobs.push(job);
      slot.worker.ref();
      try {
        slot.worker.postMessage({ id: job.id, task: job.task, input: job.input } satisfies Request, [...job.transfer]);
      } catch (error) {
        slot.jobs.pop();
        job.reject(new InternalError(`could not hand ${job.label} to a ${this.#name} worker`, { cause: error }));
      }
    }
    if (this.#slots.every((slot) => slot.jobs.length === 0)) {
      this.#idleTimer = setTimeout(() => void Promise.all(this.#slots.splice(0).map((slot) => this.#stop(slot))), this.#idleMs);
      this.#idleTimer.unref();
    }
  }

  /** A free worker, else a new one while there is room, else the least loaded worker with room for a waiting task. */
  #nextSlot(): Slot | undefined {
    const free = this.#slots.find((slot) => slot.jobs.length === 0);
    if (free) return free;
    if (this.#slots.length < this.size) return this.#start();
    let least: Slot | undefined;
    for (const slot of this.#slots) if (slot.jobs.length < HELD_TASKS && (!least || slot.jobs.length < least.jobs.length)) least = slot;
    return least;
  }

  #start(): Slot {
    const worker = new Worker(this.#url, { name: `ashcast ${this.#name} ${++this.#started}`, resourceLimits: this.#resourceLimits });
    const slot: Slot = { worker, jobs: [], ready: false };
    worker.unref();
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) {
        slot.ready = true;
        return;
      }
      const index = slot.jobs.findIndex((held) => held.id === reply.id);
      if (index < 0) return;
      const [job] = slot.jobs.splice(index, 1) as [Job];
      if (slot.jobs.length === 0) worker.unref();
      if ("error" in reply) job.reject(this.#rebuild(reply.error, job.label));
      else job.resolve(reply.output);
      this.#pump();
    });
    const died = (why: Error): void => {
      const index = this.#slots.indexOf(slot);
      if (index < 0) return;
      this.#slots.splice(index, 1);
      // Only the first task had started; the ones waiting behind it go back to the head of the queue.
      const [job, ...waiting] = slot.jobs.splice(0);
      this.#queue.unshift(...waiting);
      if (!slot.ready) {
        this.#broken = why;
        for (const queued of this.#queue.splice(0)) queued.reject(this.#failure(queued.label, why));
      }
      job?.reject(this.#failure(job.label, why));
      this.#pump();
    };
    // Act on "exit", not "error": Node delivers the messages a worker posted before dying (its "ready" among
    // them) ahead of "exit", but an uncaught error can overtake them, and a loaded worker would look broken.
    let uncaught: Error | undefined;
    worker.on("error", (error) => {
      uncaught ??= error;
    });
    worker.on("exit", (code) => died(uncaught ?? new Error(`the worker exited with code ${code}`)));
    this.#slots.push(slot);
    return slot;
  }

  #failure(label: string, why: Error): InternalError {
    return new InternalError(`a ${this.#name} worker failed while working on ${label}: ${why.message}`, { cause: why });
  }

  #rebuild(error: SerialisedError, label: string): Error {
    if (error.user) return new UserError(error.message, { ...(error.where === undefined ? {} : { where: error.where }), ...(error.fix === undefined ? {} : { fix: error.fix }) });
    const cause = new Error(error.message);
    if (error.stack !== undefined) cause.stack = error.stack;
    return new InternalError(`${label}: ${error.message.replace(/^Internal error: /, "")}`, { cause });
  }

  async #stop(slot: Slot, why?: string): Promise<void> {
    for (const job of slot.jobs.splice(0)) job.reject(new InternalError(`${why ?? "stopped"} before ${job.label} was done`));
    slot.worker.removeAllListeners("exit");
    slot.worker.removeAllListeners("error");
    slot.worker.on("error", () => {});
    await slot.worker.terminate();
  }
}

/** The worker side: answers the pool's requests with `tasks`. Call once, at the top of the worker module. */
export function serveTasks(tasks: Readonly<Record<string, Task<never, unknown>>>): void {
  if (isMainThread || !parentPort) throw new InternalError("serveTasks() runs in a worker thread only");
  const port = parentPort;
  // One task at a time, in the order handed (the pool sends the next while this one runs), each after a turn
  // of the event loop: Node frees native memory (a map's canvas pixels, its PNG) in its callbacks.
  let previous = Promise.resolve();
  port.on("message", (request: Request) => {
    previous = previous.then(eventLoopTurn).then(() => answer(port, tasks, request));
  });
  port.postMessage({ ready: true } satisfies Reply);
}

/** Runs one request and posts its reply; never rejects. */
async function answer(port: NonNullable<typeof parentPort>, tasks: Readonly<Record<string, Task<never, unknown>>>, request: Request): Promise<void> {
  let reply: Reply;
  let transfer: Transferable[] = [];
  try {
    const task = Object.hasOwn(tasks, request.task) ? tasks[request.task] : undefined;
    if (!task) throw new InternalError(`no task ${request.task} in this worker`);
    const result = await task(request.input as never);
    reply = { id: request.id, output: result.output };
    transfer = result.transfer ?? [];
  } catch (error) {
    reply = { id: request.id, error: serialise(error) };
  }
  port.postMessage(reply, transfer);
}

function serialise(error: unknown): SerialisedError {
  if (error instanceof UserError) {
    return { user: true, message: error.message, ...(error.where === undefined ? {} : { where: error.where }), ...(error.fix === undefined ? {} : { fix: error.fix }) };
  }
  if (error instanceof Error) return { user: false, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }) };
  return { user: false, message: String(error) };
}
