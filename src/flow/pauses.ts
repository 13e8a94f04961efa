/**
 * Pauses in long synchronous work on a thread that also feeds worker threads. The build's main thread
 * writes the KML and GeoJSON of a run (about a second of CPU for a full-size run) while its workers draw
 * the maps; a worker is handed a new task only when this thread reads its reply (it holds one more at
 * most: src/flow/workerPool.ts), so without pauses both workers sat idle until the text was done.
 */

/** Resolves after a turn of the event loop: the callbacks waiting (I/O, native memory Node frees) run first. */
export function eventLoopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A function to call between pieces of work: it returns a promise (to await) that lets other callbacks
 * run once `budgetMs` of work has passed since the last pause, and undefined until then.
 */
export function pauseEvery(budgetMs: number): () => Promise<void> | undefined {
  if (!(budgetMs > 0)) throw new RangeError(`Internal error: pauseEvery needs a positive budget, got ${budgetMs}`);
  let since = performance.now();
  const resume = (resolve: () => void): void => {
    since = performance.now();
    resolve();
  };
  return () => (performance.now() - since < budgetMs ? undefined : new Promise<void>((resolve) => setImmediate(resume, resolve)));
}
