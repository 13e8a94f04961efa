/**
 * Colours, labels and text formats shared by the run map and the per-step band images.
 * Everything here is a pure function of its arguments (no clock, no locale), so images are reproducible.
 */
import type { RunType } from "../contract/ashModel.ts";

export type Rgb = readonly [r: number, g: number, b: number];

/** Base map colours. */
export const BASE_COLOURS = {
  sea: "#e6eef4",
  land: "#f6f2e7",
  coast: "#5c6b7a",
  border: "#a59a8a",
  graticule: "rgba(70, 90, 110, 0.28)",
  graticuleLabel: "#3d4a57",
  frame: "#44505c",
} as const;

/**
 * Ash colours by concentration class, in the spirit of the VAAC concentration charts: low (grey-cyan),
 * medium (orange), high (red); a fourth class (e.g. 10 mg/m³ in the quantitative products) is maroon.
 */
export const ASH_LOW: Rgb = [72, 178, 204];
export const ASH_MEDIUM: Rgb = [240, 140, 20];
export const ASH_HIGH: Rgb = [214, 24, 28];
export const ASH_VERY_HIGH: Rgb = [112, 0, 36];
const ASH_EXTRA: Rgb = [245, 205, 40];

/** Opacity of the filled areas: coastlines show through. */
export const ASH_FILL_ALPHA = 0.62;

/** The colour of each threshold class, lowest first, for a set of `count` thresholds. */
export function ashPalette(count: number): Rgb[] {
  switch (count) {
    case 0:
      return [];
    case 1:
      return [ASH_MEDIUM];
    case 2:
      return [ASH_LOW, ASH_HIGH];
    case 3:
      return [ASH_LOW, ASH_MEDIUM, ASH_HIGH];
    case 4:
      return [ASH_LOW, ASH_MEDIUM, ASH_HIGH, ASH_VERY_HIGH];
    default: {
      const base: Rgb[] = [ASH_LOW, ASH_EXTRA, ASH_MEDIUM, ASH_HIGH, ASH_VERY_HIGH];
      return Array.from({ length: count }, (_, i) => base[Math.min(i, base.length - 1)]!);
    }
  }
}

/** Names of the classes ("low", "medium", "high" ...), or none when there are too many to name. */
export function ashClassNames(count: number): string[] {
  switch (count) {
    case 2:
      return ["low", "high"];
    case 3:
      return ["low", "medium", "high"];
    case 4:
      return ["low", "medium", "high", "very high"];
    default:
      return [];
  }
}

/** Thresholds sorted ascending, finite and positive only, without duplicates. */
export function sortedThresholds(thresholds: readonly number[]): number[] {
  return [...new Set(thresholds.filter((t) => Number.isFinite(t)))].sort((a, b) => a - b);
}

/** Index of the class whose lower edge is `lower` (the nearest threshold not above it; 0 below all). */
export function classIndex(lower: number, sorted: readonly number[]): number {
  let index = 0;
  for (let i = 0; i < sorted.length; i++) if (sorted[i]! <= lower * (1 + 1e-9)) index = i;
  return index;
}

export const rgb = (c: Rgb): string => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
export const rgba = (c: Rgb, alpha: number): string => `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${alpha})`;
/** The same hue, darker: outlines of the filled areas. */
export const darker = (c: Rgb, f = 0.72): Rgb => [Math.round(c[0] * f), Math.round(c[1] * f), Math.round(c[2] * f)];

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

/** A threshold as written in the legend: `0.2`, `2`, `10`. */
export function formatThreshold(value: number): string {
  return String(Number(value.toPrecision(6)));
}

/** The legend entries: one per class, lowest first. */
export function legendEntries(thresholds: readonly number[]): Array<{ colour: Rgb; range: string; name: string }> {
  const sorted = sortedThresholds(thresholds);
  const palette = ashPalette(sorted.length);
  const names = ashClassNames(sorted.length);
  return sorted.map((lower, i) => {
    const upper = sorted[i + 1];
    const range = upper === undefined ? `${formatThreshold(lower)} or more` : `${formatThreshold(lower)}–${formatThreshold(upper)}`;
    return { colour: palette[i]!, range, name: names[i] ?? "" };
  });
}

export const ATTRIBUTION = "Data CC BY 4.0 · Coastlines and borders: Natural Earth (public domain)";
export const UNITS = "mg/m³";

/** The message drawn in a panel without any ash area. */
export function noAshText(thresholds: readonly number[]): string {
  const lowest = sortedThresholds(thresholds)[0];
  return lowest === undefined ? "No ash" : `No ash above ${formatThreshold(lowest)} ${UNITS}`;
}
