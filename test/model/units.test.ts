import { describe, expect, it } from "vitest";
import { concentrationToMgPerM3 } from "../../src/model/units.ts";

describe("concentrationToMgPerM3", () => {
  it("knows the spellings real files use", () => {
    const table: Array<[string, number]> = [
      ["ug/m3", 1e-3],
      ["ug m-3", 1e-3],
      ["ug/m^3", 1e-3],
      ["ug/m**3", 1e-3],
      ["ug.m-3", 1e-3],
      ["\u00b5g/m\u00b3", 1e-3], // micro sign
      ["\u03bcg/m3", 1e-3], // Greek mu
      ["\u03bcg m\u207b\u00b3", 1e-3],
      ["microgram/m3", 1e-3],
      ["micrograms/m3", 1e-3],
      ["microgram m-3", 1e-3],
      [" ug/m3 ", 1e-3],
      ["mg/m3", 1],
      ["mg m-3", 1],
      ["milligram/m3", 1],
      ["g/m3", 1e3],
      ["g m-3", 1e3],
      ["kg/m3", 1e6],
      ["kg m-3", 1e6],
      ["ng/m3", 1e-6],
      ["ng m-3", 1e-6],
      ["nanograms/m3", 1e-6],
    ];
    for (const [units, factor] of table) expect(concentrationToMgPerM3(units), units).toBe(factor);
  });

  it("guesses nothing else", () => {
    for (const units of ["", "ppm", "ug", "ug/m2", "ug/kg", "Mg/m3", "UG/M3", "mg/l", "ug/m3 air", "1", "kg/m2", "ugm3", "ug/m-3"]) {
      expect(concentrationToMgPerM3(units), units).toBeUndefined();
    }
  });

  it("converts a known value exactly as the reader does", () => {
    // 2000 ug/m3 is the 2 mg/m3 threshold.
    expect(Math.fround(2000 * concentrationToMgPerM3("ug/m3")!)).toBe(Math.fround(2));
  });
});
