/**
 * GET /point: the concentration at a place, per model and band, for every step of a run (or the step
 * valid at `time`), from the run's point-query grids. Parameters are checked here; the answer is plain
 * data (the route turns it into a response). The value of a place is the highest of the cell centres around
 * it (its own cell's at a centre): never less than the model's value for its cell, nor than the ash areas drawn there.
 */
import { classOf } from "../contract/ashClasses.ts";
import type { PointAnswer, PointStep } from "../contract/queries.ts";
import { decodeConcentration, MISSING_CODE } from "../formats/concentrationCodes.ts";
import { INSTANT_FORM, normaliseInstant, parseInstant } from "../time/instant.ts";
import type { ServedGrid } from "./pointGrids.ts";

export interface QueryProblem {
  kind: "problem";
  status: 400 | 413 | 422;
  detail: string;
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** One coordinate parameter, a decimal number within ±limit. */
export function coordinateParameter(name: "lat" | "lon", values: readonly string[] | undefined, limit: number): number | QueryProblem {
  const example = "e.g. ?lat=63.98&lon=-19.7";
  if (!values || values.length === 0) return { kind: "problem", status: 400, detail: `the ${name} parameter is missing: give the place in decimal degrees, ${example}` };
  if (values.length > 1) return { kind: "problem", status: 400, detail: `give the ${name} parameter once` };
  const text = values[0]!.trim();
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value)) return { kind: "problem", status: 400, detail: `${name} "${text.slice(0, 40)}" is not a decimal number of degrees, ${example}` };
  if (Math.abs(value) > limit) return { kind: "problem", status: 400, detail: `${name} ${value} is outside -${limit}..${limit} degrees` };
  return value;
}

/** The optional `time` parameter as an instant (ms), undefined when absent. */
export function timeParameter(values: readonly string[] | undefined): { iso: string; ms: number } | undefined | QueryProblem {
  if (!values) return undefined;
  if (values.length > 1) return { kind: "problem", status: 400, detail: "give the time parameter once" };
  const iso = normaliseInstant(values[0]!.replace(/ (\d{2}:?\d{2})$/, "+$1"));
  if (iso === undefined) return { kind: "problem", status: 400, detail: `time "${values[0]!.slice(0, 100)}" is not a date-time: expected ${INSTANT_FORM}` };
  return { iso, ms: parseInstant(iso)! };
}

/** `FL200-350`, as aviation writes a band. */
export const bandName = (lower: number, upper: number): string => `FL${String(lower).padStart(3, "0")}-${String(upper).padStart(3, "0")}`;

/** A step's value and class from its code. */
export function stepValue(code: number, grid: ServedGrid): { value: number | null; class: string } {
  if (code === MISSING_CODE) return { value: null, class: "missing" };
  const value = decodeConcentration(code);
  return { value, class: classOf(value, grid.classes)?.id ?? "none" };
}

export function answerPoint(reftime: string, grids: readonly ServedGrid[], lat: number, lon: number, time: { iso: string; ms: number } | undefined): PointAnswer | QueryProblem {
  const answer: PointAnswer = { reftime, location: { lat, lon }, ...(time ? { time: time.iso } : {}), units: "mg/m3", series: [], outside: [] };
  if (grids.length === 0) return { kind: "problem", status: 422, detail: `the run ${reftime} has no model output to query (its ash areas are forecasters' drawings); use /resources for them` };
  let inForecast = false;
  for (const grid of grids) {
    const { header } = grid;
    const place = grid.supportOf(lon, lat);
    if (place === undefined) {
      answer.outside.push({ model: header.model, source: header.source });
      continue;
    }
    const step = time ? grid.stepAt(time.ms) : -1;
    if (!time || step !== -1) inForecast = true;
    header.bands.forEach((band, b) => {
      const codes = grid.placeSeries(b, place);
      const steps: PointStep[] = [];
      if (!time) for (let t = 0; t < codes.length; t++) steps.push({ time: header.times[t]!, ...stepValue(codes[t]!, grid) });
      else if (step !== -1) steps.push({ time: header.times[step]!, ...stepValue(codes[step]!, grid) });
      answer.series.push({ model: header.model, source: header.source, band: bandName(band.lowerFl, band.upperFl), label: band.label, lower_fl: band.lowerFl, upper_fl: band.upperFl, cell: place.cell, support: place.support, steps });
    });
  }
  if (answer.series.length === 0) {
    const domains = grids.map((g) => `${g.header.model} (${g.header.source})`).join(", ");
    return { kind: "problem", status: 422, detail: `lat ${lat}, lon ${lon} is outside the domain of every model of run ${reftime}: ${domains}` };
  }
  if (time && !inForecast) {
    const spans = grids.map((g) => `${g.header.times[0]} to ${g.header.end}`).join(", ");
    return { kind: "problem", status: 422, detail: `time ${time.iso} is outside the forecast of run ${reftime} (${spans}); leave time out for every step` };
  }
  return answer;
}
