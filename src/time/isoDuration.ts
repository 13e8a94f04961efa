/**
 * ISO 8601 durations (`PnYnMnWnDTnHnMnS`), as WMS time periods spell them. Pure.
 * All arithmetic is in UTC, so days and weeks have a fixed length; only years and months vary.
 */

export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  /** May be fractional (PT0.5S). */
  seconds: number;
}

/** The expected spelling, for error messages. */
export const DURATION_FORM = "an ISO 8601 duration PnYnMnWnDTnHnMnS, e.g. PT1H or P1D";

// Whole numbers everywhere but the seconds; `,` is ISO's other decimal sign.
const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/**
 * Parses a duration; undefined for anything else, including `P`, `PT`, `P1DT` and negative durations.
 * @example parseIsoDuration("PT5M") -> { minutes: 5, others 0 }
 */
export function parseIsoDuration(text: string): IsoDuration | undefined {
  const trimmed = text.trim();
  const match = DURATION.exec(trimmed);
  if (!match) return undefined;
  const [, y, mo, w, d, h, mi, s] = match;
  // The regex lets every part be absent: a duration needs one, and a `T` needs one after it.
  if ([y, mo, w, d, h, mi, s].every((part) => part === undefined)) return undefined;
  if (trimmed.includes("T") && [h, mi, s].every((part) => part === undefined)) return undefined;
  const value = { years: +(y ?? 0), months: +(mo ?? 0), weeks: +(w ?? 0), days: +(d ?? 0), hours: +(h ?? 0), minutes: +(mi ?? 0), seconds: Number((s ?? "0").replace(",", ".")) };
  // Hundreds of digits overflow to Infinity.
  return Object.values(value).every(Number.isFinite) ? value : undefined;
}

/** Length in milliseconds when it does not depend on the calendar (no years or months), else undefined. */
export function fixedLengthMs(duration: IsoDuration): number | undefined {
  if (duration.years !== 0 || duration.months !== 0) return undefined;
  return timePartMs(duration);
}

/**
 * `ms + times·duration` in UTC: years and months first, clamping the day to the target month
 * (Jan 31 + P1M = Feb 28 or 29), then the fixed part. Multiplying rather than adding repeatedly
 * keeps the day: Jan 31 + 2·P1M is Mar 31, not Mar 28. `times` is a whole number (k in start + k·period).
 */
export function addDuration(ms: number, duration: IsoDuration, times = 1): number {
  const totalMonths = (duration.years * 12 + duration.months) * times;
  const shifted = totalMonths === 0 ? ms : addMonths(ms, totalMonths);
  return shifted + timePartMs(duration) * times;
}

function addMonths(ms: number, count: number): number {
  const date = new Date(ms);
  // Date.UTC carries month overflow into the year; day 0 of the next month is the last of this one.
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + count;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const timeOfDay = ms - Date.UTC(year, date.getUTCMonth(), date.getUTCDate());
  return Date.UTC(year, month, Math.min(date.getUTCDate(), lastDay)) + timeOfDay;
}

function timePartMs(d: IsoDuration): number {
  return Math.round(((((d.weeks * 7 + d.days) * 24 + d.hours) * 60 + d.minutes) * 60 + d.seconds) * 1000);
}
