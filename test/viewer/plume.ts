/**
 * Where the sample plume is, from the published KML itself: so the browser tests look at pixels where
 * ash must be drawn in one state and must not in another, and fail if the viewer draws the wrong step.
 * Pure geometry on lon/lat; points far from every edge, so anti-aliasing cannot decide the test.
 */
import { pointInRing, segmentDistance2 } from "../../src/geo/rings.ts";

type Ring = Array<[number, number]>;
/** A polygon: its outer ring, then its holes. */
export type AshPolygon = Ring[];

/** The polygons of a KML document (every Placemark's Polygon, holes included). */
export function kmlPolygons(kml: string): AshPolygon[] {
  const rings = (block: string, tag: "outerBoundaryIs" | "innerBoundaryIs"): Ring[] =>
    [...block.matchAll(new RegExp(`<${tag}>[\\s\\S]*?<coordinates>([^<]*)</coordinates>[\\s\\S]*?</${tag}>`, "g"))].map((m) =>
      m[1]!
        .trim()
        .split(/\s+/)
        .map((tuple) => tuple.split(",").map(Number) as [number, number]),
    );
  return [...kml.matchAll(/<Polygon>([\s\S]*?)<\/Polygon>/g)].map((m) => [...rings(m[1]!, "outerBoundaryIs"), ...rings(m[1]!, "innerBoundaryIs")]);
}

/** Whether any polygon covers the point (inside its outer ring, outside its holes). */
export function covered(polygons: readonly AshPolygon[], lon: number, lat: number): boolean {
  return polygons.some(([outer, ...holes]) => pointInRing([lon, lat], outer!) === 1 && !holes.some((hole) => pointInRing([lon, lat], hole) >= 0));
}

/** Distance in degrees of latitude (longitude scaled by cos(lat)) from the point to the nearest edge. */
function edgeDistance(polygons: readonly AshPolygon[], lon: number, lat: number): number {
  const k = Math.cos((lat * Math.PI) / 180);
  let best = Infinity;
  for (const polygon of polygons) {
    for (const ring of polygon) {
      for (let i = 1; i < ring.length; i++) {
        const [a, b] = [ring[i - 1]!, ring[i]!];
        best = Math.min(best, segmentDistance2([lon * k, lat], [a[0] * k, a[1]], [b[0] * k, b[1]]));
      }
    }
  }
  return Math.sqrt(best);
}

export interface Probe {
  lon: number;
  lat: number;
  /** Distance to the nearest edge of either state, in degrees. */
  margin: number;
}

/**
 * The point covered by ash in `withAsh` and not in `without`, farthest from every edge of both and at
 * least `avoid.degrees` from `avoid` (the volcano marker, drawn in both states); undefined when there is none.
 */
export function probeBetween(withAsh: readonly AshPolygon[], without: readonly AshPolygon[], avoid?: { lon: number; lat: number; degrees: number }): Probe | undefined {
  const points = withAsh.flatMap((polygon) => polygon[0]!);
  if (points.length === 0) return undefined;
  const lons = points.map((p) => p[0]);
  const lats = points.map((p) => p[1]);
  const [west, east, south, north] = [Math.min(...lons), Math.max(...lons), Math.min(...lats), Math.max(...lats)];
  let best: Probe | undefined;
  const n = 60;
  for (let i = 0; i <= n; i++) {
    for (let j = 0; j <= n; j++) {
      const lon = west + ((east - west) * i) / n;
      const lat = south + ((north - south) * j) / n;
      if (!covered(withAsh, lon, lat) || covered(without, lon, lat)) continue;
      if (avoid && Math.hypot((lon - avoid.lon) * Math.cos((lat * Math.PI) / 180), lat - avoid.lat) < avoid.degrees) continue;
      const margin = Math.min(edgeDistance(withAsh, lon, lat), edgeDistance(without, lon, lat));
      if (!best || margin > best.margin) best = { lon, lat, margin };
    }
  }
  return best;
}
