import { describe, expect, it } from "vitest";
import { fewAtATime, oneAtATime } from "../../src/flow/oneAtATime.ts";

describe("oneAtATime", () => {
  it("runs tasks one after the other, in order, and a failure neither stops the queue nor is swallowed", async () => {
    const inTurn = oneAtATime();
    const events: string[] = [];
    let running = 0;
    const task = (name: string, fail = false) => async () => {
      running++;
      expect(running).toBe(1);
      events.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`end ${name}`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([inTurn(task("a")), inTurn(task("b", true)), inTurn(task("c"))]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual(["a", "b", "c"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });

  it("fewAtATime runs at most its limit at once, starting tasks in the order given, and a failure frees its place", async () => {
    const inTurn = fewAtATime(2);
    const started: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string, ms: number, fail = false) => async () => {
      started.push(name);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([inTurn(task("a", 20)), inTurn(task("b", 5, true)), inTurn(task("c", 5)), inTurn(task("d", 5)), inTurn(task("e", 5))]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual(["a", "b", "c", "d", "e"]);
    expect(results[1]!.status).toBe("rejected");
    expect(most).toBe(2);
    expect(started).toEqual(["a", "b", "c", "d", "e"]);
    expect(() => fewAtATime(0)).toThrow(/whole number from 1/);
  });
});
