/** The waits before a worker of `serve --workers` is replaced: exact values of the pure policy. */
import { describe, expect, it } from "vitest";
import { RESTART, restartBackoff, seconds } from "../../src/cli/restartBackoff.ts";

const atStart = { listened: false, livedMs: 300 };

describe("restartBackoff", () => {
  it("doubles the wait for each stop at start in a row, up to the ceiling, and calls the fifth a crash loop", () => {
    const slot = restartBackoff();
    const waits = Array.from({ length: 12 }, () => slot.stopped(atStart));
    expect(waits.map((w) => w.delayMs)).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
    expect(waits.map((w) => w.crashLoop)).toEqual([false, false, false, false, true, true, true, true, true, true, true, true]);
    expect(waits.at(-1)!.inRow).toBe(12);
  });

  it("counts a worker that listened and stopped soon after as a stop at start, one that served a while not", () => {
    const slot = restartBackoff();
    expect(slot.stopped({ listened: true, livedMs: RESTART.quickMs - 1 })).toEqual({ delayMs: 100, inRow: 1, crashLoop: false });
    expect(slot.stopped({ listened: true, livedMs: RESTART.quickMs - 1 })).toEqual({ delayMs: 200, inRow: 2, crashLoop: false });
    // It had served: replaced at once, and the count starts again.
    expect(slot.stopped({ listened: true, livedMs: RESTART.quickMs })).toEqual({ delayMs: 0, inRow: 0, crashLoop: false });
    expect(slot.stopped(atStart).delayMs).toBe(100);
  });

  it("a worker that never listened failed at start however long it took", () => {
    expect(restartBackoff().stopped({ listened: false, livedMs: 60_000 })).toEqual({ delayMs: 100, inRow: 1, crashLoop: false });
  });

  it("a worker that has served a while ends the count, and says whether that ended a crash loop", () => {
    const slot = restartBackoff();
    slot.stopped(atStart);
    expect(slot.served()).toBe(false);
    expect(slot.stopped(atStart).delayMs).toBe(100);
    for (let i = 0; i < 4; i++) slot.stopped(atStart);
    expect(slot.served()).toBe(true);
    expect(slot.stopped(atStart)).toEqual({ delayMs: 100, inRow: 1, crashLoop: false });
  });

  it("slots count apart", () => {
    const [a, b] = [restartBackoff(), restartBackoff()];
    for (let i = 0; i < 4; i++) a.stopped(atStart);
    expect(b.stopped(atStart).delayMs).toBe(100);
    expect(a.stopped(atStart).crashLoop).toBe(true);
  });

  it("says the waits in seconds as the log shows them", () => {
    expect([100, 1600, 30_000, 10_000].map(seconds)).toEqual(["0.1 s", "1.6 s", "30 s", "10 s"]);
  });
});
