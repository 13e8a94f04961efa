/**
 * The code table (src/formats/concentrationCodes.ts) is built with integer arithmetic for speed; it must be,
 * bit for bit, the table its definition gives: each code's exact value rounded to 6 significant digits by
 * toPrecision, stepped up one unit of the sixth digit when that fell below it.
 */
import { describe, expect, it } from "vitest";
import { CODE_RATIO, CODE_VALUES, MAX_CODED_MG_M3, MIN_CODED_MG_M3, MISSING_CODE } from "../../src/formats/concentrationCodes.ts";

function byDefinition(code: number): number {
  const exact = MIN_CODED_MG_M3 * Math.exp((code - 1) * Math.log(CODE_RATIO));
  let rounded = Number(exact.toPrecision(6));
  if (rounded < exact) rounded = Number((rounded + 10 ** (Math.floor(Math.log10(exact)) - 5)).toPrecision(6));
  return rounded;
}

describe("the concentration code table", () => {
  it("holds every code's value as toPrecision(6), rounded up, gives it", () => {
    const differing: string[] = [];
    for (let code = 1; code < MISSING_CODE; code++) {
      const expected = byDefinition(code);
      if (!Object.is(CODE_VALUES[code], expected)) differing.push(`${code}: ${CODE_VALUES[code]} against ${expected}`);
    }
    expect(differing.slice(0, 10), `${differing.length} codes differ`).toEqual([]);
    expect(CODE_VALUES[0]).toBe(0);
    expect(CODE_VALUES[MISSING_CODE]).toBeNaN();
    expect(MAX_CODED_MG_M3).toBe(byDefinition(MISSING_CODE - 1));
    // The scale's first codes: 0.001 · 1.001^k, rounded up at the sixth digit (0.001002001 → 0.00100201).
    expect([...CODE_VALUES.subarray(1, 4)]).toEqual([0.001, 0.001001, 0.00100201]);
  });
});
