import { describe, expect, it } from "vitest";
import { gridShareText, noValueNote, noValueText } from "../../src/contract/missingValues.ts";

describe("what every output says of cells without a value", () => {
  it("a share of the grid, rounded up so that an unknown area never looks smaller", () => {
    expect(gridShareText(0.25)).toBe("25 %");
    expect(gridShareText(1 / 12)).toBe("8.4 %");
    expect(gridShareText(0.032)).toBe("3.2 %");
    expect(gridShareText(0.0321)).toBe("3.3 %");
    expect(gridShareText(0.001)).toBe("0.1 %");
    expect(gridShareText(0.0009)).toBe("less than 0.1 %");
    expect(gridShareText(1 / 400_000)).toBe("less than 0.1 %");
    expect(gridShareText(0.0999)).toBe("10 %");
    expect(gridShareText(0.12345)).toBe("13 %");
    expect(gridShareText(0.9999)).toBe("99 %");
  });

  it("refuses a share that is no part of the grid, as a bug", () => {
    for (const share of [0, 1, -0.1, Number.NaN]) expect(() => gridShareText(share)).toThrow(/^Internal error: a share of the grid/);
  });

  it("in words, for one step and over a run", () => {
    expect(noValueText(0.25)).toBe("No model value in 25 % of the grid");
    expect(noValueText(0.25, true)).toBe("No model value in up to 25 % of the grid at some times");
    expect(noValueText(0.0005)).toBe("No model value in less than 0.1 % of the grid");
    expect(noValueText(0.0005, true)).toBe("No model value in less than 0.1 % of the grid at some times");
    expect(noValueNote(1 / 12)).toBe("No model value in 8.4 % of the grid: no ash area is drawn there.");
  });
});
