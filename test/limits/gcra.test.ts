/**
 * The throttle's arithmetic and its memory bound (security.md, Throttling: "GCRA or token bucket; state
 * bounded in memory (evict idle keys)"). A fake clock: no timing anywhere.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore, rateOf } from "../../src/server/limits/gcra.ts";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("GCRA in memory", () => {
  it("allows a burst at once, then one request per interval, and says how long to wait", () => {
    const time = clock();
    const store = new MemoryStore({ maxKeys: 1000, now: time.now });
    const rate = rateOf({ ratePerSecond: 2, burst: 3 }); // 500 ms apart
    expect([store.take("a", rate), store.take("a", rate), store.take("a", rate)]).toEqual([0, 0, 0]);
    expect(store.take("a", rate)).toBe(500);
    time.advance(499);
    expect(store.take("a", rate)).toBe(1);
    time.advance(1);
    expect(store.take("a", rate)).toBe(0);
    expect(store.take("a", rate)).toBe(500);
    // Another client has its own allowance.
    expect(store.take("b", rate)).toBe(0);
  });

  it("never counts a refused request: a client that keeps hammering is let through at the rate, not starved", () => {
    const time = clock();
    const store = new MemoryStore({ maxKeys: 1000, now: time.now });
    const rate = rateOf({ ratePerSecond: 10, burst: 1 });
    let allowed = 0;
    // 1,000 attempts a millisecond apart: one second at 10 per second, plus the burst.
    for (let i = 0; i < 1000; i++, time.advance(1)) if (store.take("abuser", rate) === 0) allowed++;
    expect(allowed).toBe(10);
  });

  it("refills completely after burst × interval of quiet", () => {
    const time = clock();
    const store = new MemoryStore({ maxKeys: 1000, now: time.now });
    const rate = rateOf({ ratePerSecond: 5, burst: 4 });
    for (let i = 0; i < 4; i++) expect(store.take("k", rate)).toBe(0);
    expect(store.take("k", rate)).toBeGreaterThan(0);
    time.advance(800);
    for (let i = 0; i < 4; i++) expect(store.take("k", rate)).toBe(0);
    expect(store.take("k", rate)).toBeGreaterThan(0);
  });

  it("holds at most maxKeys keys under a flood of 1,000,000 distinct clients", () => {
    const time = clock();
    const store = new MemoryStore({ maxKeys: 10_000, now: time.now });
    const rate = rateOf({ ratePerSecond: 1, burst: 5 });
    for (let i = 0; i < 1_000_000; i++) {
      store.take(`data\n10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}\nflood/${i}`, rate);
      if (i % 1000 === 0) time.advance(1);
    }
    expect(store.size).toBeLessThanOrEqual(10_000);
    expect(store.size).toBeGreaterThanOrEqual(5_000);
  });

  it("keeps the state of a client that keeps coming while a flood of new keys passes through", () => {
    const time = clock();
    const store = new MemoryStore({ maxKeys: 1000, now: time.now });
    const slow = rateOf({ ratePerSecond: 1, burst: 2 });
    const fast = rateOf({ ratePerSecond: 1000, burst: 1 });
    store.take("abuser", slow);
    store.take("abuser", slow);
    // 100,000 one-off clients, a hundred at a time between two refused requests of the abuser.
    for (let i = 0; i < 100_000; i++) {
      store.take(`flood-${i}`, fast);
      if (i % 100 === 0) expect(store.take("abuser", slow)).toBeGreaterThan(0);
    }
    expect(store.size).toBeLessThanOrEqual(1000);
  });
});
