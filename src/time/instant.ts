/**
 * Instants as the API spells them: UTC, second precision, `YYYY-MM-DDTHH:MM:SSZ`.
 * Pure: no clock, no files.
 */

// ISO 8601 / RFC 3339 date-time: date, `T` (or space), time with optional seconds and fraction, and a zone.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|z|[+-]\d{2}:?\d{2})$/;
// Basic format, in UTC: 20190322T153201Z.
const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(\d{2})?[Zz]$/;

/** The expected spelling, for error messages. */
export const INSTANT_FORM = "YYYY-MM-DDTHH:MM:SSZ (UTC, e.g. 2024-05-01T12:00:00Z)";

/**
 * Parses an ISO 8601 date-time with an explicit zone (extended, or basic with Z) to epoch milliseconds.
 * Returns undefined when the text is not such an instant or names an impossible date.
 * @example parseInstant("2019-03-22T22:00:00+01:00") === Date.UTC(2019, 2, 22, 21)
 */
export function parseInstant(text: string): number | undefined {
  const trimmed = text.trim();
  const match = ISO_DATE_TIME.exec(trimmed);
  if (match) {
    const [, y, mo, d, h, mi, s = "00", fraction = "", zone = "Z"] = match;
    const ms = utc(+y!, +mo!, +d!, +h!, +mi!, +s, fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0);
    if (!isRealDate(+y!, +mo!, +d!, +h!, +mi!, +s)) return undefined;
    const offset = zoneOffsetMinutes(zone);
    return offset === undefined ? undefined : ms - offset * 60_000;
  }
  const basic = ISO_BASIC.exec(trimmed);
  if (basic) {
    const [, y, mo, d, h, mi, s = "00"] = basic;
    if (!isRealDate(+y!, +mo!, +d!, +h!, +mi!, +s)) return undefined;
    return utc(+y!, +mo!, +d!, +h!, +mi!, +s, 0);
  }
  return undefined;
}

/** Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear does not. */
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  date.setUTCFullYear(y, mo - 1, d);
  return date.getTime();
}

/**
 * Normalises any accepted spelling to `YYYY-MM-DDTHH:MM:SSZ` (fractions of a second are dropped).
 * @example normaliseInstant("2019-03-22 21:00Z") === "2019-03-22T21:00:00Z"
 */
export function normaliseInstant(text: string): string | undefined {
  const ms = parseInstant(text);
  return ms === undefined ? undefined : formatInstant(ms);
}

/** Epoch milliseconds to `YYYY-MM-DDTHH:MM:SSZ`. */
export function formatInstant(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** A compact, file-name-safe form of a normalised instant: `20190322T210000Z`. */
export function compactInstant(normalised: string): string {
  return normalised.replace(/[-:]/g, "");
}

/** Minutes east of UTC; undefined for an offset no clock has (RFC 3339: hours to 23, minutes to 59). */
function zoneOffsetMinutes(zone: string): number | undefined {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4));
  return hours > 23 || minutes > 59 ? undefined : sign * (hours * 60 + minutes);
}

function isRealDate(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return false;
  const date = new Date(utc(y, mo, d, 0, 0, 0, 0));
  return date.getUTCMonth() === mo - 1 && date.getUTCDate() === d; // 30 February rolls over, and is refused
}
