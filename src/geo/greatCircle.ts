/**
 * Great-circle paths on a sphere, through unit vectors: no special case at the antimeridian or the poles.
 * Positions are [lon, lat] in degrees; longitudes come back within -180..180. Pure.
 *
 * @example interpolateArc([170, 0], [-170, 0], 0.5) // [180, 0] (or -180): across the antimeridian, not through 0
 */
import type { Position } from "./types.ts";

const DEG = Math.PI / 180;

export type Vector = [number, number, number];

export function toVector([lon, lat]: Position): Vector {
  const cosLat = Math.cos(lat * DEG);
  return [cosLat * Math.cos(lon * DEG), cosLat * Math.sin(lon * DEG), Math.sin(lat * DEG)];
}

export function fromVector([x, y, z]: Vector): Position {
  return [Math.atan2(y, x) / DEG, Math.atan2(z, Math.hypot(x, y)) / DEG];
}

/** The angle between two positions, in degrees of arc (atan2 form: exact for tiny and near-antipodal arcs alike). */
export function arcBetween(a: Position, b: Position): number {
  const u = toVector(a);
  const v = toVector(b);
  const cross = Math.hypot(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]);
  return Math.atan2(cross, u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) / DEG;
}

/** The point a fraction `f` (0..1) of the way from a to b along the shorter great circle. */
export function interpolateArc(a: Position, b: Position, f: number): Position {
  const angle = arcBetween(a, b) * DEG;
  if (angle < 1e-12) return f < 0.5 ? a : b;
  const u = toVector(a);
  const v = toVector(b);
  const sin = Math.sin(angle);
  const wa = Math.sin((1 - f) * angle) / sin;
  const wb = Math.sin(f * angle) / sin;
  return fromVector([wa * u[0] + wb * v[0], wa * u[1] + wb * v[1], wa * u[2] + wb * v[2]]);
}

/** interpolateArc(a, b, f) for many f along one arc, with the arc's vectors and angle worked out once. */
export function arcInterpolator(a: Position, b: Position): (f: number) => Position {
  const angle = arcBetween(a, b) * DEG;
  if (angle < 1e-12) return (f) => (f < 0.5 ? a : b);
  const u = toVector(a);
  const v = toVector(b);
  const sin = Math.sin(angle);
  return (f) => {
    const wa = Math.sin((1 - f) * angle) / sin;
    const wb = Math.sin(f * angle) / sin;
    return fromVector([wa * u[0] + wb * v[0], wa * u[1] + wb * v[1], wa * u[2] + wb * v[2]]);
  };
}

/**
 * The largest |latitude| along the shorter great-circle arc from a to b, in degrees: an end, or the arc's
 * northernmost or southernmost point (where the circle turns) when that lies between them.
 *
 * @example farthestFromEquator([0, 60], [180, 60]) // 90: the arc goes over the pole
 */
export function farthestFromEquator(a: Position, b: Position): number {
  let farthest = Math.max(Math.abs(a[1]), Math.abs(b[1]));
  const u = toVector(a);
  const v = toVector(b);
  const n = cross(u, v);
  const length = Math.hypot(...n);
  if (length < 1e-12) return farthest; // the same place (antipodes have no arc of their own)
  // The circle's turning points: the pole's direction less its part along the circle's normal.
  const nz = n[2] / length;
  const turn: Vector = [(-nz * n[0]) / length, (-nz * n[1]) / length, 1 - nz * nz];
  const size = Math.hypot(...turn);
  if (size < 1e-12) return farthest; // the circle is the equator
  for (const sign of [1, -1]) {
    const p: Vector = [(sign * turn[0]) / size, (sign * turn[1]) / size, (sign * turn[2]) / size];
    // Between a and b when a→p and p→b both turn the way a→b does.
    if (dot(cross(u, p), n) >= 0 && dot(cross(p, v), n) >= 0) farthest = Math.max(farthest, Math.abs(Math.asin(Math.min(1, p[2]))) / DEG);
  }
  return farthest;
}

const cross = (a: Vector, b: Vector): Vector => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const dot = (a: Vector, b: Vector): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** Mean Earth radius (IUGG), for distances reported in kilometres. */
export const EARTH_RADIUS_KM = 6371.0088;
export const arcToKm = (degrees: number): number => degrees * DEG * EARTH_RADIUS_KM;
