/**
 * The text of a WMS time Dimension (1.3.0) or Extent (1.1.1): comma-separated items, each an instant
 * or `start/end/period` (WMS 1.3.0 Annex D). Pure: the caller supplies the forecast window.
 */
import { addDuration, DURATION_FORM, fixedLengthMs, parseIsoDuration, type IsoDuration } from "./isoDuration.ts";
import { formatInstant, parseInstant } from "./instant.ts";

export type TimeDimensionValue =
  | { kind: "instant"; ms: number }
  | { kind: "period"; startMs: number; endMs: number; period: IsoDuration };

/** Inclusive bounds, epoch milliseconds. */
export interface TimeWindow {
  startMs: number;
  endMs: number;
}

export type TimesResult = { times: string[] } | { errors: string[] };

const AN_INSTANT = "an instant such as 2024-05-01T12:00:00Z, or a date such as 2024-05-01";
const A_PERIOD = "start/end/period such as 2024-05-01T00:00:00Z/2024-05-02T00:00:00Z/PT1H";
const ITEM_FORM = `${AN_INSTANT}, or ${A_PERIOD}`;

// Reduced precision allowed by WMS Annex D, as MapServer writes it (`1995-01-01`): the start of that year, month or day, UTC.
const DATE_ONLY = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;

/** Parses every item; any bad item makes the whole text an error list, one message per bad item. */
export function parseTimeDimension(text: string): { values: TimeDimensionValue[] } | { errors: string[] } {
  if (text.trim() === "") return { errors: [`the time dimension is empty; expected a comma-separated list of ${ITEM_FORM}`] };
  const values: TimeDimensionValue[] = [];
  const errors: string[] = [];
  for (const item of text.split(",").map((part) => part.trim())) {
    const parsed = parseItem(item);
    if (typeof parsed === "string") errors.push(parsed);
    else values.push(parsed);
  }
  return errors.length > 0 ? { errors } : { values };
}

/**
 * Sorted distinct normalised instants. Listed instants are all kept: they are the model's own steps.
 * Periods give only their steps start + k·period inside the window, found without walking from `start`.
 * More than `maxSteps` (counted before removing duplicates) is an error.
 */
export function expandTimeDimension(values: readonly TimeDimensionValue[], window: TimeWindow, maxSteps: number): TimesResult {
  const steps = values.map((value) => stepsOf(value, window));
  const total = steps.reduce((sum, { count }) => sum + count, 0);
  if (total > maxSteps) {
    return {
      errors: [
        `the time dimension gives ${total} steps between ${formatInstant(window.startMs)} and ${formatInstant(window.endMs)}, more than the ${maxSteps} allowed; use a shorter forecast window or a longer period`,
      ],
    };
  }
  const times = new Set<string>();
  for (const { count, at } of steps) for (let i = 0; i < count; i++) times.add(formatInstant(at(i)));
  return { times: [...times].sort() };
}

/** What the pipeline needs for the layer it publishes: parse, then expand within the window. */
export function timesForLayer(text: string, window: TimeWindow, maxSteps: number): TimesResult {
  const parsed = parseTimeDimension(text);
  return "errors" in parsed ? parsed : expandTimeDimension(parsed.values, window, maxSteps);
}

function parseItem(item: string): TimeDimensionValue | string {
  if (item === "") return `empty item (two commas in a row, or a comma at the end); expected ${ITEM_FORM}`;
  const parts = item.split("/");
  if (parts.length === 1) {
    const ms = parseWmsInstant(item);
    return ms === undefined ? `"${item}" is not ${ITEM_FORM}` : { kind: "instant", ms };
  }
  if (parts.length !== 3) return `"${item}" ${parts.length === 2 ? "is a range without a period" : `has ${parts.length} parts separated by "/"`}; expected ${A_PERIOD}`;
  const [startText, endText, periodText] = parts.map((part) => part.trim()) as [string, string, string];
  const startMs = parseWmsInstant(startText);
  const endMs = parseWmsInstant(endText);
  const period = parseIsoDuration(periodText);
  if (startMs === undefined) return `"${item}": start "${startText}" is not ${AN_INSTANT}`;
  if (endMs === undefined) return `"${item}": end "${endText}" is not ${AN_INSTANT}`;
  if (period === undefined) return `"${item}": period "${periodText}" is not ${DURATION_FORM}`;
  if (endMs < startMs) return `"${item}": end is before start; expected start <= end`;
  if (addDuration(startMs, period) <= startMs) return `"${item}": period "${periodText}" is zero; expected a positive period such as PT1H`;
  return { kind: "period", startMs, endMs, period };
}

function parseWmsInstant(text: string): number | undefined {
  const date = DATE_ONLY.exec(text);
  if (!date) return parseInstant(text);
  const [, y, mo = "01", d = "01"] = date;
  return parseInstant(`${y}-${mo}-${d}T00:00:00Z`);
}

interface Steps {
  count: number;
  at(i: number): number;
}

function stepsOf(value: TimeDimensionValue, window: TimeWindow): Steps {
  if (value.kind === "instant") return { count: 1, at: () => value.ms };
  const { first, count } = stepRange(value, window);
  return { count, at: (i) => addDuration(value.startMs, value.period, first + i) };
}

/** The steps k = first .. first+count-1 of a period that fall in the window (both bounds inclusive). */
function stepRange(value: Extract<TimeDimensionValue, { kind: "period" }>, window: TimeWindow): { first: number; count: number } {
  const lo = Math.max(window.startMs, value.startMs);
  const hi = Math.min(window.endMs, value.endMs);
  if (lo > hi) return { first: 0, count: 0 };
  const fixed = fixedLengthMs(value.period);
  if (fixed !== undefined) {
    // Whole-ms integers below 2^53, so these divisions land exactly on integers when they should.
    const first = Math.ceil((lo - value.startMs) / fixed);
    const last = Math.floor((hi - value.startMs) / fixed);
    return { first, count: Math.max(0, last - first + 1) };
  }
  // Calendar periods: no step is longer than the period with 31-day months and 366-day years,
  // so every k below this one is still before the window; walk only the last stretch.
  let first = Math.floor((lo - value.startMs) / longestLengthMs(value.period));
  while (addDuration(value.startMs, value.period, first) < lo) first++;
  let count = 0;
  while (addDuration(value.startMs, value.period, first + count) <= hi) count++;
  return { first, count };
}

function longestLengthMs(period: IsoDuration): number {
  const days = period.years * 366 + period.months * 31;
  return days * 86_400_000 + fixedLengthMs({ ...period, years: 0, months: 0 })!;
}
