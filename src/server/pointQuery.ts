/**
 * GET /point: the concentration at a place, per model and band, for every step of a run (or the step
 * valid at `time`), from the run's point-query grids. Parameters are checked here; the answer is plain
 * data (the route turns it into a response). The value of a place is the highest of the cell centres around
 * it (its own cell's at a centre): never less than the model's value for its cell, nor than the ash areas drawn there.
 */
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

/** A code's value as JSON text, made once per code (formatting numbers cost more than the rest of an answer). */
const VALUE_TEXT: Array<string | undefined> = [];
function valueText(code: number): string {
  return (VALUE_TEXT[code] ??= code === MISSING_CODE ? "null" : String(decodeConcentration(code)));
}

/** The steps of a series as JSON text (without the brackets), from the grid's memory when it has them. */
function allSteps(grid: ServedGrid, band: number, placeKey: number, codes: Uint16Array, stepText: (t: number) => string): string {
  let any = 0;
  for (let t = 0; t < codes.length; t++) any |= codes[t]!;
  const key = any === 0 ? -1 - band : placeKey * 8 + band;
  let text = grid.seriesText(key);
  if (text === undefined) {
    text = "";
    for (let t = 0; t < codes.length; t++) text += (t ? "," : "") + stepText(t);
    grid.rememberSeriesText(key, text);
  }
  return text;
}

/**
 * The answer as JSON text (PointAnswer of src/contract/queries.ts), written piece by piece from text each
 * grid made once: an answer of 3 bands × 72 steps is 216 step objects, and building and stringifying
 * them cost several times the rest of a request.
 */
export function answerPoint(reftime: string, grids: readonly ServedGrid[], lat: number, lon: number, time: { iso: string; ms: number } | undefined): string | QueryProblem {
  if (grids.length === 0) return { kind: "problem", status: 422, detail: `the run ${reftime} has no model output to query (its ash areas are forecasters' drawings); use /resources for them` };
  const series: string[] = [];
  const outside: string[] = [];
  let inForecast = false;
  for (const grid of grids) {
    const { header } = grid;
    const place = grid.supportOf(lon, lat);
    if (place === undefined) {
      outside.push(JSON.stringify({ model: header.model, source: header.source }));
      continue;
    }
    const step = time ? grid.stepAt(time.ms) : -1;
    if (!time || step !== -1) inForecast = true;
    const { stepHeads, seriesHeads, classTails } = grid.jsonParts;
    const where = `"cell":${JSON.stringify(place.cell)},"support":${JSON.stringify(place.support)},"steps":[`;
    for (let b = 0; b < header.bands.length; b++) {
      const codes = grid.placeSeries(b, place);
      let text = seriesHeads[b]! + where;
      const stepText = (t: number) => {
        const code = codes[t]!;
        return stepHeads[t]! + valueText(code) + (code === MISSING_CODE ? ',"class":"missing"}' : classTails[grid.classIndexOf(code)]!);
      };
      if (!time) text += allSteps(grid, b, place.key, codes, stepText);
      else if (step !== -1) text += stepText(step);
      series.push(`${text}]}`);
    }
  }
  if (series.length === 0) {
    const domains = grids.map((g) => `${g.header.model} (${g.header.source})`).join(", ");
    return { kind: "problem", status: 422, detail: `lat ${lat}, lon ${lon} is outside the domain of every model of run ${reftime}: ${domains}` };
  }
  if (time && !inForecast) {
    const spans = grids.map((g) => `${g.header.times[0]} to ${g.header.end}`).join(", ");
    return { kind: "problem", status: 422, detail: `time ${time.iso} is outside the forecast of run ${reftime} (${spans}); leave time out for every step` };
  }
  const head = `{"reftime":${JSON.stringify(reftime)},"location":${JSON.stringify({ lat, lon })},${time ? `"time":${JSON.stringify(time.iso)},` : ""}"units":"mg/m3"`;
  return `${head},"series":[${series.join(",")}],"outside":[${outside.join(",")}]}`;
}
