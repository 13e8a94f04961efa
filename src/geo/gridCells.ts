/**
 * Which model grid cell holds a place: the cell whose centre is nearest along each axis of the grid's
 * own coordinates (geographic lon/lat for a regular grid, rotated lon/lat for a rotated pole). A cell
 * spans halfway to its neighbours' centres; the outer cells reach half a cell beyond their centres, and
 * beyond that a place is outside the domain. Pure.
 *
 * @example cellOf(regularGeometry, -19.7, 63.98) // { x: 253, y: 390 } or undefined outside the domain
 */
import { geographicToRotated, wrapLongitude } from "../model/gridMapping.ts";

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

/** The cell holding a place, or undefined when it is outside the domain. */
export function cellOf(geometry: GridGeometry, lon: number, lat: number): Cell | undefined {
  const [gx, gy] = gridCoordinates(geometry, lon, lat);
  const x = axisCell(geometry.x, gx);
  const y = axisCell(geometry.y, gy);
  return x === -1 || y === -1 ? undefined : { x, y };
}

/** Index of the centre nearest to v on a strictly monotonic axis, or -1 beyond half a cell past either end. */
export function axisCell(axis: readonly number[], v: number): number {
  const n = axis.length;
  const sign = axis[n - 1]! > axis[0]! ? 1 : -1;
  const s = v * sign;
  const first = axis[0]! * sign;
  const last = axis[n - 1]! * sign;
  if (!(s >= first - (axis[1]! * sign - first) / 2) || !(s <= last + (last - axis[n - 2]! * sign) / 2)) return -1;
  // Largest i with axis[i] <= v (in increasing orientation), then the nearer of i and i + 1.
  let low = 0;
  let high = n - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (axis[mid]! * sign <= s) low = mid;
    else high = mid - 1;
  }
  if (low < n - 1 && s - axis[low]! * sign >= axis[low + 1]! * sign - s) return low + 1;
  return low;
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
