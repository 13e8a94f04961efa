import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { addDuration, fixedLengthMs, parseIsoDuration } from "../../src/time/isoDuration.ts";

const zero = { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
const utc = (...args: [number, number, number, number?, number?, number?]) => Date.UTC(...args);

describe("parseIsoDuration", () => {
  it("reads every designator", () => {
    expect(parseIsoDuration("P1Y2M3W4DT5H6M7S")).toEqual({ years: 1, months: 2, weeks: 3, days: 4, hours: 5, minutes: 6, seconds: 7 });
    expect(parseIsoDuration("PT5M")).toEqual({ ...zero, minutes: 5 });
    expect(parseIsoDuration("P1M")).toEqual({ ...zero, months: 1 });
    expect(parseIsoDuration(" P1D ")).toEqual({ ...zero, days: 1 });
  });

  it("allows fractional seconds, with . or ,", () => {
    expect(parseIsoDuration("PT0.5S")).toEqual({ ...zero, seconds: 0.5 });
    expect(parseIsoDuration("PT1,25S")).toEqual({ ...zero, seconds: 1.25 });
  });

  it.each(["P", "PT", "P1DT", "-P1D", "P-1D", "PT1.5H", "P1H", "1D", "pt1h", "P1S", "PT1D", "P1DT1H2", "", "garbage", "P1M1Y"])("rejects %j", (text) => {
    expect(parseIsoDuration(text)).toBeUndefined();
  });
});

describe("fixedLengthMs", () => {
  it("gives the length of durations without years or months", () => {
    expect(fixedLengthMs(parseIsoDuration("PT5M")!)).toBe(300_000);
    expect(fixedLengthMs(parseIsoDuration("P1W")!)).toBe(7 * 86_400_000);
    expect(fixedLengthMs(parseIsoDuration("P1DT12H")!)).toBe(129_600_000);
    expect(fixedLengthMs(parseIsoDuration("PT0.5S")!)).toBe(500);
    expect(fixedLengthMs(parseIsoDuration("P0Y0M1D")!)).toBe(86_400_000);
  });

  it("is undefined for calendar durations", () => {
    expect(fixedLengthMs(parseIsoDuration("P1M")!)).toBeUndefined();
    expect(fixedLengthMs(parseIsoDuration("P1YT1H")!)).toBeUndefined();
  });
});

describe("addDuration", () => {
  const month = parseIsoDuration("P1M")!;

  it("clamps the day of month: Jan 31 + P1M is the last day of February", () => {
    expect(addDuration(utc(2023, 0, 31), month)).toBe(utc(2023, 1, 28));
    expect(addDuration(utc(2024, 0, 31), month)).toBe(utc(2024, 1, 29));
  });

  it("multiplies instead of adding repeatedly, so the day comes back", () => {
    expect(addDuration(utc(2023, 0, 31), month, 2)).toBe(utc(2023, 2, 31));
    expect(addDuration(utc(2023, 0, 31), month, 13)).toBe(utc(2024, 1, 29));
  });

  it("keeps the time of day and crosses years", () => {
    expect(addDuration(utc(2023, 10, 30, 18, 45, 10), parseIsoDuration("P3M")!)).toBe(utc(2024, 1, 29, 18, 45, 10));
    expect(addDuration(utc(2024, 1, 29, 6), parseIsoDuration("P1Y")!)).toBe(utc(2025, 1, 28, 6));
  });

  it("adds years and months before days and time", () => {
    // Jan 30 + 1 month = Feb 28, + 1 day = Mar 1; days first would give Jan 31 + 1 month = Feb 28.
    expect(addDuration(utc(2023, 0, 30), parseIsoDuration("P1M1DT1H")!)).toBe(utc(2023, 2, 1, 1));
  });

  it("adds fixed durations in UTC milliseconds", () => {
    expect(addDuration(utc(2024, 2, 31, 0, 30), parseIsoDuration("PT0.5S")!)).toBe(utc(2024, 2, 31, 0, 30) + 500);
    expect(addDuration(utc(2024, 2, 30), parseIsoDuration("P1D")!)).toBe(utc(2024, 2, 31));
  });

  it("agrees with fixedLengthMs for every fixed duration (property)", () => {
    const fixed = fc.record({ weeks: fc.nat(10), days: fc.nat(40), hours: fc.nat(48), minutes: fc.nat(120), seconds: fc.nat(120) });
    fc.assert(
      fc.property(fixed, fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.nat(50), (parts, ms, times) => {
        const duration = { ...zero, ...parts };
        expect(addDuration(ms, duration, times)).toBe(ms + times * fixedLengthMs(duration)!);
      }),
    );
  });

  it("never lands past the end of the target month (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1970, max: 2100 }), fc.integer({ min: 0, max: 11 }), fc.integer({ min: 1, max: 31 }), fc.nat(40), (year, monthIndex, day, months) => {
        const start = utc(year, monthIndex, Math.min(day, new Date(utc(year, monthIndex + 1, 0)).getUTCDate()));
        const result = new Date(addDuration(start, { ...zero, months }));
        const target = year * 12 + monthIndex + months;
        expect(result.getUTCFullYear() * 12 + result.getUTCMonth()).toBe(target);
        expect(result.getUTCDate()).toBe(Math.min(new Date(start).getUTCDate(), new Date(utc(year, monthIndex + months + 1, 0)).getUTCDate()));
      }),
    );
  });
});
