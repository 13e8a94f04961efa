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
 * @example ashAreasGeoJson({ name, band, thresholds: [0.2, 2, 4], units: "mg/m³", steps }).features[0].properties.class // "low"
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { ashClasses, classOf } from "../contract/ashClasses.ts";
import { noValueText } from "../contract/missingValues.ts";
import { rfc7946Bbox, rfc7946Polygon, rfc7946Position, unwrappedExtent } from "./antimeridian.ts";
import { roundedRings, roundPolygon, type AshKmlInput } from "./ashKml.ts";
import type { Polygon } from "./types.ts";

export const GEOJSON_CONTENT_TYPE = "application/geo+json";

interface Feature {
  type: "Feature";
  geometry: { type: "MultiPolygon"; coordinates: number[][][][] } | { type: "Point"; coordinates: number[] } | null;
  properties: Record<string, unknown>;
}

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

/**
 * Exterior counter-clockwise, holes clockwise, rounded, repeated positions dropped and closed: the rings
 * the KML writes (ashKml.ts roundPolygon), read back from its text; undefined when the exterior collapses.
 */
function polygonCoordinates(polygon: Polygon): number[][][] | undefined {
  if (coordinatesOf.has(polygon)) return coordinatesOf.get(polygon);
  const text = roundPolygon(polygon);
  const coordinates = text && roundedRings(text);
  coordinatesOf.set(polygon, coordinates);
  return coordinates;
}
/** Per polygon object, as the KML's text: the whole-run GeoJSON repeats every step's polygons. */
const coordinatesOf = new WeakMap<Polygon, number[][][] | undefined>();

/** A box of the extents (unwrapped) of everything written, for the bbox. */
function extentOf(positions: readonly number[][], extents: LatLonBoxModel[]): void {
  const extent = unwrappedExtent(positions);
  if (extent) extents.push(extent);
}

export function ashAreasGeoJson(input: AshKmlInput): AshGeoJson {
  const classes = ashClasses(input.thresholds);
  const features: Feature[] = [];
  const extents: LatLonBoxModel[] = [];
  if (input.volcano) {
    const at = [input.volcano.lon, input.volcano.lat];
    extentOf([at], extents);
    features.push({ type: "Feature", geometry: { type: "Point", coordinates: rfc7946Position(at) }, properties: { kind: "volcano", name: input.volcano.name } });
  }
  for (const step of input.steps) {
    // Cells without a value at this step: an unlocated Feature (RFC 7946 §3.2, geometry null) that says how many,
    // so that a step with no ash feature does not read as "no ash" where nothing is known.
    if (step.missingShare !== undefined) {
      const properties = { kind: "no-value", band: input.band.label, share: step.missingShare, text: noValueText(step.missingShare), time: step.time, end: step.end };
      features.push({ type: "Feature", geometry: null, properties });
    }
    for (const area of step.bands) {
      const polygons = area.polygons.map(polygonCoordinates).filter((p): p is number[][][] => p !== undefined);
      if (polygons.length === 0) continue;
      for (const polygon of polygons) extentOf(polygon[0]!, extents);
      features.push({
        type: "Feature",
        // Positions past 180° (a model grid across the antimeridian) are cut there, each side within ±180.
        geometry: { type: "MultiPolygon", coordinates: polygons.flatMap((polygon) => rfc7946Polygon(polygon)) },
        properties: {
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
        },
      });
    }
  }
  const bbox = rfc7946Bbox(extents);
  return {
    type: "FeatureCollection",
    name: input.name,
    quantity: input.quantity,
    band: { id: input.band.id, label: input.band.label },
    thresholds: [...input.thresholds],
    units: "mg/m3",
    ...(bbox ? { bbox } : {}),
    features,
  };
}
