/**
 * GeoJSON (RFC 7946) of a forecaster's KML, converted as a format, not redrawn (as GDAL's ogr2ogr does):
 * one Feature per Placemark, in document order, its Point, LineString (and LinearRing), Polygon and
 * MultiGeometry with the positions as given, longitude first, an altitude only where the KML gives one;
 * rings closed, exteriors counter-clockwise and holes clockwise (§3.1.6), anything across the
 * antimeridian cut there (§3.1.9, antimeridian.ts). Properties: what the KML states and nothing guessed
 * (name, description as plain text, the band when a name or ExtendedData states exactly one, the time
 * primitive's instants; null otherwise), and `source: "forecaster"`. What has no GeoJSON counterpart
 * (overlays, network links, models, tracks, a geometry with too few positions) is left out and counted in
 * the collection's `left_out`. Pure: identical bytes for identical input.
 *
 * @example forecasterGeoJson({ name: "Hekla advisory", placemarks: [...], leftOut: ["ScreenOverlay"] }).left_out // { count: 1, kinds: { ScreenOverlay: 1 } }
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { plainText } from "../formats/plainText.ts";
import { rfc7946Bbox, rfc7946LineString, rfc7946Polygon, rfc7946Position, unwrappedExtent, type GeoPosition } from "./antimeridian.ts";
import { readStatedBand } from "./flightLevel.ts";

/** A KML geometry as read: positions as written (`[lon, lat]` or `[lon, lat, alt]`). */
export type KmlGeometry =
  | { kind: "Point" | "LineString" | "LinearRing"; positions: GeoPosition[] }
  | { kind: "Polygon"; outer?: GeoPosition[]; inner: GeoPosition[][] }
  | { kind: "MultiGeometry"; geometries: KmlGeometry[] }
  /** A geometry GeoJSON has no counterpart for (Model, gx:Track, gx:MultiTrack), by element name. */
  | { kind: "other"; element: string };

/** The time primitive that applies to a Placemark (its own, else its nearest container's), as normalised instants. */
export type KmlTime = { begin?: string; end?: string } | { when: string };

export interface KmlPlacemark {
  name?: string;
  /** As written: may be HTML (KML 2.2 descriptions are shown as HTML). */
  description?: string;
  time?: KmlTime;
  /** ExtendedData's `band` (Data or SimpleData named band), when the Placemark has one. */
  extendedBand?: string;
  /** Names of the Folders and Documents holding the Placemark, the nearest first. */
  containers: string[];
  geometry?: KmlGeometry;
}

export interface KmlFeatures {
  /** The Document's (or first Folder's) name. */
  name?: string;
  placemarks: KmlPlacemark[];
  /** Element names of features with no GeoJSON counterpart (ScreenOverlay, GroundOverlay, PhotoOverlay, NetworkLink). */
  leftOut: string[];
}

type Geometry =
  | { type: "Point"; coordinates: GeoPosition }
  | { type: "MultiPoint" | "LineString"; coordinates: GeoPosition[] }
  | { type: "MultiLineString" | "Polygon"; coordinates: GeoPosition[][] }
  | { type: "MultiPolygon"; coordinates: GeoPosition[][][] }
  | { type: "GeometryCollection"; geometries: Geometry[] };

type Leaf = { type: "Point"; coordinates: GeoPosition } | { type: "LineString"; coordinates: GeoPosition[] } | { type: "Polygon"; coordinates: GeoPosition[][] };

export interface ForecasterFeature {
  type: "Feature";
  geometry: Geometry | null;
  properties: {
    source: "forecaster";
    name: string | null;
    description: string | null;
    /** `SFC/FL200`, `FL200/350` ... as stated by ExtendedData band, else the Placemark's name, else its nearest container's. */
    band: string | null;
    lower_fl: number | null;
    upper_fl: number | null;
    /** TimeSpan begin and end. */
    time: string | null;
    end: string | null;
    /** TimeStamp when. */
    timestamp: string | null;
  };
}

export interface ForecasterGeoJson {
  type: "FeatureCollection";
  name: string | null;
  source: "forecaster";
  /** Features and geometries of the KML with no GeoJSON counterpart, by KML element name. */
  left_out: { count: number; kinds: Record<string, number> };
  bbox?: number[];
  features: ForecasterFeature[];
}

const equal = (a: GeoPosition, b: GeoPosition): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** A ring closed; undefined when it has fewer than three other positions (RFC 7946: at least four). The KML reader warns of such rings by the same rule. */
export function closedRing(ring: readonly GeoPosition[]): GeoPosition[] | undefined {
  if (ring.length === 0) return undefined;
  const closed = equal(ring[0]!, ring[ring.length - 1]!) ? [...ring] : [...ring, ring[0]!];
  return closed.length >= 4 ? closed : undefined;
}

/** The geometry's leaves (MultiGeometry flattened), each checked; what cannot be converted goes to `leftOut`. */
function leavesOf(geometry: KmlGeometry, leaves: Leaf[], leftOut: string[]): void {
  switch (geometry.kind) {
    case "Point":
      if (geometry.positions.length === 1) leaves.push({ type: "Point", coordinates: geometry.positions[0]! });
      else leftOut.push("Point");
      return;
    case "LineString":
    case "LinearRing":
      // A LinearRing on its own is a line, as GDAL reads it.
      if (geometry.positions.length >= 2) leaves.push({ type: "LineString", coordinates: geometry.positions });
      else leftOut.push(geometry.kind);
      return;
    case "Polygon": {
      const rings = [geometry.outer, ...geometry.inner].map((ring) => (ring ? closedRing(ring) : undefined));
      if (rings.every((ring) => ring !== undefined)) leaves.push({ type: "Polygon", coordinates: rings });
      else leftOut.push("Polygon");
      return;
    }
    case "MultiGeometry":
      for (const child of geometry.geometries) leavesOf(child, leaves, leftOut);
      return;
    case "other":
      leftOut.push(geometry.element);
  }
}

/** A leaf as RFC 7946 wants it: a polygon or line across the antimeridian becomes a Multi* of its parts. */
function rfc7946Leaf(leaf: Leaf): Geometry {
  if (leaf.type === "Point") return { type: "Point", coordinates: rfc7946Position(leaf.coordinates) };
  if (leaf.type === "LineString") {
    const parts = rfc7946LineString(leaf.coordinates);
    return parts.length === 1 ? { type: "LineString", coordinates: parts[0]! } : { type: "MultiLineString", coordinates: parts };
  }
  const parts = rfc7946Polygon(leaf.coordinates);
  return parts.length === 1 ? { type: "Polygon", coordinates: parts[0]! } : { type: "MultiPolygon", coordinates: parts };
}

/** One geometry from the leaves: the leaf itself, a Multi* of leaves of one type, else a GeometryCollection. */
function geometryOf(leaves: readonly Leaf[], multi: boolean): Geometry | null {
  if (leaves.length === 0) return null;
  if (!multi) return rfc7946Leaf(leaves[0]!);
  const types = new Set(leaves.map((leaf) => leaf.type));
  if (types.size > 1) return { type: "GeometryCollection", geometries: leaves.map(rfc7946Leaf) };
  const points: GeoPosition[] = [];
  const lines: GeoPosition[][] = [];
  const polygons: GeoPosition[][][] = [];
  for (const leaf of leaves) {
    if (leaf.type === "Point") points.push(rfc7946Position(leaf.coordinates));
    else if (leaf.type === "LineString") lines.push(...rfc7946LineString(leaf.coordinates));
    else polygons.push(...rfc7946Polygon(leaf.coordinates));
  }
  if (points.length) return { type: "MultiPoint", coordinates: points };
  if (lines.length) return { type: "MultiLineString", coordinates: lines };
  return { type: "MultiPolygon", coordinates: polygons };
}

/** The band a Placemark states: ExtendedData band alone when it has one, else the first of its name and containers' names stating any. */
function stateBand(placemark: KmlPlacemark): ReturnType<typeof readStatedBand> {
  if (placemark.extendedBand !== undefined) return readStatedBand(placemark.extendedBand) ?? null;
  for (const text of [placemark.name ?? "", ...placemark.containers]) {
    const band = readStatedBand(text);
    if (band !== undefined) return band;
  }
  return undefined;
}

export function forecasterGeoJson(input: KmlFeatures): ForecasterGeoJson {
  const leftOut = [...input.leftOut];
  const extents: LatLonBoxModel[] = [];
  let lowest = Infinity;
  let highest = -Infinity;
  const features = input.placemarks.map((placemark): ForecasterFeature => {
    const leaves: Leaf[] = [];
    if (placemark.geometry) leavesOf(placemark.geometry, leaves, leftOut);
    for (const leaf of leaves) {
      const positions = leaf.type === "Point" ? [leaf.coordinates] : leaf.type === "LineString" ? leaf.coordinates : leaf.coordinates.flat();
      const extent = unwrappedExtent(leaf.type === "Polygon" ? leaf.coordinates[0]! : positions);
      if (extent) extents.push(extent);
      for (const p of positions) {
        if (p.length < 3) continue;
        lowest = Math.min(lowest, p[2]!);
        highest = Math.max(highest, p[2]!);
      }
    }
    const band = stateBand(placemark);
    const time = placemark.time;
    const description = placemark.description === undefined ? "" : plainText(placemark.description);
    return {
      type: "Feature",
      geometry: geometryOf(leaves, placemark.geometry?.kind === "MultiGeometry"),
      properties: {
        source: "forecaster",
        name: placemark.name?.trim() || null,
        description: description || null,
        band: band?.label ?? null,
        lower_fl: band?.lowerFl ?? null,
        upper_fl: band?.upperFl ?? null,
        time: time && "begin" in time ? time.begin ?? null : null,
        end: time && "end" in time ? time.end ?? null : null,
        timestamp: time && "when" in time ? time.when : null,
      },
    };
  });
  const kinds: Record<string, number> = {};
  for (const kind of [...leftOut].sort()) kinds[kind] = (kinds[kind] ?? 0) + 1;
  const bbox = rfc7946Bbox(extents, lowest <= highest ? { min: lowest, max: highest } : undefined);
  return {
    type: "FeatureCollection",
    name: input.name?.trim() || null,
    source: "forecaster",
    left_out: { count: leftOut.length, kinds },
    ...(bbox ? { bbox } : {}),
    features,
  };
}
