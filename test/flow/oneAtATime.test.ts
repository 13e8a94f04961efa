import { describe, expect, it } from "vitest";
import { oneAtATime } from "../../src/flow/oneAtATime.ts";

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
});
