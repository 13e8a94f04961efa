/**
 * The body of POST /route checked: a GeoJSON (RFC 7946) Feature with a LineString of
 * `[lon, lat, altitude_m]` and optionally `properties.coordTimes`, one instant per vertex (the convention
 * of GPX and KML track converters). Each refusal names the member at fault and what to send. Pure.
 */
import { arcBetween } from "../geo/greatCircle.ts";
import { normaliseInstant, parseInstant } from "../time/instant.ts";
import type { QueryProblem } from "./pointQuery.ts";

export const MAX_ROUTE_VERTICES = 10_000;
export const MAX_ROUTE_BODY_BYTES = 1024 * 1024;
/** Altitudes a flight can have, in metres (FL-15 to FL1000): beyond is a unit mistake (feet sent as metres). */
export const ALTITUDE_RANGE_M = [-500, 30_480] as const;

export interface RouteInput {
  /** [lon, lat] per vertex. */
  positions: Array<[number, number]>;
  altitudesM: number[];
  /** Instants of the vertices in ms, when coordTimes was given. */
  timesMs?: number[];
}

/** Two positions this close to opposite (degrees of arc, about 0.1 m) have no great circle of their own. */
const ANTIPODAL_DEGREES = 1e-6;

const EXAMPLE = '{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-22,64,10668],[-10,60,10668]]},"properties":{"coordTimes":["2026-06-01T06:00:00Z","2026-06-01T07:00:00Z"]}}';

const invalid = (detail: string): QueryProblem => ({ kind: "problem", status: 422, detail: `${detail}; send e.g. ${EXAMPLE}` });

export function parseRoute(body: unknown): RouteInput | QueryProblem {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return invalid("the body must be a GeoJSON Feature object");
  const feature = body as Record<string, unknown>;
  if (feature.type !== "Feature") return invalid(`type is ${JSON.stringify(feature.type)?.slice(0, 40) ?? "missing"}, expected "Feature"`);
  const geometry = feature.geometry as Record<string, unknown> | null | undefined;
  if (typeof geometry !== "object" || geometry === null) return invalid("geometry is missing");
  if (geometry.type !== "LineString") return invalid(`geometry.type is ${JSON.stringify(geometry.type)?.slice(0, 40) ?? "missing"}, expected "LineString"`);
  const coordinates = geometry.coordinates;
  if (!Array.isArray(coordinates) || coordinates.length < 2) return invalid("geometry.coordinates must hold at least 2 positions");
  if (coordinates.length > MAX_ROUTE_VERTICES) return { kind: "problem", status: 413, detail: `geometry.coordinates has ${coordinates.length} positions; at most ${MAX_ROUTE_VERTICES} are accepted: split the route` };
  const positions: Array<[number, number]> = [];
  const altitudesM: number[] = [];
  for (let i = 0; i < coordinates.length; i++) {
    const position = coordinates[i] as unknown;
    const at = `geometry.coordinates[${i}]`;
    if (!Array.isArray(position) || position.length < 2 || position.length > 3 || !position.every((n) => typeof n === "number" && Number.isFinite(n))) {
      return invalid(`${at} must be [lon, lat, altitude_m], numbers`);
    }
    const [lon, lat, altitude] = position as number[];
    if (Math.abs(lon!) > 180) return invalid(`${at}: longitude ${lon} is outside -180..180`);
    if (Math.abs(lat!) > 90) return invalid(`${at}: latitude ${lat} is outside -90..90`);
    if (altitude === undefined) return invalid(`${at} has no altitude: give [lon, lat, altitude_m], the pressure altitude in metres (FL350 is 10668)`);
    if (altitude < ALTITUDE_RANGE_M[0] || altitude > ALTITUDE_RANGE_M[1]) return invalid(`${at}: altitude ${altitude} m is outside ${ALTITUDE_RANGE_M[0]}..${ALTITUDE_RANGE_M[1]} m (feet sent as metres?)`);
    // Between antipodes every great circle is as short as any other: no path is defined.
    if (i > 0 && arcBetween(positions[i - 1]!, [lon!, lat!]) > 180 - ANTIPODAL_DEGREES) {
      return invalid(`geometry.coordinates[${i - 1}] and [${i}] are antipodal, so no great circle between them is the route: add a position between them`);
    }
    positions.push([lon!, lat!]);
    altitudesM.push(altitude);
  }
  const properties = feature.properties;
  if (properties !== undefined && properties !== null && (typeof properties !== "object" || Array.isArray(properties))) return invalid("properties must be an object or null");
  const coordTimes = (properties as Record<string, unknown> | null | undefined)?.coordTimes;
  if (coordTimes === undefined) return { positions, altitudesM };
  if (!Array.isArray(coordTimes) || coordTimes.length !== coordinates.length) {
    return invalid(`properties.coordTimes must be an array of ${coordinates.length} instants, one per position`);
  }
  const timesMs: number[] = [];
  for (let i = 0; i < coordTimes.length; i++) {
    const text = coordTimes[i];
    const iso = typeof text === "string" ? normaliseInstant(text) : undefined;
    if (iso === undefined) return invalid(`properties.coordTimes[${i}] is not a date-time with a zone (e.g. 2026-06-01T06:00:00Z)`);
    // From the text as sent: its fraction of a second counts in the order (the normalised form drops it).
    const ms = parseInstant(text as string)!;
    if (i > 0 && ms < timesMs[i - 1]!) return invalid(`properties.coordTimes[${i}] (${(text as string).slice(0, 40)}) is before the time of the position before it`);
    timesMs.push(ms);
  }
  return { positions, altitudesM, timesMs };
}
