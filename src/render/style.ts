/**
 * Colours, labels and text formats shared by the run map and the per-step band images.
 * Everything here is a pure function of its arguments (no clock, no locale), so images are reproducible.
 */
import { ashClasses, CONCENTRATION_UNITS, formatThreshold, type AshClass } from "../contract/ashClasses.ts";
import type { RunType } from "../contract/ashModel.ts";

export type Rgb = readonly [r: number, g: number, b: number];

/** Base map colours (ash classes: src/contract/ashClasses.ts). */
export const BASE_COLOURS = {
  sea: "#e6eef4",
  land: "#f6f2e7",
  coast: "#5c6b7a",
  border: "#a59a8a",
  graticule: "rgba(70, 90, 110, 0.28)",
  graticuleLabel: "#3d4a57",
  frame: "#44505c",
} as const;

export const rgb = (c: Rgb): string => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
export const rgba = (c: Rgb, alpha: number): string => `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${alpha})`;

/** How a run type is marked. Exercise and Rehearsal get a banner; a Real Eruption a red label. */
export interface RunTypeStyle {
  word: string;
  colour: Rgb;
  banner: boolean;
  bannerText: string;
}

export const EXERCISE_COLOUR: Rgb = [123, 31, 162];
export const REHEARSAL_COLOUR: Rgb = [21, 73, 160];
export const REAL_ERUPTION_COLOUR: Rgb = [198, 18, 24];

export function runTypeStyle(type: RunType): RunTypeStyle {
  switch (type) {
    case "Exercise":
      return { word: "EXERCISE", colour: EXERCISE_COLOUR, banner: true, bannerText: "EXERCISE  ·  NOT A REAL ERUPTION  ·  EXERCISE" };
    case "Rehearsal":
      return { word: "REHEARSAL", colour: REHEARSAL_COLOUR, banner: true, bannerText: "REHEARSAL  ·  NOT A REAL ERUPTION  ·  REHEARSAL" };
    case "Real Eruption":
      return { word: "REAL ERUPTION", colour: REAL_ERUPTION_COLOUR, banner: false, bannerText: "" };
  }
}

/** `2010-04-14T06:00:00Z` → `2010-04-14 06:00 UTC` (seconds shown only when not zero). Other strings unchanged. */
export function formatInstant(instant: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]00:?00)$/.exec(instant);
  if (!m) return instant;
  const seconds = m[3] && m[3] !== "00" ? `:${m[3]}` : "";
  return `${m[1]} ${m[2]}${seconds} UTC`;
}

/** `maximum of ...` → `Maximum of ...`. */
export const capitalised = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/**
 * The model outputs a map covers, as the file has them: `the 13 outputs 2026-10-20 06:00 to 18:00 UTC`,
 * `the output 2026-10-20 06:00 UTC`, or across days `the 2 outputs 2026-10-20 18:00 UTC to 2026-10-21 00:00 UTC`.
 */
export function outputsText(times: readonly string[]): string {
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined) return "no output";
  if (times.length === 1) return `the output ${formatInstant(first)}`;
  const from = formatInstant(first);
  const to = formatInstant(last);
  const sameDay = from.slice(0, 10) === to.slice(0, 10) && / UTC$/.test(from);
  return `the ${times.length} outputs ${sameDay ? from.replace(/ UTC$/, "") : from} to ${sameDay ? to.slice(11) : to}`;
}

/** The legend entries: one per class, lowest first, with its range and name. */
export function legendEntries(thresholds: readonly number[]): Array<{ ashClass: AshClass; range: string }> {
  return ashClasses(thresholds).map((ashClass) => ({
    ashClass,
    range: ashClass.upper === null ? `${formatThreshold(ashClass.lower)} or more` : `${formatThreshold(ashClass.lower)}–${formatThreshold(ashClass.upper)}`,
  }));
}

export const ATTRIBUTION = "Data CC BY 4.0 · Coastlines and borders: Natural Earth (public domain)";

/** The message drawn in a panel without any ash area. */
export function noAshText(thresholds: readonly number[]): string {
  const lowest = thresholds[0];
  return lowest === undefined ? "No ash" : `No ash above ${formatThreshold(lowest)} ${CONCENTRATION_UNITS}`;
}
