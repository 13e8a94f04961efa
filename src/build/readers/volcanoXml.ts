/**
 * Reads `volcano.xml`, the eruption the model chain simulated (metno/snap SnapPy writes it beside the
 * model output). It is the natural default description of a run.
 */
import type { Issues } from "../issues.ts";
import { INSTANT_FORM, normaliseInstant } from "../../time/instant.ts";
import { parseUntrustedXml, XmlInputError } from "../../xml/safeXml.ts";
import type { InputReader, InputReading, RunInputFile, VolcanoDescription } from "./types.ts";

export const VOLCANO_FILE = "volcano.xml";
const MAX_VOLCANO_BYTES = 1024 * 1024;
const ROOT = "volcanic_eruption_run";
const FILE_FIX = "write volcano.xml as the model chain does: well-formed XML without ENTITY declarations, at most 1 MiB";

type Element = Record<string, unknown>;
type Fail = (field: string | undefined, message: string, fix: string) => void;

interface NumberSpec {
  name: string;
  /** What the number is, for the fix: "latitude in decimal degrees, -90 to 90". */
  meaning: string;
  example: string;
  required?: boolean;
  min?: number;
  max?: number;
  /** Exclusive lower bound. */
  above?: number;
}

const RUN_TIME: NumberSpec = { name: "run_time_hours", meaning: "the length of the model run in hours, more than 0", example: "48", above: 0 };
const LAT: NumberSpec = { name: "lat", meaning: "the latitude in decimal degrees, -90 to 90", example: "65.03", required: true, min: -90, max: 90 };
const LON: NumberSpec = { name: "lon", meaning: "the longitude in decimal degrees, -180 to 180 (west negative)", example: "-16.75", required: true, min: -180, max: 180 };
const ALTITUDE: NumberSpec = { name: "altitude", meaning: "the vent altitude in metres above sea level", example: "1516" };
const BOTTOM: NumberSpec = { name: "bottom", meaning: "the bottom of the ash column in metres above the vent, 0 or more", example: "0", required: true, min: 0 };
const TOP: NumberSpec = { name: "top", meaning: "the top of the ash column in metres above the vent, more than 0", example: "7000", required: true, above: 0 };
const RATE: NumberSpec = { name: "rate", meaning: "the mass eruption rate in kg/s, 0 or more", example: "100000", min: 0 };
const M63: NumberSpec = { name: "m63", meaning: "the fine-ash fraction, 0 to 1", example: "0.05", min: 0, max: 1 };

export const volcanoXmlReader: InputReader = {
  kind: "volcano",
  accepts: (file) => file.name === VOLCANO_FILE,
  async read(file: RunInputFile, issues: Issues): Promise<InputReading | undefined> {
    if (file.size > MAX_VOLCANO_BYTES) {
      issues.error(file.displayPath, `file is ${file.size} bytes, more than the ${MAX_VOLCANO_BYTES} accepted`, FILE_FIX);
      return undefined;
    }
    let document: unknown;
    try {
      document = parseUntrustedXml(await file.bytes(), { maxBytes: MAX_VOLCANO_BYTES, arrays: new Set(["volcano", "eruption"]) });
    } catch (error) {
      if (!(error instanceof XmlInputError)) throw error;
      issues.error(file.displayPath, error.message, FILE_FIX);
      return undefined;
    }
    let failed = false;
    const fail: Fail = (field, message, fix) => {
      failed = true;
      issues.error(file.displayPath, message, fix, field);
    };
    const volcano = describedVolcano(document, fail);
    return failed || !volcano ? undefined : { kind: "volcano", file, volcano };
  },
};

function describedVolcano(document: unknown, fail: Fail): VolcanoDescription | undefined {
  const rootName = Object.keys(asElement(document) ?? {})[0];
  if (rootName !== ROOT) {
    fail(undefined, `root element is <${rootName ?? ""}>, expected <${ROOT}>`, `give volcano.xml the <${ROOT}> root the model chain writes`);
    return undefined;
  }
  const root = asElement(asElement(document)?.[ROOT]) ?? {};
  const runTimeHours = readNumber(root, "", RUN_TIME, fail);
  const forecast = asElement(asElement(root.model_setup)?.weather_forecast);
  const modelStartTime = readInstant(forecast, "model_setup/weather_forecast", "model_start_time", false, fail);

  const volcanoes = asArray(root.volcano);
  if (volcanoes.length !== 1) {
    fail("volcano", `${volcanoes.length} <volcano> elements, expected one`, 'describe the one volcano of the run as <volcano name="Askja" lat="65.03" lon="-16.75" altitude="1516"/>');
    return undefined;
  }
  const volcano = asElement(volcanoes[0]);
  const name = attribute(volcano, "name")?.trim();
  if (!name) fail("volcano/@name", "the volcano has no name", 'add name="..." to <volcano>');
  const lat = readNumber(volcano, "volcano", LAT, fail);
  const lon = readNumber(volcano, "volcano", LON, fail);
  const altitudeM = readNumber(volcano, "volcano", ALTITUDE, fail);

  // Two <eruptions> blocks come back as an array: said as such, not as "no <eruption>" (each has one).
  if (Array.isArray(root.eruptions)) {
    fail("eruptions", `${root.eruptions.length} <eruptions> elements, expected one`, "put every <eruption> of the run inside one <eruptions>");
    return undefined;
  }
  const eruptionElements = asArray(asElement(root.eruptions)?.eruption);
  if (!eruptionElements.length) {
    fail("eruptions/eruption", "no <eruption> in <eruptions>", 'add <eruption start="..." end="..." bottom="0" top="7000" rate="100000"/> inside <eruptions>');
  }
  const eruptions = eruptionElements.map((element, i) => readEruption(asElement(element), `eruptions/eruption[${i + 1}]`, fail));
  if (!name || lat === undefined || lon === undefined || !eruptions.every((e) => e !== undefined) || !eruptions.length) return undefined;
  return withoutUndefined({ name, lat, lon, altitudeM, eruptions, modelStartTime, runTimeHours });
}

function readEruption(element: Element | undefined, path: string, fail: Fail): VolcanoDescription["eruptions"][number] | undefined {
  const start = readInstant(element, path, "start", true, fail);
  const end = readInstant(element, path, "end", true, fail);
  const bottomM = readNumber(element, path, BOTTOM, fail);
  const topM = readNumber(element, path, TOP, fail);
  const rateKgPerS = readNumber(element, path, RATE, fail);
  const m63 = readNumber(element, path, M63, fail);
  if (start !== undefined && end !== undefined && end < start) {
    fail(`${path}/@end`, `end ${end} is before start ${start}`, "give the end of the eruption at or after its start");
    return undefined;
  }
  if (bottomM !== undefined && topM !== undefined && topM < bottomM) {
    fail(`${path}/@top`, `top ${topM} m is below bottom ${bottomM} m`, "give the top of the ash column at or above its bottom (both in metres above the vent)");
    return undefined;
  }
  if (start === undefined || end === undefined || bottomM === undefined || topM === undefined) return undefined;
  return withoutUndefined({ start, end, bottomM, topM, rateKgPerS, m63 });
}

/** Reads a numeric attribute; reports it missing (when required), not a decimal number, or out of range. */
function readNumber(element: Element | undefined, path: string, spec: NumberSpec, fail: Fail): number | undefined {
  const field = `${path ? `${path}/` : ""}@${spec.name}`;
  const fix = `set ${spec.name} to ${spec.meaning}, e.g. ${spec.name}="${spec.example}"`;
  const text = attribute(element, spec.name);
  if (text === undefined) {
    if (spec.required) fail(field, `missing ${spec.name}`, fix);
    return undefined;
  }
  const value = parseDecimal(text);
  if (value === undefined) {
    fail(field, `${spec.name} "${text}" is not a decimal number`, fix);
    return undefined;
  }
  const inRange = (spec.min === undefined || value >= spec.min) && (spec.max === undefined || value <= spec.max) && (spec.above === undefined || value > spec.above);
  if (!inRange) {
    fail(field, `${spec.name} ${value} is out of range`, fix);
    return undefined;
  }
  return value;
}

function readInstant(element: Element | undefined, path: string, name: string, required: boolean, fail: Fail): string | undefined {
  const field = `${path}/@${name}`;
  const fix = `write ${name} as ${INSTANT_FORM}`;
  const text = attribute(element, name);
  if (text === undefined) {
    if (required) fail(field, `missing ${name}`, fix);
    return undefined;
  }
  const instant = normaliseInstant(text);
  if (instant === undefined) fail(field, `${name} "${text}" is not an ISO 8601 date-time with a zone`, fix);
  return instant;
}

/**
 * The default description of a run, e.g.
 * `Askja (65.03°N, 16.75°W, 1516 m a.s.l.): eruption at 2016-11-03 08:00 UTC, ash column 0–7000 m above the vent (top 8516 m a.s.l.), mass eruption rate 100000 kg/s.`
 * Several eruptions are summarised: their whole window, the highest top and the largest rate.
 */
export function describeEruption(v: VolcanoDescription): string {
  const place = [latitudeText(v.lat), longitudeText(v.lon), ...(v.altitudeM === undefined ? [] : [`${formatNumber(v.altitudeM)} m a.s.l.`])].join(", ");
  const start = v.eruptions.map((e) => e.start).sort()[0] ?? "";
  const end = v.eruptions.map((e) => e.end).sort().at(-1) ?? "";
  const when = start === end ? `at ${timeText(start)}` : `from ${timeText(start)} to ${timeText(end)}`;
  const only = v.eruptions.length === 1 ? v.eruptions[0] : undefined;
  const top = Math.max(...v.eruptions.map((e) => e.topM));
  const column = only ? `${formatNumber(only.bottomM)}–${formatNumber(top)} m` : `up to ${formatNumber(top)} m`;
  const aboveSea = v.altitudeM === undefined ? "" : ` (top ${formatNumber(v.altitudeM + top)} m a.s.l.)`;
  const rates = v.eruptions.flatMap((e) => (e.rateKgPerS === undefined ? [] : [e.rateKgPerS]));
  const rate = rates.length ? `, mass eruption rate ${only ? "" : "up to "}${formatNumber(Math.max(...rates))} kg/s` : "";
  const eruption = only ? "eruption" : `${v.eruptions.length} eruption phases`;
  return `${v.name} (${place}): ${eruption} ${when}, ash column ${column} above the vent${aboveSea}${rate}.`;
}

const latitudeText = (lat: number): string => `${formatNumber(Math.abs(lat))}°${lat < 0 ? "S" : "N"}`;
const longitudeText = (lon: number): string => `${formatNumber(Math.abs(lon))}°${lon < 0 ? "W" : "E"}`;
/** `2016-11-03T08:00:00Z` -> `2016-11-03 08:00 UTC`. */
const timeText = (instant: string): string => `${instant.slice(0, 10)} ${instant.slice(11, 16)} UTC`;
/** At most two decimals, no trailing zeros: 65.03, 1516, 0.05. */
const formatNumber = (n: number): string => String(Number(n.toFixed(2)));

// Strict decimal: Number() alone would accept "", "0x10" and "Infinity".
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
function parseDecimal(text: string): number | undefined {
  const trimmed = text.trim();
  const value = Number(trimmed);
  return DECIMAL.test(trimmed) && Number.isFinite(value) ? value : undefined;
}

const asElement = (value: unknown): Element | undefined => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Element) : undefined);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
function attribute(element: Element | undefined, name: string): string | undefined {
  const value = element?.[`@_${name}`];
  return typeof value === "string" ? value : undefined;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
