/**
 * The order of run folder names that settles a variant conflict (src/build/publishDecision.ts): numbers in
 * names compared as numbers, so that the tenth correction of a run comes after the ninth.
 */
import { describe, expect, it } from "vitest";
import { compareFolderNames } from "../../src/build/publishDecision.ts";

describe("compareFolderNames", () => {
  it("orders corrections as a forecaster numbers them", () => {
    const names = ["hekla_v10", "hekla_v2", "hekla", "hekla_v9", "hekla_v1", "hekla_v100", "hekla_v11"];
    expect([...names].sort(compareFolderNames)).toEqual(["hekla", "hekla_v1", "hekla_v2", "hekla_v9", "hekla_v10", "hekla_v11", "hekla_v100"]);
  });

  it("compares runs of digits of any length, and dates as they are written", () => {
    expect(compareFolderNames("run-99999999999999999999", "run-100000000000000000000")).toBeLessThan(0);
    expect(compareFolderNames("2024-05-01-hekla", "2024-05-02-hekla")).toBeLessThan(0);
    expect(compareFolderNames("2024-12-01-hekla", "2025-01-01-hekla")).toBeLessThan(0);
    expect(compareFolderNames("hekla-b", "hekla-a")).toBeGreaterThan(0);
    expect(compareFolderNames("hekla_v9", "hekla_v9")).toBe(0);
  });

  it("is a total order: names equal as numbers fall back to their code units", () => {
    expect(compareFolderNames("hekla_v02", "hekla_v2")).toBeLessThan(0);
    expect(compareFolderNames("hekla_v2", "hekla_v02")).toBeGreaterThan(0);
    expect(compareFolderNames("v2a", "v2")).toBeGreaterThan(0);
    expect(compareFolderNames("a1", "a")).toBeGreaterThan(0);
    expect(compareFolderNames("1a", "a1")).toBeLessThan(0);
  });
});
