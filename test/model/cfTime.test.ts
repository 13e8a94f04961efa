import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cfTimeProblem, cfTimeToMs, parseCfTimeUnits } from "../../src/model/cfTime.ts";
import { formatInstant } from "../../src/time/instant.ts";

const instant = (units: string, value: number) => formatInstant(cfTimeToMs(value, parseCfTimeUnits(units)!));

describe("parseCfTimeUnits", () => {
  it("reads every unit and origin spelling real files use", () => {
    expect(instant("days since 2019-03-22 00:00:00", 0.5)).toBe("2019-03-22T12:00:00Z");
    expect(instant("days since 2019-03-22", 1)).toBe("2019-03-23T00:00:00Z");
    expect(instant("day since 1900-1-1 0:0:0", 43_544.5)).toBe("2019-03-22T12:00:00Z"); // EMEP style
    expect(instant("hours since 2016-11-03 00:00:00", 6)).toBe("2016-11-03T06:00:00Z");
    expect(instant("hours since 2016-11-03T06:00:00Z", 1.5)).toBe("2016-11-03T07:30:00Z");
    expect(instant("minutes since 2016-11-03 06:00", 90)).toBe("2016-11-03T07:30:00Z");
    expect(instant("seconds since 1970-01-01 00:00:00.0", 1_553_256_000)).toBe("2019-03-22T12:00:00Z");
    expect(instant("secs since 1970-01-01 00:00:00 UTC", 60)).toBe("1970-01-01T00:01:00Z");
    expect(instant("Hours Since 2019-03-22 12:00:00", 2)).toBe("2019-03-22T14:00:00Z");
  });

  it("reads a zone as the origin's local offset", () => {
    expect(instant("hours since 2019-03-22 12:00:00 +01:00", 0)).toBe("2019-03-22T11:00:00Z");
    expect(instant("hours since 2019-03-22 12:00:00 -0600", 0)).toBe("2019-03-22T18:00:00Z");
    expect(instant("hours since 2019-03-22 12:00:00 +2", 0)).toBe("2019-03-22T10:00:00Z");
    expect(instant("hours since 2019-03-22 12:00:00 Z", 0)).toBe("2019-03-22T12:00:00Z");
  });

  it("keeps EEMEP half-hour means at the half hour, rounding to whole seconds", () => {
    // 1/48 day is 1799999.99... ms in floating point: truncating would say 00:29:59.
    expect(instant("days since 2019-03-22 00:00:00", 1 / 48)).toBe("2019-03-22T00:30:00Z");
    expect(instant("days since 2019-03-22 00:00:00", Math.fround(1 / 48))).toBe("2019-03-22T00:30:00Z");
    expect(instant("days since 2019-03-22 00:00:00", 0.541666666666667)).toBe("2019-03-22T13:00:00Z");
    expect(instant("seconds since 2019-03-22 00:00:00", 0.4)).toBe("2019-03-22T00:00:00Z");
    expect(instant("seconds since 2019-03-22 00:00:00", 0.6)).toBe("2019-03-22T00:00:01Z");
  });

  it("round-trips any whole second through every unit", () => {
    const units = [
      ["days", 86_400],
      ["hours", 3_600],
      ["minutes", 60],
      ["seconds", 1],
    ] as const;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 * 365 * 86_400 }), fc.constantFrom(...units), (seconds, [unit, perUnit]) => {
        const axis = parseCfTimeUnits(`${unit} since 1900-01-01 00:00:00`)!;
        expect(cfTimeToMs(seconds / perUnit, axis)).toBe(Date.UTC(1900, 0, 1) + seconds * 1000);
      }),
    );
  });

  it("refuses what is not a CF time", () => {
    for (const units of ["hours", "ug/m3", "hours after 2019-03-22", "weeks since 2019-03-22", "hours since 2019-02-30", "hours since 2019-13-01", "days since yesterday", ""]) {
      expect(parseCfTimeUnits(units), units).toBeUndefined();
    }
  });
});

describe("cfTimeProblem", () => {
  it("accepts the Gregorian calendars and none", () => {
    for (const calendar of [undefined, "standard", "gregorian", "proleptic_gregorian", "Gregorian"]) {
      expect(cfTimeProblem("hours since 2019-03-22", calendar)).toBeUndefined();
    }
  });

  it("names time:calendar for any other calendar", () => {
    for (const calendar of ["noleap", "365_day", "360_day", "julian", "all_leap", "none"]) {
      const problem = cfTimeProblem("hours since 2019-03-22", calendar);
      expect(problem?.problem).toBe("calendar");
      expect(problem?.message).toContain(`time:calendar is "${calendar}"`);
      expect(problem?.fix).toMatch(/Gregorian/);
    }
    expect(cfTimeProblem("hours since 2019-03-22", "noleap", "t")?.message).toContain("t:calendar");
  });

  it("names time:units when they are missing or unreadable", () => {
    expect(cfTimeProblem(undefined, undefined)?.message).toBe("time has no units attribute");
    expect(cfTimeProblem("hours", undefined)?.message).toContain('time:units is "hours"');
  });

  it("refuses an origin before the Gregorian reform in the mixed calendar, not in the proleptic one", () => {
    expect(cfTimeProblem("days since 0001-01-01", undefined)?.problem).toBe("origin-before-reform");
    expect(cfTimeProblem("days since 0001-01-01", "standard")?.problem).toBe("origin-before-reform");
    expect(cfTimeProblem("days since 0001-01-01", "proleptic_gregorian")).toBeUndefined();
    expect(cfTimeProblem("days since 1582-10-15", "gregorian")).toBeUndefined();
  });
});
