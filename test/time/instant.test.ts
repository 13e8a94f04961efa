import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactInstant, formatInstant, normaliseInstant, parseInstant } from "../../src/time/instant.ts";

describe("instants", () => {
  it("normalises every spelling of one instant to YYYY-MM-DDTHH:MM:SSZ", () => {
    const spellings = [
      "2019-03-22T21:00:00Z",
      "2019-03-22T21:00Z",
      "2019-03-22 21:00:00Z",
      "2019-03-22T21:00:00.000Z",
      "2019-03-22T22:00:00+01:00",
      "2019-03-22T22:00:00+0100",
      "2019-03-22T16:30:00-04:30",
      "2019-03-22t21:00:00z",
      "20190322T210000Z",
    ];
    for (const text of spellings) expect(normaliseInstant(text), text).toBe("2019-03-22T21:00:00Z");
  });

  it("refuses text that is not an instant with a zone, and impossible dates", () => {
    for (const text of ["", "2019-03-22", "2019-03-22T21:00:00", "20190322T210000", "2019-02-29T00:00:00Z", "2019-13-01T00:00:00Z", "2019-03-22T24:00:00Z", "2019-03-22T21:60:00Z", "yesterday", "2019-03-22T21:00:00Z trailing", "2019-03-22T21:00:00+99:99", "2019-03-22T21:00:00+24:00", "2019-03-22T21:00:00-01:60"]) {
      expect(parseInstant(text), text).toBeUndefined();
    }
    expect(parseInstant("2020-02-29T00:00:00Z")).toBe(Date.UTC(2020, 1, 29));
    expect(parseInstant("2020-02-29T00:00:00-23:59")).toBe(Date.UTC(2020, 1, 29, 23, 59));
  });

  it("keeps years below 100 as written (Date.UTC would read them as 19xx)", () => {
    expect(normaliseInstant("0042-01-01T00:00:00Z")).toBe("0042-01-01T00:00:00Z");
  });

  it("drops fractions of a second and compacts for file names", () => {
    expect(formatInstant(Date.UTC(2024, 4, 1, 12, 0, 0, 999))).toBe("2024-05-01T12:00:00Z");
    expect(compactInstant("2024-05-01T12:00:00Z")).toBe("20240501T120000Z");
  });

  it("round-trips any second of 1900-2200 (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1900, 0, 1) / 1000, max: Date.UTC(2200, 0, 1) / 1000 }), (seconds) => {
        const text = formatInstant(seconds * 1000);
        expect(parseInstant(text)).toBe(seconds * 1000);
        expect(normaliseInstant(text)).toBe(text);
      }),
    );
  });
});
