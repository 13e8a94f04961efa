/**
 * Running asynchronous jobs a few at a time while keeping their order: for work handed to a worker pool,
 * where results must come back (and be merged) in the order a sequential loop would have them.
 */

/**
 * Runs the jobs with at most `limit` started and not yet consumed (and one being consumed), and hands each
 * result to `consume` in job order. A job only starts once the result `limit` places before it is taken,
 * so memory holds at most `limit` + 1 results whatever the number of jobs. When a job fails, no further job starts; the
 * ones already started are waited for, and the first failure in job order is thrown.
 *
 * @example await eachInOrder(steps.map((s) => () => readStep(s)), 4, (field, i) => merge(field, i));
 */
export async function eachInOrder<T>(jobs: ReadonlyArray<() => Promise<T>>, limit: number, consume: (result: T, index: number) => void | Promise<void>): Promise<void> {
  const width = Math.max(1, Math.floor(limit));
  const started: Array<Promise<T>> = [];
  let failed = false;
  const start = (i: number): void => {
    if (i >= jobs.length || failed) return;
    const promise = jobs[i]!();
    promise.catch(() => {}); // awaited below, in order
    started[i] = promise;
  };
  for (let i = 0; i < Math.min(width, jobs.length); i++) start(i);
  try {
    for (let i = 0; i < jobs.length; i++) {
      const result = await started[i]!;
      // The next job starts before this result is merged: workers are not kept waiting by a long merge.
      start(i + width);
      await consume(result, i);
    }
  } catch (error) {
    failed = true;
    await Promise.allSettled(started);
    throw error;
  }
}

/**
 * Runs the jobs with at most `limit` in flight, the next starting as soon as any finishes; results in job
 * order. Rejects with the first failure once the jobs already started have ended; no job starts after it.
 */
export async function inOrder<T>(jobs: ReadonlyArray<() => Promise<T>>, limit: number): Promise<T[]> {
  const results = new Array<T>(jobs.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    try {
      for (let i = next++; i < jobs.length && !failure; i = next++) results[i] = await jobs[i]!();
    } catch (error) {
      failure ??= { error };
    }
  };
  // Every lane ends before the failure is thrown: a job still writing when its caller cleans up after the
  // failure would make again what was removed (a staging directory, after a full disk).
  await Promise.all(Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), jobs.length) }, lane));
  if (failure) throw failure.error;
  return results;
}
