/**
 * Queues of tasks: each task given to the returned function starts, in the order given, once fewer than
 * `limit` of the tasks given before it are still running, whether those succeed or fail. One at a time for
 * writes that must not interleave and work that must not pile up; a few at a time for work that holds
 * memory while it runs (the build's text compression).
 */
export function fewAtATime(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Internal error: fewAtATime needs a whole number from 1, got ${limit}`);
  let running = 0;
  const waiting: Array<() => void> = [];
  // A task that ends hands its place to the next one waiting (the count stays), or frees it.
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return (task) =>
    new Promise<void>((start) => {
      if (running < limit) {
        running++;
        start();
      } else waiting.push(start);
    })
      .then(task)
      .finally(release);
}

/** A queue of one (fewAtATime(1)). */
export const oneAtATime = (): (<T>(task: () => Promise<T>) => Promise<T>) => fewAtATime(1);
