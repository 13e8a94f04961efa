/**
 * The 1-D axes behind a grid a file gives only as 2-D latitude/longitude arrays, so that a place can be
 * looked up in it (point and route queries): SNAP writes `latitude_longitude` grids that way, and a rotated
 * pole may come without its x/y axes. The grid is a product of two axes when every centre's longitude (or
 * rotated longitude) depends on its column alone and its latitude on its row alone. Pure.
 *
 * @example axesOf2dGrid(lon, lat, 150, 70) // { kind: "regular", x: [-45, -44.5, ...], y: [40, 40.5, ...] }
 */
import type { GridGeometry } from "../geo/gridCells.ts";
import { geographicToRotated, isStrictlyMonotonic, unwrapAxis, wrapLongitude } from "./gridMapping.ts";

export interface RotatedPole {
  poleLat: number;
  poleLon: number;
  northPoleGridLon: number;
}

/**
 * How far a centre may lie from its row's or column's axis value: a thousandth of the smallest cell, and
 * never less than 1e-4°, ten times the rounding of float32 degrees near 180° (~1e-5°), which a file's
 * arrays carry and a rotation of them compounds.
 */
const CELL_FRACTION = 1e-3;
const FLOAT32_SLACK_DEGREES = 1e-4;

/**
 * The axes of the cell centres `lon[y * nx + x]`, `lat[y * nx + x]` (geographic, or rotated by `pole`):
 * `fileAxes` when every centre agrees with them (the values the file defines), else each axis value the
 * mean over its column or row. Undefined when the centres are not a product of two strictly monotonic axes
 * (any other curvilinear grid), or the grid is narrower than 2 × 2.
 */
export function axesOf2dGrid(
  lon: ArrayLike<number>,
  lat: ArrayLike<number>,
  nx: number,
  ny: number,
  pole?: RotatedPole,
  fileAxes?: { x: readonly number[]; y: readonly number[] },
): GridGeometry | undefined {
  if (nx < 2 || ny < 2) return undefined;
  const gx = new Float64Array(nx * ny);
  const gy = new Float64Array(nx * ny);
  for (let k = 0; k < nx * ny; k++) {
    const [x, y] = pole ? geographicToRotated(lon[k]!, lat[k]!, pole.poleLat, pole.poleLon, pole.northPoleGridLon) : [lon[k]!, lat[k]!];
    gx[k] = x;
    gy[k] = y;
  }
  // Longitudes continuous along the first row, then every row's put on the first's turn (a grid across 180°).
  const firstRow = unwrapAxis(gx.subarray(0, nx));
  const x = new Float64Array(nx);
  const y = new Float64Array(ny);
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const k = j * nx + i;
      gx[k] = wrapLongitude(gx[k]!, firstRow[i]!);
      x[i]! += gx[k]! / ny;
      y[j]! += gy[k]! / nx;
    }
  }
  if (!isStrictlyMonotonic(x) || !isStrictlyMonotonic(y)) return undefined;
  const tolerance = (axis: Float64Array) => Math.max(FLOAT32_SLACK_DEGREES, CELL_FRACTION * smallestStep(axis));
  const xTolerance = tolerance(x);
  const yTolerance = tolerance(y);
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const k = j * nx + i;
      if (Math.abs(gx[k]! - x[i]!) > xTolerance || Math.abs(gy[k]! - y[j]!) > yTolerance) return undefined;
    }
  }
  const agrees = (given: readonly number[], axis: Float64Array, tolerance: number) => given.length === axis.length && given.every((value, i) => Math.abs(value - axis[i]!) <= tolerance);
  const axes = fileAxes && agrees(fileAxes.x, x, xTolerance) && agrees(fileAxes.y, y, yTolerance) ? { x: [...fileAxes.x], y: [...fileAxes.y] } : { x: Array.from(x), y: Array.from(y) };
  return pole ? { kind: "rotated", ...axes, ...pole } : { kind: "regular", ...axes };
}

function smallestStep(axis: Float64Array): number {
  let step = Infinity;
  for (let i = 1; i < axis.length; i++) step = Math.min(step, Math.abs(axis[i]! - axis[i - 1]!));
  return step;
}
