import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { formatInstant } from "../../src/time/instant.ts";
import { addDuration, parseIsoDuration } from "../../src/time/isoDuration.ts";
import { expandTimeDimension, parseTimeDimension, timesForLayer, type TimeWindow } from "../../src/time/wmsTimeDimension.ts";

const at = (text: string) => Date.parse(text);
const everything: TimeWindow = { startMs: at("1900-01-01T00:00:00Z"), endMs: at("2100-01-01T00:00:00Z") };

function times(text: string, window = everything, maxSteps = 10_000): string[] {
  const result = timesForLayer(text, window, maxSteps);
  if ("errors" in result) throw new Error(result.errors.join("\n"));
  return result.times;
}

function errors(text: string, window = everything, maxSteps = 10_000): string[] {
  const result = timesForLayer(text, window, maxSteps);
  return "errors" in result ? result.errors : [];
}

describe("parseTimeDimension", () => {
  it("reads instants and periods", () => {
    expect(parseTimeDimension("2015-07-01T12:00:00Z, 2015-07-01T00:00:00Z/2015-07-02T00:00:00Z/PT6H")).toEqual({
      values: [
        { kind: "instant", ms: at("2015-07-01T12:00:00Z") },
        { kind: "period", startMs: at("2015-07-01T00:00:00Z"), endMs: at("2015-07-02T00:00:00Z"), period: parseIsoDuration("PT6H") },
      ],
    });
  });

  it("reads dates as midnight UTC, and reduced precision as the start of the month or year", () => {
    expect(parseTimeDimension("1995-01-01,2001-03,2002")).toEqual({
      values: [
        { kind: "instant", ms: at("1995-01-01T00:00:00Z") },
        { kind: "instant", ms: at("2001-03-01T00:00:00Z") },
        { kind: "instant", ms: at("2002-01-01T00:00:00Z") },
      ],
    });
  });

  it("reads instants without seconds, with fractions and with zones", () => {
    expect(times("2024-05-01T12:00Z,2024-05-01T13:00:00.250Z,2024-05-01T16:00:00+02:00,2024-05-01T09:30-02:30")).toEqual([
      "2024-05-01T12:00:00Z",
      "2024-05-01T13:00:00Z",
      "2024-05-01T14:00:00Z",
    ]);
  });

  it("tolerates whitespace and newlines around items", () => {
    expect(times("\n   2024-05-01T00:00:00Z ,\n\t2024-05-01T06:00:00Z\n  ,  2024-05-01T00:00:00Z / 2024-05-01T01:00:00Z / PT1H \n")).toEqual([
      "2024-05-01T00:00:00Z",
      "2024-05-01T01:00:00Z",
      "2024-05-01T06:00:00Z",
    ]);
  });

  it("names every bad item and says what is expected", () => {
    const found = errors("2024-05-01T00:00:00Z,yesterday,2024-05-32T00:00:00Z,2024-05-01T00:00:00,2024-05-01T00:00:00Z/2024-05-02T00:00:00Z");
    expect(found).toHaveLength(4);
    expect(found[0]).toMatch(/^"yesterday" is not an instant such as 2024-05-01T12:00:00Z/);
    expect(found[1]).toMatch(/^"2024-05-32T00:00:00Z" is not an instant/);
    expect(found[2]).toMatch(/^"2024-05-01T00:00:00" is not an instant/);
    expect(found[3]).toBe(
      '"2024-05-01T00:00:00Z/2024-05-02T00:00:00Z" is a range without a period; expected start/end/period such as 2024-05-01T00:00:00Z/2024-05-02T00:00:00Z/PT1H',
    );
  });

  it("names the bad part of a period", () => {
    expect(errors("2024-05-01/2024-05-02/1H")).toEqual(['"2024-05-01/2024-05-02/1H": period "1H" is not an ISO 8601 duration PnYnMnWnDTnHnMnS, e.g. PT1H or P1D']);
    expect(errors("2024-05-01/tomorrow/PT1H")[0]).toMatch(/^"2024-05-01\/tomorrow\/PT1H": end "tomorrow" is not an instant/);
    expect(errors("now/2024-05-02/PT1H")[0]).toMatch(/^"now\/2024-05-02\/PT1H": start "now" is not an instant/);
    expect(errors("2024-05-01/2024-05-02/PT1H/PT2H")[0]).toMatch(/^"2024-05-01\/2024-05-02\/PT1H\/PT2H" has 4 parts/);
  });

  it("refuses a period that ends before it starts, or does not advance", () => {
    expect(errors("2024-05-02T00:00:00Z/2024-05-01T00:00:00Z/PT1H")).toEqual(['"2024-05-02T00:00:00Z/2024-05-01T00:00:00Z/PT1H": end is before start; expected start <= end']);
    expect(errors("2024-05-01/2024-05-02/PT0S")).toEqual(['"2024-05-01/2024-05-02/PT0S": period "PT0S" is zero; expected a positive period such as PT1H']);
    expect(errors("2024-05-01/2024-05-02/P0Y0M")[0]).toMatch(/is zero/);
  });

  it("refuses empty texts and empty items", () => {
    expect(errors("  \n ")[0]).toMatch(/^the time dimension is empty/);
    expect(errors("2024-05-01T00:00:00Z,,2024-05-01T06:00:00Z")[0]).toMatch(/^empty item/);
    expect(errors("2024-05-01T00:00:00Z,")[0]).toMatch(/^empty item/);
  });
});

describe("expandTimeDimension", () => {
  it("expands a period with both ends included", () => {
    expect(times("2015-07-01T00:00:00Z/2015-07-01T02:00:00Z/PT1H")).toEqual(["2015-07-01T00:00:00Z", "2015-07-01T01:00:00Z", "2015-07-01T02:00:00Z"]);
  });

  it("clips the real MapServer period (PT5M since 1995) to a 6-hour window without walking from 1995", () => {
    const window = { startMs: at("2006-06-23T03:00:00Z"), endMs: at("2006-06-23T09:00:00Z") };
    const started = performance.now();
    const found = times("1995-01-01/2015-12-31/PT5M", window, 1000);
    expect(performance.now() - started).toBeLessThan(100);
    expect(found).toHaveLength(73);
    expect(found[0]).toBe("2006-06-23T03:00:00Z");
    expect(found[1]).toBe("2006-06-23T03:05:00Z");
    expect(found.at(-1)).toBe("2006-06-23T09:00:00Z");
  });

  it("clips a period of 2.8e11 one-second steps in no time", () => {
    const found = times("1000-01-01T00:00:00Z/9999-12-31T23:59:59Z/PT1S", { startMs: at("2024-05-01T00:00:00Z"), endMs: at("2024-05-01T06:00:00Z") }, 30_000);
    expect([found.length, found[0], found[1], found.at(-1)]).toEqual([21_601, "2024-05-01T00:00:00Z", "2024-05-01T00:00:01Z", "2024-05-01T06:00:00Z"]);
  });

  it("starts on the period's own grid, not on the window's start", () => {
    const window = { startMs: at("2024-05-01T01:00:00Z"), endMs: at("2024-05-01T08:00:00Z") };
    expect(times("2024-04-30T22:30:00Z/2024-05-02T00:00:00Z/PT3H", window)).toEqual(["2024-05-01T01:30:00Z", "2024-05-01T04:30:00Z", "2024-05-01T07:30:00Z"]);
  });

  it("keeps listed instants outside the window, and clips only periods", () => {
    const window = { startMs: at("2024-05-01T00:00:00Z"), endMs: at("2024-05-01T01:00:00Z") };
    expect(times("2020-01-01T00:00:00Z,2024-04-30T00:00:00Z/2024-05-30T00:00:00Z/PT1H", window)).toEqual([
      "2020-01-01T00:00:00Z",
      "2024-05-01T00:00:00Z",
      "2024-05-01T01:00:00Z",
    ]);
  });

  it("gives nothing for a period entirely outside the window", () => {
    const window = { startMs: at("2030-01-01T00:00:00Z"), endMs: at("2030-01-02T00:00:00Z") };
    expect(times("1995-01-01/2015-12-31/PT5M", window)).toEqual([]);
  });

  it("steps calendar periods from the start, clamping to month ends", () => {
    const window = { startMs: at("2024-01-01T00:00:00Z"), endMs: at("2024-04-30T06:00:00Z") };
    expect(times("2023-01-31T06:00:00Z/2030-01-01T00:00:00Z/P1M", window)).toEqual([
      "2024-01-31T06:00:00Z",
      "2024-02-29T06:00:00Z",
      "2024-03-31T06:00:00Z",
      "2024-04-30T06:00:00Z",
    ]);
  });

  it("sorts and removes duplicates across items", () => {
    expect(times("2024-05-01T06:00:00Z,2024-05-01T00:00:00Z/2024-05-01T06:00:00Z/PT3H,2024-05-01T03:00:00+00:00")).toEqual([
      "2024-05-01T00:00:00Z",
      "2024-05-01T03:00:00Z",
      "2024-05-01T06:00:00Z",
    ]);
  });

  it("refuses more than maxSteps, saying how many and what to do", () => {
    const window = { startMs: at("2006-06-23T00:00:00Z"), endMs: at("2006-06-30T00:00:00Z") };
    const found = errors("1995-01-01/2015-12-31/PT5M", window, 500);
    expect(found).toEqual([
      "the time dimension gives 2017 steps between 2006-06-23T00:00:00Z and 2006-06-30T00:00:00Z, more than the 500 allowed; use a shorter forecast window or a longer period",
    ]);
    expect(errors("2024-05-01T00:00:00Z,2024-05-01T01:00:00Z,2024-05-01T02:00:00Z", everything, 2)[0]).toMatch(/gives 3 steps/);
    expect(times("2024-05-01T00:00:00Z,2024-05-01T01:00:00Z", everything, 2)).toHaveLength(2);
  });

  it("round-trips a formatted list of instants (property)", () => {
    const instant = fc.integer({ min: at("1970-01-01T00:00:00Z") / 1000, max: at("2099-12-31T23:59:59Z") / 1000 }).map((s) => formatInstant(s * 1000));
    const separator = fc.constantFrom(",", " ,", ", ", "\n,\n  ", "\t,");
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 40 }), separator, (list, sep) => {
        const window = { startMs: at("2050-01-01T00:00:00Z"), endMs: at("2050-01-02T00:00:00Z") };
        expect(times(list.join(sep), window)).toEqual([...new Set(list)].sort());
      }),
    );
  });

  // Hour-aligned bounds so that steps often fall exactly on a window or period end.
  function matchesBruteForce(periodText: string, startH: number, lengthH: number, winStartH: number, winLengthH: number): void {
    const hour = 3_600_000;
    const base = at("2000-01-01T00:00:00Z");
    const period = parseIsoDuration(periodText)!;
    const [startMs, endMs] = [base + startH * hour, base + (startH + lengthH) * hour];
    const window = { startMs: base + winStartH * hour, endMs: base + (winStartH + winLengthH) * hour };
    const expected: string[] = [];
    for (let k = 0; addDuration(startMs, period, k) <= endMs; k++) {
      const step = addDuration(startMs, period, k);
      if (step >= window.startMs && step <= window.endMs) expected.push(formatInstant(step));
    }
    expect(expandTimeDimension([{ kind: "period", startMs, endMs, period }], window, 1_000_000)).toEqual({ times: expected });
  }

  it("gives exactly the steps a brute-force walk finds, for fixed periods (property)", () => {
    const periods = fc.constantFrom("PT20M", "PT1H", "PT90M", "PT6H", "P1D", "P1W", "P1DT2H", "PT7M30S");
    fc.assert(fc.property(periods, fc.nat(3000), fc.nat(2000), fc.nat(5000), fc.nat(1000), matchesBruteForce), { numRuns: 300 });
  });

  it("gives exactly the steps a brute-force walk finds, for calendar periods over decades (property)", () => {
    const periods = fc.constantFrom("P1M", "P2M", "P1Y", "P1M1D", "P1Y2M", "P1MT6H", "P3M");
    const years = (n: number) => n * 366 * 24;
    fc.assert(fc.property(periods, fc.nat(years(30)), fc.nat(years(60)), fc.nat(years(60)), fc.nat(years(2)), matchesBruteForce), { numRuns: 300 });
  });
});
