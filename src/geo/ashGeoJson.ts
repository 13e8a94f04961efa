/**
 * GeoJSON (RFC 7946) of contoured ash areas, from the same steps and polygons as the KML (ashKml.ts): a
 * FeatureCollection with, per step and threshold interval, one Feature holding a MultiPolygon and the
 * band, interval, class, times and units as properties; the volcano as a Point; a step where the model gave
 * some cells no value, a Feature without geometry (kind "no-value") with the share of the grid. Exterior rings
 * counter-clockwise, holes clockwise (RFC 7946 §3.1.6), positions [lon, lat] at the KML's 4 decimals;
 * a polygon across the antimeridian cut into its parts on either side, longitudes within ±180 (§3.1.9,
 * antimeridian.ts), and the collection's bbox crossing 180° written west > east (§5.2).
 * Web map clients (Leaflet, OpenLayers, MapLibre) read it natively. Pure: identical bytes for identical input.
 *
 * @example JSON.parse(ashAreasGeoJson({ name, band, thresholds: [0.2, 2, 4], units: "mg/m³", steps }).toString()).features[1].properties.class // "low"
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { ashClasses, classOf } from "../contract/ashClasses.ts";
import { noValueText } from "../contract/missingValues.ts";
import { keptByRfc7946, rfc7946Bbox, rfc7946Polygon, rfc7946Position, unwrappedExtent } from "./antimeridian.ts";
import { roundedRings, roundPolygon, type AshKmlInput } from "./ashKml.ts";
import type { Polygon } from "./types.ts";

export const GEOJSON_CONTENT_TYPE = "application/geo+json";

interface Feature {
  type: "Feature";
  geometry: { type: "MultiPolygon"; coordinates: number[][][][] } | { type: "Point"; coordinates: number[] } | null;
  properties: Record<string, unknown>;
}

/** The document ashAreasGeoJson writes, in its key order. */
export interface AshGeoJson {
  type: "FeatureCollection";
  name: string;
  /** What the field is, e.g. "6-hour maximum concentration" (src/model/fieldMeaning.ts). */
  quantity: string;
  band: { id: string; label: string };
  thresholds: number[];
  units: "mg/m3";
  /** `[west, south, east, north]`, west > east across the antimeridian; absent when there is no geometry. */
  bbox?: number[];
  features: Feature[];
}

/** A polygon as the document writes it, or undefined when its exterior collapses in rounding. */
interface WrittenPolygon {
  /** Its parts (one, or one per side of 180°) as RFC 7946 polygons, JSON text joined by commas. */
  parts: string;
  /** The unwrapped extent of its exterior, for the collection's bbox. */
  extent: LatLonBoxModel | undefined;
}

/**
 * Exterior counter-clockwise, holes clockwise, rounded, repeated positions dropped and closed: the rings
 * the KML writes (ashKml.ts roundPolygon), read back from its text, cut at 180° and written as JSON once per
 * polygon object: the whole-run GeoJSON repeats every step's polygons, and writing them was most of its cost.
 */
function writtenPolygon(polygon: Polygon): WrittenPolygon | undefined {
  if (written.has(polygon)) return written.get(polygon);
  const text = roundPolygon(polygon);
  let result: WrittenPolygon | undefined;
  if (text) {
    const ringTexts = [text.outer, ...text.holes];
    const flat = ringTexts.map(flatPositions);
    // Nearly always: RFC 7946 keeps the rings as they are, and the KML's text of a position is JSON's text of
    // its numbers (formatPosition), so it is written as it is; otherwise as rfc7946Polygon cuts or turns it.
    if (keptByRfc7946(flat)) result = { parts: `[${ringTexts.map((ring) => `[[${ring.join("],[")}]]`).join(",")}]`, extent: flatExtent(flat[0]!) };
    else {
      const rings = roundedRings(text);
      result = { parts: rfc7946Polygon(rings).map((part) => JSON.stringify(part)).join(","), extent: unwrappedExtent(rings[0]!) };
    }
  }
  written.set(polygon, result);
  return result;
}

/** A ring's `lon,lat` texts (formatPosition's) as numbers, `[lon, lat, lon, lat, …]`. */
function flatPositions(ring: readonly string[]): Float64Array {
  const flat = new Float64Array(ring.length * 2);
  for (let i = 0; i < ring.length; i++) {
    const position = ring[i]!;
    const comma = position.indexOf(",");
    flat[2 * i] = decimal(position, 0, comma);
    flat[2 * i + 1] = decimal(position, comma + 1, position.length);
  }
  return flat;
}

const POWERS_OF_TEN = [1, 10, 100, 1000, 10000];

/**
 * The number `text.slice(from, to)` writes (`-12.3456`: at most KML_DECIMALS decimals), without making the
 * string: its digits as a whole number divided by a power of ten, one correctly rounded division of two exact
 * doubles, which is the double nearest the decimal, as Number() gives.
 */
function decimal(text: string, from: number, to: number): number {
  const negative = text.charCodeAt(from) === 45; // "-"
  let digits = 0;
  let decimals = -1;
  for (let i = negative ? from + 1 : from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) decimals = 0; // "."
    else {
      digits = digits * 10 + (c - 48);
      if (decimals >= 0) decimals++;
    }
  }
  const value = decimals > 0 ? digits / POWERS_OF_TEN[decimals]! : digits;
  return negative ? -value : value;
}

/** unwrappedExtent of a ring that needs no unwrapping (keptByRfc7946). */
function flatExtent(ring: Float64Array): LatLonBoxModel {
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  for (let i = 0; i < ring.length; i += 2) {
    west = Math.min(west, ring[i]!);
    east = Math.max(east, ring[i]!);
    south = Math.min(south, ring[i + 1]!);
    north = Math.max(north, ring[i + 1]!);
  }
  return { west, east, south, north };
}
const written = new WeakMap<Polygon, WrittenPolygon | undefined>();

/**
 * The document's bytes, exactly as `JSON.stringify` writes it (see AshGeoJson) with one trailing newline, put
 * together from each polygon's text (writtenPolygon).
 */
export function ashAreasGeoJson(input: AshKmlInput): Buffer {
  const classes = ashClasses(input.thresholds);
  const features: string[] = [];
  const extents: LatLonBoxModel[] = [];
  if (input.volcano) {
    const at = [input.volcano.lon, input.volcano.lat];
    const extent = unwrappedExtent([at]);
    if (extent) extents.push(extent);
    const volcano: Feature = { type: "Feature", geometry: { type: "Point", coordinates: rfc7946Position(at) }, properties: { kind: "volcano", name: input.volcano.name } };
    features.push(JSON.stringify(volcano));
  }
  for (const step of input.steps) {
    // Cells without a value at this step: an unlocated Feature (RFC 7946 §3.2, geometry null) that says how many,
    // so that a step with no ash feature does not read as "no ash" where nothing is known.
    if (step.missingShare !== undefined) {
      const properties = { kind: "no-value", band: input.band.label, share: step.missingShare, text: noValueText(step.missingShare), time: step.time, end: step.end };
      features.push(JSON.stringify({ type: "Feature", geometry: null, properties } satisfies Feature));
    }
    for (const area of step.bands) {
      const polygons = area.polygons.map(writtenPolygon).filter((p): p is WrittenPolygon => p !== undefined);
      if (polygons.length === 0) continue;
      for (const polygon of polygons) if (polygon.extent) extents.push(polygon.extent);
      const properties = {
        kind: "ash",
        // What the field is, as the KML and the maps say it (e.g. "6-hour maximum concentration").
        quantity: input.quantity,
        band: input.band.label,
        lower: area.lower,
        upper: area.upper,
        class: classOf(area.lower, classes)?.id ?? "none",
        units: "mg/m3",
        time: step.time,
        end: step.end,
      };
      // Positions past 180° (a model grid across the antimeridian) are cut there, each side within ±180.
      const coordinates = polygons.map((polygon) => polygon.parts).filter((parts) => parts !== "").join(",");
      features.push(`{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[${coordinates}]},"properties":${JSON.stringify(properties)}}`);
    }
  }
  const bbox = rfc7946Bbox(extents);
  const head: Omit<AshGeoJson, "features"> = {
    type: "FeatureCollection",
    name: input.name,
    quantity: input.quantity,
    band: { id: input.band.id, label: input.band.label },
    thresholds: [...input.thresholds],
    units: "mg/m3",
    ...(bbox ? { bbox } : {}),
  };
  // The features go last, as in AshGeoJson: the head's closing brace gives way to them.
  return Buffer.from(`${JSON.stringify(head).slice(0, -1)},"features":[${features.join(",")}]}\n`, "utf8");
}
