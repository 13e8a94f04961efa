/**
 * The axes behind 2-D latitude/longitude arrays: found for a geographic product grid (across 180° too) and
 * for a rotated pole, as the file's own x/y when they agree and from the arrays when x/y are bare indices;
 * refused for any other curvilinear grid, where a wrong axis would put a place in the wrong cell.
 */
import { describe, expect, it } from "vitest";
import { axesOf2dGrid } from "../../src/model/gridAxes.ts";
import { rotatedToGeographic, wrapLongitude } from "../../src/model/gridMapping.ts";

const POLE = { poleLat: 22, poleLon: 140, northPoleGridLon: 0 };

/** 2-D float32 arrays (as files store them) of the product of `xs` and `ys`, mapped by `toLonLat`. */
function arrays(xs: number[], ys: number[], toLonLat: (x: number, y: number) => [number, number]) {
  const lon = new Float32Array(xs.length * ys.length);
  const lat = new Float32Array(xs.length * ys.length);
  ys.forEach((y, j) =>
    xs.forEach((x, i) => {
      [lon[j * xs.length + i], lat[j * xs.length + i]] = toLonLat(x, y);
    }),
  );
  return { lon, lat };
}

const range = (from: number, step: number, count: number) => Array.from({ length: count }, (_, i) => from + i * step);
const maxDifference = (a: readonly number[], b: readonly number[]) => Math.max(...a.map((value, i) => Math.abs(value - b[i]!)));

describe("axesOf2dGrid", () => {
  it("finds the geographic axes of a latitude_longitude grid, continuous across the antimeridian", () => {
    const xs = range(170, 0.25, 60); // 170 … 184.75, written as -175.25 … beyond 180
    const ys = range(50, 0.25, 20);
    const { lon, lat } = arrays(xs, ys, (x, y) => [wrapLongitude(x, 0), y]);
    const geometry = axesOf2dGrid(lon, lat, xs.length, ys.length);
    expect(geometry?.kind).toBe("regular");
    expect(maxDifference(geometry!.x, xs)).toBeLessThan(1e-5);
    expect(maxDifference(geometry!.y, ys)).toBeLessThan(1e-5);
  });

  it("finds the rotated axes of a rotated grid from its arrays, or keeps the file's own when they agree", () => {
    const xs = range(-12, 0.5, 30);
    const ys = range(-4, 0.5, 20);
    const { lon, lat } = arrays(xs, ys, (x, y) => rotatedToGeographic(x, y, POLE.poleLat, POLE.poleLon));
    const derived = axesOf2dGrid(lon, lat, xs.length, ys.length, POLE);
    expect(derived).toMatchObject({ kind: "rotated", ...POLE });
    expect(maxDifference(derived!.x, xs)).toBeLessThan(1e-4);
    expect(maxDifference(derived!.y, ys)).toBeLessThan(1e-4);
    expect(derived!.x).not.toEqual(xs); // means of float32 arrays, not the exact axis

    expect(axesOf2dGrid(lon, lat, xs.length, ys.length, POLE, { x: xs, y: ys })).toEqual({ kind: "rotated", x: xs, y: ys, ...POLE });
    // x/y written as cell indices: not the grid's coordinates, so the arrays decide.
    const indices = { x: range(0, 1, xs.length), y: range(0, 1, ys.length) };
    expect(axesOf2dGrid(lon, lat, xs.length, ys.length, POLE, indices)).toEqual(derived);
  });

  it("finds rotated axes across the rotated ±180°, and with a north_pole_grid_longitude", () => {
    const pole = { poleLat: 40, poleLon: -170, northPoleGridLon: 30 };
    const xs = range(170, 0.5, 30); // rotated longitudes 170 … 184.5, i.e. past -180 as the rotation gives them
    const ys = range(-5, 0.5, 20);
    const { lon, lat } = arrays(xs, ys, (x, y) => rotatedToGeographic(x, y, pole.poleLat, pole.poleLon, pole.northPoleGridLon));
    const geometry = axesOf2dGrid(lon, lat, xs.length, ys.length, pole);
    expect(geometry).toMatchObject({ kind: "rotated", ...pole });
    expect(maxDifference(geometry!.x, xs)).toBeLessThan(1e-4);
    expect(maxDifference(geometry!.y, ys)).toBeLessThan(1e-4);
    // Without the grid longitude of the pole, the same arrays are rotated 30° the other way: still a product, other axes.
    const shifted = axesOf2dGrid(lon, lat, xs.length, ys.length, { ...pole, northPoleGridLon: 0 });
    expect(maxDifference(shifted!.x, xs.map((x) => x - 30))).toBeLessThan(1e-4);
  });

  it("refuses grids that are not a product of two axes", () => {
    const xs = range(-20, 0.5, 12);
    const ys = range(60, 0.5, 8);
    // A rotated grid read without its pole: its geographic latitudes change along each row.
    const rotated = arrays(xs, ys, (x, y) => rotatedToGeographic(x, y, POLE.poleLat, POLE.poleLon));
    expect(axesOf2dGrid(rotated.lon, rotated.lat, xs.length, ys.length)).toBeUndefined();
    // Sheared by a tenth of a cell per column (as a Lambert or polar-stereographic grid bends).
    const sheared = arrays(xs, ys, (x, y) => [x, y + 0.01 * (x + 20)]);
    expect(axesOf2dGrid(sheared.lon, sheared.lat, xs.length, ys.length)).toBeUndefined();
    // One centre a fiftieth of a cell off, more than float32 rounding can explain.
    const nudged = arrays(xs, ys, (x, y) => [x, y]);
    nudged.lat[3 * xs.length + 5] = nudged.lat[3 * xs.length + 5]! + 0.01;
    expect(axesOf2dGrid(nudged.lon, nudged.lat, xs.length, ys.length)).toBeUndefined();
    // A column repeated: not strictly monotonic.
    const repeated = arrays([...xs.slice(0, 5), xs[4]!, ...xs.slice(6)], ys, (x, y) => [x, y]);
    expect(axesOf2dGrid(repeated.lon, repeated.lat, xs.length, ys.length)).toBeUndefined();
    // A single row has no spacing to look a place up by.
    const row = arrays(xs, [60], (x, y) => [x, y]);
    expect(axesOf2dGrid(row.lon, row.lat, xs.length, 1)).toBeUndefined();
  });

  it("takes float32 rounding as agreement: the nudge below it still finds the axes", () => {
    const xs = range(-20, 0.5, 12);
    const ys = range(60, 0.5, 8);
    const nudged = arrays(xs, ys, (x, y) => [x, y]);
    nudged.lat[3 * xs.length + 5] = nudged.lat[3 * xs.length + 5]! + 4e-5;
    const geometry = axesOf2dGrid(nudged.lon, nudged.lat, xs.length, ys.length);
    expect(geometry?.kind).toBe("regular");
    expect(maxDifference(geometry!.y, ys)).toBeLessThan(1e-5);
  });
});
