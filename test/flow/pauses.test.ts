import { describe, expect, it } from "vitest";
import { pauseEvery } from "../../src/flow/pauses.ts";

/** Keeps this thread busy for at least `ms` (what the build's text rendering does between pauses). */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("pauseEvery", () => {
  it("goes on without pausing within its budget, and once the budget is spent lets waiting callbacks run before it resumes", async () => {
    const pause = pauseEvery(1_000);
    expect(pause()).toBeUndefined(); // just made: nothing spent yet

    const shortPause = pauseEvery(2);
    busyFor(5);
    let replyRead = false;
    setImmediate(() => (replyRead = true)); // as a worker's reply waits for this thread
    const waiting = shortPause();
    expect(waiting).toBeInstanceOf(Promise);
    expect(replyRead).toBe(false);
    await waiting;
    expect(replyRead).toBe(true);
    // The budget starts again after a pause.
    const fresh = pauseEvery(1_000);
    busyFor(1);
    expect(fresh()).toBeUndefined();
  });

  it("refuses a budget that is not positive", () => {
    expect(() => pauseEvery(0)).toThrow(/positive budget/);
    expect(() => pauseEvery(Number.NaN)).toThrow(/positive budget/);
  });
});
