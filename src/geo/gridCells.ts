/**
 * Where a place lies on a model grid, in the grid's own coordinates (geographic lon/lat for a regular
 * grid, rotated lon/lat for a rotated pole): the cell holding it (the nearest centre along each axis; a
 * cell spans halfway to its neighbours' centres, the outer cells half a cell beyond theirs, and beyond
 * that a place is outside the domain) and the centres around it. Pure.
 *
 * @example supportOf(regularGeometry, -19.7, 63.98)?.cell // { x: 253, y: 390 }; undefined outside the domain
 */
import { geographicToRotated, rotatedToGeographic, wrapLongitude } from "../model/gridMapping.ts";

/** A model grid as the point-query artefact describes it (axes of cell centres, strictly monotonic). */
export type GridGeometry =
  | { kind: "regular"; x: number[]; y: number[] }
  | { kind: "rotated"; x: number[]; y: number[]; poleLat: number; poleLon: number; northPoleGridLon: number };

export interface Cell {
  x: number;
  y: number;
}

/** Grid coordinates (x: longitude or rotated longitude, continuous over the axis; y: latitude or rotated latitude). */
export function gridCoordinates(geometry: GridGeometry, lon: number, lat: number): [number, number] {
  const [gx, gy] = geometry.kind === "rotated" ? geographicToRotated(lon, lat, geometry.poleLat, geometry.poleLon, geometry.northPoleGridLon) : [lon, lat];
  const xs = geometry.x;
  // The axis may run past ±180 (a domain across the antimeridian): put the longitude on the axis' turn.
  return [wrapLongitude(gx, (xs[0]! + xs[xs.length - 1]!) / 2), gy];
}

/**
 * Where a place lies among the cell centres: the cell holding it, and the centres whose values a linear
 * interpolation (and so the contoured ash areas) draws on there: 1 at a centre, 2 on the line between two,
 * 4 inside the square of four. A place within SNAP_FRACTION of a cell of a centre counts as on it, so the
 * decimal degrees of a grid point that the file stores as float32 still select that point alone.
 */
export interface CellSupport {
  cell: Cell;
  support: Cell[];
  /** The same number for the same support: consecutive places of a route in one square of centres share it. */
  key: number;
}

export const SNAP_FRACTION = 1e-4;

export function supportOf(geometry: GridGeometry, lon: number, lat: number): CellSupport | undefined {
  const [gx, gy] = gridCoordinates(geometry, lon, lat);
  const fx = axisPosition(geometry.x, gx);
  const fy = axisPosition(geometry.y, gy);
  if (fx === undefined || fy === undefined) return undefined;
  const nx = geometry.x.length;
  // Between the last and first columns of a grid all the way round, both are around the place.
  const xs = goesRound(geometry.x) && (fx < -SNAP_FRACTION || fx > nx - 1 + SNAP_FRACTION) ? [nx - 1, 0] : around(fx, nx);
  const ys = around(fy, geometry.y.length);
  const support: Cell[] = [];
  for (const y of ys) for (const x of xs) support.push({ x, y });
  // (A seam pair starts at nx - 1, which no pair of neighbours inside the axis does: its key is its own.)
  const key = ((ys[0]! * nx + xs[0]!) * 2 + xs.length - 1) * 2 + ys.length - 1;
  return { cell: { x: Math.min(nx - 1, Math.max(0, Math.round(fx))), y: Math.min(geometry.y.length - 1, Math.max(0, Math.round(fy))) }, support, key };
}

/** Whether an axis of longitudes goes all the way round: its span and one step make 360°. */
function goesRound(axis: readonly number[]): boolean {
  const n = axis.length;
  const step = Math.abs(axis[n - 1]! - axis[n - 2]!);
  return Math.abs(Math.abs(axis[n - 1]! - axis[0]!) + step - 360) < step * 1e-3;
}

/** The centres on either side of a fractional index (one when on a centre or beyond the outer ones). */
function around(f: number, n: number): number[] {
  const low = Math.floor(f);
  const frac = f - low;
  if (frac <= SNAP_FRACTION) return [Math.max(0, Math.min(n - 1, low))];
  if (frac >= 1 - SNAP_FRACTION) return [Math.max(0, Math.min(n - 1, low + 1))];
  if (low < 0) return [0];
  if (low >= n - 1) return [n - 1];
  return [low, low + 1];
}

/** The fractional index of v on a strictly monotonic axis (centre i at i), or undefined beyond half a cell past either end. */
export function axisPosition(axis: readonly number[], v: number): number | undefined {
  const n = axis.length;
  const sign = axis[n - 1]! > axis[0]! ? 1 : -1;
  const s = v * sign;
  const first = axis[0]! * sign;
  const last = axis[n - 1]! * sign;
  const firstStep = axis[1]! * sign - first;
  const lastStep = last - axis[n - 2]! * sign;
  if (!(s >= first - firstStep / 2) || !(s <= last + lastStep / 2)) return undefined;
  if (s <= first) return (s - first) / firstStep;
  if (s >= last) return n - 1 + (s - last) / lastStep;
  let low = 0;
  let high = n - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (axis[mid]! * sign <= s) low = mid;
    else high = mid - 1;
  }
  const a = axis[low]! * sign;
  return low + (s - a) / (axis[low + 1]! * sign - a);
}

/** The smallest spacing of each axis, in degrees (rotated degrees for a rotated pole): computed once per grid. */
export function smallestSpacing(geometry: GridGeometry): { dx: number; dy: number } {
  const minStep = (axis: readonly number[]) => {
    let step = Infinity;
    for (let i = 1; i < axis.length; i++) step = Math.min(step, Math.abs(axis[i]! - axis[i - 1]!));
    return step;
  };
  return { dx: minStep(geometry.x), dy: minStep(geometry.y) };
}

/**
 * Half the smallest cell dimension, in degrees of arc, along a stretch whose grid latitude (y) stays
 * within ±`maxAbsY`: the sampling step of a route, so that no cell it crosses can be stepped over.
 * Rotated degrees are arc degrees too: a rotation of the sphere keeps distances.
 */
export function halfCellArcDegrees(spacing: { dx: number; dy: number }, maxAbsY: number): number {
  const shrink = Math.cos((Math.min(89, maxAbsY) * Math.PI) / 180);
  return Math.min(spacing.dy, spacing.dx * shrink) / 2;
}

/** An axis's outer edges, low then high: half a cell beyond its first and last centres, as supportOf reads it. */
function axisEdges(axis: readonly number[]): [number, number] {
  const first = axis[0]!;
  const last = axis[axis.length - 1]!;
  const before = axis.length > 1 ? (axis[1]! - first) / 2 : 0;
  const after = axis.length > 1 ? (last - axis[axis.length - 2]!) / 2 : 0;
  const a = first - before;
  const b = last + after;
  return a < b ? [a, b] : [b, a];
}

/**
 * The geographic box a grid's domain lies in (its cells' outer edges), to tell a client where the domain is:
 * exact for a regular grid; for a rotated pole the box around its edge, followed across the antimeridian
 * (`west` may then exceed `east`), and every longitude from the latitude up to a pole the domain holds.
 */
export function geographicExtent(geometry: GridGeometry): { south: number; north: number; west: number; east: number } {
  const [x0, x1] = axisEdges(geometry.x);
  const [y0, y1] = axisEdges(geometry.y);
  if (geometry.kind === "regular") return { south: y0, north: y1, west: wrapLongitude(x0, 0), east: wrapLongitude(x1, 0) };
  const { poleLat, poleLon, northPoleGridLon } = geometry;
  // The edge walked once around (south, east, north, west side), so that each point's longitude follows the last's.
  const SAMPLES = 256;
  const edge: Array<[number, number]> = [];
  const side = (from: [number, number], to: [number, number]) => {
    for (let i = 0; i < SAMPLES; i++) edge.push([from[0] + ((to[0] - from[0]) * i) / SAMPLES, from[1] + ((to[1] - from[1]) * i) / SAMPLES]);
  };
  side([x0, y0], [x1, y0]);
  side([x1, y0], [x1, y1]);
  side([x1, y1], [x0, y1]);
  side([x0, y1], [x0, y0]);
  let south = 90;
  let north = -90;
  let west = Infinity;
  let east = -Infinity;
  let lonBefore: number | undefined;
  for (const [x, y] of edge) {
    const [lonWrapped, lat] = rotatedToGeographic(x, y, poleLat, poleLon, northPoleGridLon);
    const lon = lonBefore === undefined ? lonWrapped : wrapLongitude(lonWrapped, lonBefore);
    lonBefore = lon;
    south = Math.min(south, lat);
    north = Math.max(north, lat);
    west = Math.min(west, lon);
    east = Math.max(east, lon);
  }
  const holds = (lat: number) => {
    const [x, y] = geographicToRotated(0, lat, poleLat, poleLon, northPoleGridLon);
    const [gx, gy] = [wrapLongitude(x, (x0 + x1) / 2), y];
    return gx >= x0 && gx <= x1 && gy >= y0 && gy <= y1;
  };
  if (holds(90) || holds(-90) || east - west >= 360) return { south: holds(-90) ? -90 : south, north: holds(90) ? 90 : north, west: -180, east: 180 };
  return { south, north, west: wrapLongitude(west, 0), east: wrapLongitude(east, 0) };
}
