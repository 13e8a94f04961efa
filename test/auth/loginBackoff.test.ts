/** Per-account login backoff: exact delays on an injected clock. */
import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, LoginBackoff } from "../../src/auth/loginBackoff.ts";

const T0 = 1_000_000;

describe("LoginBackoff", () => {
  it("lets the first failures through, then doubles the wait up to the cap", () => {
    const backoff = new LoginBackoff();
    const waits: number[] = [];
    let now = T0;
    for (let i = 0; i < 14; i++) {
      backoff.failed("alice", now);
      waits.push(backoff.waitMs("alice", now));
      now += backoff.waitMs("alice", now); // the client waits as told
    }
    expect(waits).toEqual([0, 0, 0, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
  });

  it("counts down, is per account, and ends with a success", () => {
    const backoff = new LoginBackoff();
    for (let i = 0; i < 5; i++) backoff.failed("alice", T0);
    expect(backoff.waitMs("alice", T0)).toBe(2_000);
    expect(backoff.waitMs("alice", T0 + 1_500)).toBe(500);
    expect(backoff.waitMs("alice", T0 + 2_000)).toBe(0);
    expect(backoff.waitMs("bob", T0)).toBe(0);
    backoff.succeeded("alice");
    expect(backoff.waitMs("alice", T0)).toBe(0);
    backoff.failed("alice", T0);
    expect(backoff.waitMs("alice", T0)).toBe(0); // counting starts again
  });

  it("forgets an account after a quiet period, so nobody is locked out for good", () => {
    const backoff = new LoginBackoff();
    for (let i = 0; i < 20; i++) backoff.failed("alice", T0);
    expect(backoff.waitMs("alice", T0)).toBe(DEFAULT_BACKOFF.maxDelayMs);
    expect(backoff.waitMs("alice", T0 + DEFAULT_BACKOFF.forgetAfterMs - 1)).toBe(0); // the capped wait is over
    backoff.failed("alice", T0 + DEFAULT_BACKOFF.forgetAfterMs - 1);
    expect(backoff.waitMs("alice", T0 + DEFAULT_BACKOFF.forgetAfterMs)).toBe(DEFAULT_BACKOFF.maxDelayMs - 1); // still counted
    expect(backoff.waitMs("alice", T0 + 2 * DEFAULT_BACKOFF.forgetAfterMs)).toBe(0);
    expect(backoff.size).toBe(0);
  });

  it("remembers at most maxAccounts, dropping the oldest failures first", () => {
    const backoff = new LoginBackoff({ ...DEFAULT_BACKOFF, freeFailures: 0, maxAccounts: 3 });
    for (const name of ["a", "b", "c", "d"]) backoff.failed(name, T0);
    expect(backoff.size).toBe(3);
    expect(backoff.waitMs("a", T0)).toBe(0);
    expect(backoff.waitMs("d", T0)).toBe(1_000);
    for (let i = 0; i < 100_000; i++) backoff.failed(`flood-${i}`, T0);
    expect(backoff.size).toBe(3);
  });

  it("refuses settings that are not numbers", () => {
    expect(() => new LoginBackoff({ ...DEFAULT_BACKOFF, firstDelayMs: Number.NaN })).toThrow(/Internal error: LoginBackoff setting firstDelayMs/);
    expect(() => new LoginBackoff({ ...DEFAULT_BACKOFF, maxAccounts: 0 })).toThrow(/maxAccounts/);
  });
});
