/**
 * CF time coordinates: `<unit> since <origin>` with the Gregorian calendars.
 *
 * Units: days, hours, minutes, seconds (and the usual abbreviations). Origin: `YYYY-MM-DD`, optionally
 * followed by ` HH:MM[:SS[.f]]` (or `T`) and a zone (`Z`, `UTC`, `+01:00`, `+0100`, `-6`); single-digit
 * fields as EMEP writes them (`1900-1-1 0:0:0`) are accepted. A zone means the origin is local time at
 * that offset. Calendars: `standard`, `gregorian`, `proleptic_gregorian`, or none (CF's default,
 * `standard`). The mixed Julian/Gregorian `standard` calendar differs from the proleptic one only
 * before 1582-10-15, so an origin before that is refused rather than read a few days off.
 *
 * Instants are rounded to the nearest whole second: `days` in floating point rarely land exactly on
 * a second (1/48 day is 1799999.99... ms), and rounding (not truncating) keeps 00:30:00 at 00:30:00.
 */

const UNIT_MS: Record<string, number> = {
  day: 86_400_000,
  days: 86_400_000,
  d: 86_400_000,
  hour: 3_600_000,
  hours: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  h: 3_600_000,
  minute: 60_000,
  minutes: 60_000,
  min: 60_000,
  mins: 60_000,
  second: 1000,
  seconds: 1000,
  sec: 1000,
  secs: 1000,
  s: 1000,
};

const UNITS_PATTERN =
  /^\s*([a-z]+)\s+since\s+(-?\d{1,4})-(\d{1,2})-(\d{1,2})(?:(?:\s+|T)(\d{1,2}):(\d{1,2})(?::(\d{1,2}(?:\.\d*)?))?)?\s*(Z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?)?\s*$/i;

export const SUPPORTED_CALENDARS = ["standard", "gregorian", "proleptic_gregorian"] as const;
const GREGORIAN_REFORM_MS = Date.UTC(1582, 9, 15);

export interface CfTimeAxis {
  /** Milliseconds per unit of the coordinate. */
  unitMs: number;
  /** The origin as epoch milliseconds (UTC). */
  originMs: number;
}

export type CfTimeProblem = { problem: "units" | "calendar" | "origin-before-reform"; message: string; fix: string };

/** Parses `hours since 2019-03-22 00:00:00` and the like; undefined when the units are not a CF time. */
export function parseCfTimeUnits(units: string): CfTimeAxis | undefined {
  const match = UNITS_PATTERN.exec(units);
  if (!match) return undefined;
  const [, unit, y, mo, d, h = "0", mi = "0", s = "0", zone] = match;
  const unitMs = UNIT_MS[unit!.toLowerCase()];
  if (unitMs === undefined) return undefined;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second >= 61) return undefined;
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined; // 30 February
  const originMs = date.getTime() + hour * 3_600_000 + minute * 60_000 + Math.round(second * 1000) - zoneOffsetMs(zone);
  return { unitMs, originMs };
}

/** The problem with a time coordinate's units and calendar, or undefined when they can be read. */
export function cfTimeProblem(units: string | undefined, calendar: string | undefined, variable = "time"): CfTimeProblem | undefined {
  if (calendar !== undefined && !SUPPORTED_CALENDARS.includes(calendar.trim().toLowerCase() as never)) {
    return {
      problem: "calendar",
      message: `${variable}:calendar is "${calendar}", which ashcast does not read (only ${SUPPORTED_CALENDARS.join(", ")})`,
      fix: `run the model with the real-world (Gregorian) calendar, or set ${variable}:calendar = "standard" if the times are in fact Gregorian`,
    };
  }
  const axis = units === undefined ? undefined : parseCfTimeUnits(units);
  if (!axis) {
    return {
      problem: "units",
      message: units === undefined ? `${variable} has no units attribute` : `${variable}:units is "${units}", not a CF time (<days|hours|minutes|seconds> since <YYYY-MM-DD[ HH:MM:SS][ zone]>)`,
      fix: `give ${variable} CF units such as "hours since 2019-03-22 00:00:00" (as the model writes them)`,
    };
  }
  const proleptic = calendar?.trim().toLowerCase() === "proleptic_gregorian";
  if (!proleptic && axis.originMs < GREGORIAN_REFORM_MS) {
    return {
      problem: "origin-before-reform",
      message: `${variable}:units "${units}" counts from before 1582-10-15 in the mixed Julian/Gregorian calendar, which ashcast does not convert`,
      fix: `count ${variable} from a later origin (e.g. "days since 1900-01-01"), or set ${variable}:calendar = "proleptic_gregorian" if that is what the model used`,
    };
  }
  return undefined;
}

/** A coordinate value to epoch milliseconds, rounded to the nearest second. */
export function cfTimeToMs(value: number, axis: CfTimeAxis): number {
  return Math.round((axis.originMs + value * axis.unitMs) / 1000) * 1000;
}

function zoneOffsetMs(zone: string | undefined): number {
  if (!zone || /^(Z|UTC|GMT)$/i.test(zone)) return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1);
  let hours: number;
  let minutes = 0;
  if (digits.includes(":")) {
    const [hh = "0", mm = "0"] = digits.split(":");
    hours = Number(hh);
    minutes = Number(mm);
  } else if (digits.length > 2) {
    hours = Number(digits.slice(0, -2));
    minutes = Number(digits.slice(-2));
  } else {
    hours = Number(digits);
  }
  return sign * (hours * 60 + minutes) * 60_000;
}
