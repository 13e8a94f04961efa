import { afterEach, describe, expect, it } from "vitest";
import { InternalError, UserError } from "../../src/errors.ts";
import { WorkerPool } from "../../src/flow/workerPool.ts";
import { eachInOrder, inOrder } from "../../src/flow/inOrder.ts";

const TASKS = new URL("./fixtures/taskWorker.ts", import.meta.url);
const pools: WorkerPool[] = [];
const pool = (size: number, idleMs?: number): WorkerPool => {
  const created = new WorkerPool(TASKS, { size, name: "test", ...(idleMs === undefined ? {} : { idleMs }) });
  pools.push(created);
  return created;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("WorkerPool", () => {
  it("runs tasks on at most `size` workers, each answer to its own task", async () => {
    const workers = pool(2);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((value) => workers.run<{ value: number; thread: number }>("echo", { value, delayMs: 20 }, `item ${value}`)));
    expect(answers.map((a) => a.value)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(answers.map((a) => a.thread)).size).toBe(2);
    expect(workers.workers).toBe(2);
    expect(await workers.run<Uint8Array>("bytes", { length: 1000 }, "bytes")).toEqual(new Uint8Array(1000).fill(7));
  });

  it("gives each worker the young generation it was told, and refuses a size that is not whole MB", async () => {
    const limited = new WorkerPool(TASKS, { size: 1, name: "test", youngGenerationMb: 12 });
    pools.push(limited);
    expect(await limited.run("limits", {}, "limits")).toMatchObject({ maxYoungGenerationSizeMb: 12 });
    // Without the option, Node's own default (larger) stays.
    expect((await pool(1).run<{ maxYoungGenerationSizeMb: number }>("limits", {}, "limits")).maxYoungGenerationSizeMb).toBeGreaterThan(12);
    for (const size of [0.5, 12.5, 0, -4]) expect(() => new WorkerPool(TASKS, { size: 1, name: "test", youngGenerationMb: size })).toThrow(`young generation is a whole number of MB, got ${size}`);
  });

  it("hands a busy worker its next task, so it goes on while this thread is busy, and runs its tasks one after the other", async () => {
    const workers = pool(1);
    await workers.run("echo", { value: 0 }, "loaded");
    const flags = new Int32Array(new SharedArrayBuffer(8));
    const first = workers.run<number>("flag", { flags: flags.buffer, index: 0 }, "first");
    const second = workers.run<number>("flag", { flags: flags.buffer, index: 1 }, "second");
    // This thread blocks here and cannot read the first answer: the second task starts only if the worker holds it.
    expect(Atomics.wait(flags, 1, 0, 10_000)).not.toBe("timed-out");
    expect(await Promise.all([first, second])).toEqual([0, 1]);
  });

  it("gives the tasks waiting with a worker that dies to a new worker", async () => {
    const workers = pool(1);
    const dies = workers.run("exit", {}, "runs/b/model.png");
    const waiting = [1, 2].map((value) => workers.run<{ value: number }>("echo", { value }, `item ${value}`));
    await expect(dies).rejects.toThrow(/working on runs\/b\/model\.png: the worker exited with code 3/);
    expect(await Promise.all(waiting)).toMatchObject([{ value: 1 }, { value: 2 }]);
  });

  it("gives a user error back as a UserError, with its file and fix", async () => {
    const error = await pool(1).run("userError", {}, "runs/a/eemep.nc steps 0–5").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect(error).toMatchObject({ message: "the field has a negative concentration", where: "runs/a/eemep.nc", fix: "replace the file" });
  });

  it("gives a bug back as an internal error naming what the task worked on, with the worker's stack", async () => {
    const error = (await pool(1).run("bug", {}, "images/fl000-200/20260601T060000Z.png").catch((e: unknown) => e)) as InternalError;
    expect(error).toBeInstanceOf(InternalError);
    expect(error.message).toBe("Internal error: images/fl000-200/20260601T060000Z.png: cannot read properties of undefined");
    expect(String((error.cause as Error).stack)).toMatch(/taskWorker\.ts/);
  });

  it("rejects the task of a worker that exits or crashes, naming it, and goes on with a new worker", async () => {
    const workers = pool(1);
    await expect(workers.run("exit", {}, "runs/b/model.png")).rejects.toThrow(/a test worker failed while working on runs\/b\/model\.png: the worker exited with code 3/);
    // Several crashes in a row: an uncaught error can reach the pool before the worker's "ready" message, and
    // the pool must still not take a loaded worker for one whose module cannot load.
    for (const run of ["c", "d", "e", "f", "g", "h"]) {
      await expect(workers.run("crash", {}, `runs/${run}/model.png`)).rejects.toThrow(new RegExp(`working on runs/${run}/model\\.png: thrown outside any task`));
    }
    expect(await workers.run<{ value: number }>("echo", { value: 9 }, "after")).toMatchObject({ value: 9 });
  });

  it("fails every task when its worker module does not load, instead of hanging or starting it again and again", async () => {
    const broken = new WorkerPool(new URL("./fixtures/brokenWorker.ts", import.meta.url), { size: 2, name: "broken" });
    pools.push(broken);
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => broken.run("echo", { value: i }, `file ${i}`)));
    for (const [i, result] of results.entries()) {
      expect(result.status).toBe("rejected");
      expect(String((result as PromiseRejectedResult).reason.message)).toMatch(new RegExp(`working on file ${i + 1}: this worker module does not load`));
    }
    await expect(broken.run("echo", { value: 5 }, "file 5")).rejects.toThrow(/this worker module does not load/);
  });

  it("stops idle workers", async () => {
    const workers = pool(2, 50);
    await Promise.all([1, 2].map((value) => workers.run("echo", { value }, "x")));
    expect(workers.workers).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(workers.workers).toBe(0);
    expect(await workers.run<{ value: number }>("echo", { value: 3 }, "again")).toMatchObject({ value: 3 });
  });
});

describe("eachInOrder and inOrder", () => {
  const later = <T>(value: T, ms: number): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

  it("consume results in job order, with at most `limit` started ahead", async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    const jobs = [30, 5, 20, 1, 10, 2].map((ms, i) => async () => {
      running++;
      most = Math.max(most, running);
      const value = await later(i, ms);
      running--;
      return value;
    });
    await eachInOrder(jobs, 2, (value, i) => {
      expect(value).toBe(i);
      seen.push(value);
    });
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBeLessThanOrEqual(2);
    expect(await inOrder(jobs, 3)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("throw the first failure in job order, start nothing after it, and wait for the jobs already started", async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const jobs = [0, 1, 2, 3, 4, 5].map((i) => async () => {
      started.push(i);
      await later(null, i === 1 ? 30 : 5);
      settled.push(i);
      if (i === 1 || i === 2) throw new Error(`job ${i} failed`);
      return i;
    });
    await expect(eachInOrder(jobs, 3, () => {})).rejects.toThrow("job 1 failed");
    expect(started).toEqual([0, 1, 2, 3]);
    expect(settled.sort()).toEqual([0, 1, 2, 3]);
  });

  it("inOrder: the first failure, thrown only once every job already started has ended (none still writing when the caller cleans up)", async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const jobs = [0, 1, 2, 3, 4].map((i) => async () => {
      started.push(i);
      await later(null, i === 0 ? 5 : 40);
      settled.push(i);
      if (i === 0) throw new Error("job 0 failed");
      return i;
    });
    await expect(inOrder(jobs, 3)).rejects.toThrow("job 0 failed");
    expect(started).toEqual([0, 1, 2]);
    expect(settled.sort()).toEqual([0, 1, 2]);
  });
});
