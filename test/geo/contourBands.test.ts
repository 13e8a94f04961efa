import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boxAtOrAbove, boxOfCellsAtOrAbove, contourBands } from "../../src/geo/contourBands.ts";
import { isorings } from "../../src/geo/isorings.ts";
import { findCrossingRings, isCounterClockwise, pointInRing, polygonArea, polygonAreaKm2, ringArea, segmentDistance2 } from "../../src/geo/rings.ts";
import type { GridToLonLat, Polygon, Position, ThresholdBand } from "../../src/geo/types.ts";

const THRESHOLDS = [0.2, 2, 4] as const;
const identity: GridToLonLat = (x, y) => [x, y];
/** A regular 1° grid, row 0 in the north (as EEMEP files are often read): lon = -40 + x, lat = 40 - y. */
const regular: GridToLonLat = (x, y) => [-40 + x, 40 - y];

function field(nx: number, ny: number, f: (x: number, y: number) => number): Float32Array {
  const values = new Float32Array(nx * ny);
  for (let y = 0; y < ny; y++) for (let x = 0; x < nx; x++) values[y * nx + x] = f(x, y);
  return values;
}

/** Peak 10 at (cx, cy), standard deviation s cells: the level c is a circle of radius s·√(2 ln(10/c)). */
const gaussian = (cx: number, cy: number, s: number, peak = 10) => (x: number, y: number) =>
  peak * Math.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s));
const gaussianRadius = (s: number, c: number, peak = 10): number => s * Math.sqrt(2 * Math.log(peak / c));

const rings = (band: ThresholdBand): Position[][] => band.polygons.flatMap((p) => [p.outer, ...p.holes]);
const bandArea = (band: ThresholdBand): number => band.polygons.reduce((s, p) => s + polygonArea(p), 0);
const areaAtOrAbove = (bands: ThresholdBand[], i: number): number => bands.slice(i).reduce((s, b) => s + bandArea(b), 0);
const vertexDistances = (ring: Position[], centre: Position): number[] => ring.map((p) => Math.hypot(p[0] - centre[0], p[1] - centre[1]));

/** Inside the polygon: inside its outer ring and in none of its holes. */
function inPolygon(p: Position, polygon: Polygon): boolean {
  return pointInRing(p, polygon.outer) === 1 && polygon.holes.every((h) => pointInRing(p, h) === -1);
}

/** What every band must be: closed rings of ≥ 4 positions, outer CCW, holes CW inside it, nothing crossing. */
function expectValid(bands: ThresholdBand[], thresholds: readonly number[] = THRESHOLDS): void {
  expect(bands.map((b) => [b.lower, b.upper])).toEqual(thresholds.map((t, i) => [t, thresholds[i + 1] ?? null]));
  for (const band of bands) {
    for (const polygon of band.polygons) {
      for (const ring of [polygon.outer, ...polygon.holes]) {
        expect(ring.length).toBeGreaterThanOrEqual(4);
        expect(ring[0]).toEqual(ring[ring.length - 1]);
        for (const p of ring) expect(Number.isFinite(p[0]) && Number.isFinite(p[1])).toBe(true);
      }
      expect(isCounterClockwise(polygon.outer)).toBe(true);
      for (const hole of polygon.holes) {
        expect(isCounterClockwise(hole)).toBe(false);
        expect(hole.every((p) => pointInRing(p, polygon.outer) >= 0)).toBe(true);
        expect(hole.some((p) => pointInRing(p, polygon.outer) === 1)).toBe(true);
      }
    }
    // No ring of a band crosses or overlaps another (touching at a vertex is allowed).
    expect(findCrossingRings(rings(band)).size).toBe(0);
    // Polygons of a band are disjoint: no outer ring has a position strictly inside another polygon.
    for (const a of band.polygons) {
      for (const b of band.polygons) {
        if (a !== b) expect(b.outer.some((p) => inPolygon(p, a))).toBe(false);
      }
    }
  }
}

describe("contourBands: exact small cases", () => {
  it("one cell above the threshold gives a diamond through the half-way points", () => {
    const bands = contourBands(new Float32Array([0, 0, 0, 0, 1, 0, 0, 0, 0]), 3, 3, [0.5], identity);
    expect(bands).toEqual([{ lower: 0.5, upper: null, polygons: [{ outer: [[1, 0.5], [1.5, 1], [1, 1.5], [0.5, 1], [1, 0.5]], holes: [] }] }]);
  });

  it("interpolates linearly between cell centres, and the hole of a band is the next band's outer ring reversed", () => {
    const values = new Float32Array([0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]);
    const [low, high] = contourBands(values, 5, 5, [0.5, 2], identity, { simplifyCells: 0 });
    // 2 is crossed a third of the way from the centre cell (4) to its neighbours (1).
    expect(high!.polygons).toEqual([{ outer: [[2, 4 / 3], [8 / 3, 2], [2, 8 / 3], [4 / 3, 2], [2, 4 / 3]], holes: [] }]);
    expect(low!.polygons).toHaveLength(1);
    expect(low!.polygons[0]!.holes).toEqual([high!.polygons[0]!.outer.slice().reverse()]);
    expect(low!.polygons[0]!.outer).toEqual([
      [1, 0.5], [2, 0.5], [2.5, 1], [3, 1.5], [3.5, 2], [3.5, 3], [3, 3.5], [2, 3.5], [1.5, 3], [1, 2.5], [0.5, 2], [0.5, 1], [1, 0.5],
    ]);
    expect(polygonArea(low!.polygons[0]!) + polygonArea(high!.polygons[0]!)).toBeCloseTo(ringArea(low!.polygons[0]!.outer), 12);
  });

  it("joins the high corners of a saddle, either diagonal (the ash may connect), but never across two missing corners", () => {
    const saddle = (values: number[]) => contourBands(new Float32Array(values), 4, 4, [0.5], identity, { simplifyCells: 0 })[0]!.polygons;
    expect(saddle([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])).toEqual([
      { outer: [[1, 0.5], [1.5, 1], [2, 1.5], [2.5, 2], [2, 2.5], [1.5, 2], [1, 1.5], [0.5, 1], [1, 0.5]], holes: [] },
    ]);
    expect(saddle([0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])).toEqual([
      { outer: [[2, 0.5], [2.5, 1], [2, 1.5], [1.5, 2], [1, 2.5], [0.5, 2], [1, 1.5], [1.5, 1], [2, 0.5]], holes: [] },
    ]);
    // Between two missing corners a joined saddle would be a bridge of no width along the diagonal.
    expect(saddle([0, 0, 0, 0, 0, 1, Number.NaN, 0, 0, Number.NaN, 1, 0, 0, 0, 0, 0])).toEqual([
      { outer: [[1, 0.5], [1, 1], [0.5, 1], [1, 0.5]], holes: [] },
      { outer: [[2, 2], [2.5, 2], [2, 2.5], [2, 2]], holes: [] },
    ]);
  });

  it("returns empty bands fast for an empty, all-below or all-NaN field", () => {
    const empty = [
      { lower: 0.2, upper: 2, polygons: [] },
      { lower: 2, upper: 4, polygons: [] },
      { lower: 4, upper: null, polygons: [] },
    ];
    expect(contourBands(new Float32Array(500 * 800), 500, 800, THRESHOLDS, identity)).toEqual(empty);
    expect(contourBands(new Float32Array(100).fill(NaN), 10, 10, THRESHOLDS, identity)).toEqual(empty);
    expect(contourBands(new Float32Array(100).fill(0.19), 10, 10, THRESHOLDS, identity)).toEqual(empty);
    expect(contourBands(new Float32Array(4), 2, 2, [], identity)).toEqual([]);
    expect(boxAtOrAbove(new Float32Array([0, 0, 0, 0, 0, 1, NaN, 0, 0, 0, 2, 0]), 4, 3, 1)).toEqual({ x0: 1, y0: 1, x1: 2, y1: 2 });
    expect(boxAtOrAbove(new Float32Array([NaN, 0]), 2, 1, 0.5)).toBeUndefined();
  });

  it("given the cells of a field that are not 0, finds the same areas from them (any order, a few zero cells among them)", () => {
    // Plumes, a missing block, ash on the grid's edges; the cells listed as a reader lists them, then shuffled with zeros.
    const values = field(60, 40, (x, y) => (x >= 20 && x < 24 && y >= 10 && y < 14 ? NaN : gaussian(12, 9, 3)(x, y) + gaussian(59, 39, 2, 5)(x, y) + gaussian(0, 20, 1.5, 3)(x, y)));
    for (let i = 0; i < values.length; i++) if (values[i]! < 0.05) values[i] = 0;
    const nonZero = Array.from(values.keys()).filter((i) => values[i] !== 0);
    const shuffled = [...nonZero, 0, 61, 2399].reverse();
    for (const thresholds of [THRESHOLDS, [0.5], [3, 6]]) {
      const whole = contourBands(values, 60, 40, thresholds, regular);
      expect(whole.some((band) => band.polygons.length > 0)).toBe(true);
      expect(contourBands(values, 60, 40, thresholds, regular, { cells: Uint32Array.from(nonZero) })).toEqual(whole);
      expect(contourBands(values, 60, 40, thresholds, regular, { cells: shuffled })).toEqual(whole);
    }
    for (const t of [0.05, 0.5, 3, 9.9, 10]) expect(boxOfCellsAtOrAbove(values, 60, shuffled, t), `box at ${t}`).toEqual(boxAtOrAbove(values, 60, 40, t));
    expect(boxOfCellsAtOrAbove(new Float32Array([0, 0, 0, 0, 0, 1, NaN, 0, 0, 0, 2, 0]), 4, [5, 6, 10], 1)).toEqual({ x0: 1, y0: 1, x1: 2, y1: 2 });
    expect(contourBands(values, 60, 40, [10], regular, { cells: nonZero })).toEqual([{ lower: 10, upper: null, polygons: [] }]);
    // At or below 0 the zero cells count: the list is not enough, and the whole field is read.
    const small = field(30, 20, (x, y) => (Math.abs(x - 15) < 2 && Math.abs(y - 10) < 2 ? 5 : 0));
    const smallCells = Array.from(small.keys()).filter((i) => small[i] !== 0);
    const atZero = contourBands(small, 30, 20, [0, 1], regular, { cells: smallCells });
    expect(atZero).toEqual(contourBands(small, 30, 20, [0, 1], regular));
    expect(atZero[0]!.polygons.length).toBeGreaterThan(0);
  });

  it("rejects bad arguments with a reason", () => {
    expect(() => contourBands(new Float32Array(5), 2, 2, THRESHOLDS, identity)).toThrow(/5 values, expected nx × ny = 4/);
    expect(() => contourBands(new Float32Array(4), 2, 2, [2, 0.2], identity)).toThrow(/increase strictly/);
    expect(() => contourBands(new Float32Array(4), 2, 2, [NaN], identity)).toThrow(/finite/);
    expect(() => contourBands(new Float32Array(4), 2, 2, [1], identity, { simplifyCells: 1 })).toThrow(/simplifyCells/);
    expect(() => contourBands(new Float32Array(0), 0, 0, [1], identity)).toThrow(/positive integers/);
  });
});

describe("isorings in a box cut from the grid", () => {
  /** The w × h cells from (x0, y0), −Infinity outside the grid (as contourBands cuts its boxes). */
  const cut = (values: Float32Array, nx: number, ny: number, x0: number, y0: number, w: number, h: number): Float64Array =>
    Float64Array.from({ length: w * h }, (_, k) => {
      const x = x0 + (k % w);
      const y = y0 + Math.floor(k / w);
      return x >= 0 && x < nx && y >= 0 && y < ny ? values[y * nx + x]! : -Infinity;
    });

  it("gives the whole grid's rings bit for bit, in any box with a margin of one cell around the level's cells", () => {
    // Interpolated crossings everywhere, a missing block, and ash at the grid's edge (the margin outside the grid).
    const nx = 40;
    const ny = 30;
    const values = field(nx, ny, (x, y) => (x >= 20 && x < 23 && y >= 12 && y < 15 ? Number.NaN : gaussian(14.3, 13.7, 5)(x, y) + gaussian(37.2, 2.4, 3, 6)(x, y)));
    for (const t of THRESHOLDS) {
      const whole = isorings(values, nx, ny, t);
      expect(whole.length).toBeGreaterThan(0);
      const box = boxAtOrAbove(values, nx, ny, t)!;
      for (const [grow, shiftX, shiftY] of [[1, 0, 0], [3, 2, -1], [6, -3, 4]] as const) {
        const x0 = box.x0 - grow + shiftX;
        const y0 = box.y0 - grow + shiftY;
        const w = box.x1 + grow + shiftX - x0 + 1;
        const h = box.y1 + grow + shiftY - y0 + 1;
        if (x0 > box.x0 - 1 || y0 > box.y0 - 1 || x0 + w < box.x1 + 2 || y0 + h < box.y1 + 2) continue;
        const inBox = isorings(cut(values, nx, ny, x0, y0, w, h), w, h, t, { x: x0, y: y0 });
        // Rings that run past the grid's edge in the box go round the margin's −Infinity cells, on the outer edge of the grid's cells, as on the whole grid.
        expect(inBox).toEqual(whole);
        expect(inBox.flat().every((p, i) => Object.is(p[0], whole.flat()[i]![0]) && Object.is(p[1], whole.flat()[i]![1]))).toBe(true);
      }
    }
  });
});

describe("contourBands: analytic fields on a regular 1° grid", () => {
  const nx = 81;
  const ny = 71;
  const cx = 40;
  const cy = 35;
  const s = 8;
  const values = field(nx, ny, gaussian(cx, cy, s));
  const centre = regular(cx, cy);

  it("a Gaussian gives nested circles of the analytic radii (within 0.1 cell) and areas (within 1%)", () => {
    const bands = contourBands(values, nx, ny, THRESHOLDS, regular);
    expectValid(bands);
    expect(bands.map((b) => b.polygons.length)).toEqual([1, 1, 1]);
    expect(bands.map((b) => b.polygons[0]!.holes.length)).toEqual([1, 1, 0]);
    THRESHOLDS.forEach((t, i) => {
      const r = gaussianRadius(s, t);
      const outer = bands[i]!.polygons[0]!.outer;
      for (const d of vertexDistances(outer, centre)) expect(Math.abs(d - r)).toBeLessThan(0.1);
      expect(Math.abs(ringArea(outer) / (Math.PI * r * r) - 1)).toBeLessThan(0.01);
      expect(Math.abs(areaAtOrAbove(bands, i) / (Math.PI * r * r) - 1)).toBeLessThan(0.01);
    });
    // Low has a hole exactly where medium starts, medium where high starts.
    expect(bands[0]!.polygons[0]!.holes[0]).toEqual(bands[1]!.polygons[0]!.outer.slice().reverse());
    expect(bands[1]!.polygons[0]!.holes[0]).toEqual(bands[2]!.polygons[0]!.outer.slice().reverse());
  });

  it("every position lies on the true contour within a small fraction of a cell, simplified or not", () => {
    for (const simplifyCells of [0, 0.1, 0.3]) {
      const bands = contourBands(values, nx, ny, THRESHOLDS, identity, { simplifyCells });
      expectValid(bands);
      for (const band of bands) {
        // Each ring position is on one of the level circles (of this band's lower or upper threshold).
        const radii = [gaussianRadius(s, band.lower), ...(band.upper === null ? [] : [gaussianRadius(s, band.upper)])];
        for (const p of rings(band).flat()) {
          const d = Math.hypot(p[0] - cx, p[1] - cy);
          expect(Math.min(...radii.map((r) => Math.abs(d - r)))).toBeLessThan(0.1);
        }
      }
    }
  });

  it("simplification stays within its tolerance of the full outline and keeps areas", () => {
    const wobbly = field(nx, ny, (x, y) => gaussian(cx, cy, s)(x, y) * (1 + 0.3 * Math.sin(x / 2.3) * Math.cos(y / 3.1)));
    const full = contourBands(wobbly, nx, ny, THRESHOLDS, identity, { simplifyCells: 0 });
    for (const tolerance of [0.05, 0.1, 0.25]) {
      const simple = contourBands(wobbly, nx, ny, THRESHOLDS, identity, { simplifyCells: tolerance });
      expectValid(simple);
      full.forEach((band, i) => {
        const target = rings(simple[i]!);
        expect(target.flat().length).toBeLessThan(rings(band).flat().length);
        for (const p of rings(band).flat()) {
          let best = Infinity;
          for (const ring of target) for (let k = 1; k < ring.length; k++) best = Math.min(best, segmentDistance2(p, ring[k - 1]!, ring[k]!));
          expect(Math.sqrt(best)).toBeLessThanOrEqual(tolerance + 1e-9);
        }
        // No position moves by more than the tolerance: the area changes by less than tolerance × perimeter.
        const perimeter = rings(band).reduce((sum, ring) => sum + ring.slice(1).reduce((l, p, k) => l + Math.hypot(p[0] - ring[k]![0], p[1] - ring[k]![1]), 0), 0);
        expect(Math.abs(bandArea(simple[i]!) - bandArea(band))).toBeLessThan(tolerance * perimeter);
        expect(Math.abs(bandArea(simple[i]!) - bandArea(band)) / bandArea(band)).toBeLessThan(tolerance / 10);
      });
    }
  });

  it("an annulus gives a polygon with a hole; with two thresholds, an island inside a hole", () => {
    const r0 = 15;
    const w = 3;
    const ring = field(nx, ny, (x, y) => 5 * Math.exp(-((Math.hypot(x - cx, y - cy) - r0) ** 2) / (2 * w * w)));
    const reach = (c: number): number => w * Math.sqrt(2 * Math.log(5 / c));
    const one = contourBands(ring, nx, ny, [1], regular);
    expectValid(one, [1]);
    expect(one[0]!.polygons).toHaveLength(1);
    const [polygon] = one[0]!.polygons;
    expect(polygon!.holes).toHaveLength(1);
    for (const d of vertexDistances(polygon!.outer, centre)) expect(Math.abs(d - (r0 + reach(1)))).toBeLessThan(0.15);
    for (const d of vertexDistances(polygon!.holes[0]!, centre)) expect(Math.abs(d - (r0 - reach(1)))).toBeLessThan(0.15);

    // Band [1, 3) is two concentric annuli: the inner one sits in the hole of the outer one.
    const two = contourBands(ring, nx, ny, [1, 3], regular);
    expectValid(two, [1, 3]);
    const [outerAnnulus, innerAnnulus] = two[0]!.polygons;
    expect(two[0]!.polygons).toHaveLength(2);
    expect(outerAnnulus!.holes).toHaveLength(1);
    expect(innerAnnulus!.holes).toHaveLength(1);
    expect(innerAnnulus!.outer.every((p) => pointInRing(p, outerAnnulus!.holes[0]!) === 1)).toBe(true);
    for (const d of vertexDistances(innerAnnulus!.outer, centre)) expect(Math.abs(d - (r0 - reach(3)))).toBeLessThan(0.15);
    for (const d of vertexDistances(innerAnnulus!.holes[0]!, centre)) expect(Math.abs(d - (r0 - reach(1)))).toBeLessThan(0.15);
    // Band ≥ 3: one annulus, whose rings are the holes of band [1, 3) reversed.
    expect(two[1]!.polygons).toHaveLength(1);
    expect(two[1]!.polygons[0]!.outer).toEqual(outerAnnulus!.holes[0]!.slice().reverse());
    expect(two[1]!.polygons[0]!.holes[0]).toEqual(innerAnnulus!.outer.slice().reverse());
  });

  it("two separate plumes give two polygons per band", () => {
    const twin = field(nx, ny, (x, y) => gaussian(20, 35, 5)(x, y) + gaussian(60, 30, 6)(x, y));
    const bands = contourBands(twin, nx, ny, THRESHOLDS, regular);
    expectValid(bands);
    expect(bands.map((b) => b.polygons.length)).toEqual([2, 2, 2]);
    // Largest first: the plume at (60, 30).
    const west = regular(20, 35);
    const east = regular(60, 30);
    const r = gaussianRadius(6, 4);
    for (const d of vertexDistances(bands[2]!.polygons[0]!.outer, east)) expect(Math.abs(d - r)).toBeLessThan(0.1);
    for (const d of vertexDistances(bands[2]!.polygons[1]!.outer, west)) expect(Math.abs(d - gaussianRadius(5, 4))).toBeLessThan(0.1);
  });

  it("a NaN block in the core makes a hole along the last valid cell centres", () => {
    const holed = field(nx, ny, (x, y) => (Math.abs(x - cx) <= 2 && Math.abs(y - cy) <= 2 ? NaN : gaussian(cx, cy, s)(x, y)));
    const bands = contourBands(holed, nx, ny, THRESHOLDS, identity);
    expectValid(bands);
    expect(bands.map((b) => b.polygons.map((p) => p.holes.length))).toEqual([[1], [1], [1]]);
    const hole = bands[2]!.polygons[0]!.holes[0]!;
    for (const [x, y] of hole) {
      expect(Number.isInteger(x) && Number.isInteger(y)).toBe(true);
      expect(Math.max(Math.abs(x - cx), Math.abs(y - cy))).toBe(3);
    }
    // The 6 × 6 square through the centres around the block, less the four corner half-cells marching squares cuts.
    expect(Math.abs(ringArea(hole))).toBe(34);
  });

  it("a NaN column through a plume splits every band in two, without zero-width holes", () => {
    const cut = field(nx, ny, (x, y) => (x === cx ? NaN : gaussian(cx, cy, s)(x, y)));
    const bands = contourBands(cut, nx, ny, THRESHOLDS, identity);
    expectValid(bands);
    expect(bands.map((b) => b.polygons.map((p) => p.holes.length))).toEqual([[0, 0], [0, 0], [0, 0]]);
    // Area of a disc of radius r less the strip |x| < 1 between the two valid columns.
    const strip = (r: number): number => 2 * (Math.sqrt(r * r - 1) + r * r * Math.asin(1 / r));
    THRESHOLDS.forEach((t, i) => {
      const r = gaussianRadius(s, t);
      expect(Math.abs(areaAtOrAbove(bands, i) / (Math.PI * r * r - strip(r)) - 1)).toBeLessThan(0.01);
    });
    // Both halves of the low band run along the columns beside the NaN one.
    for (const polygon of bands[0]!.polygons) {
      expect(polygon.outer.some(([x]) => x === cx - 1 || x === cx + 1)).toBe(true);
      expect(polygon.outer.every(([x]) => x <= cx - 1 || x >= cx + 1)).toBe(true);
    }
  });

  it("closes rings along the grid edge, on the outer edge of the outermost cells", () => {
    const edge = field(nx, ny, gaussian(0, cy, s));
    const bands = contourBands(edge, nx, ny, THRESHOLDS, identity);
    expectValid(bands);
    // The U-shaped low and medium bands have no hole (their inner edge meets the grid edge).
    expect(bands.map((b) => b.polygons.map((p) => p.holes.length))).toEqual([[0], [0], [0]]);
    THRESHOLDS.forEach((t, i) => {
      const r = gaussianRadius(s, t);
      const outer = bands[i]!.polygons[0]!.outer;
      expect(outer.every(([x]) => x >= -0.5)).toBe(true);
      const onEdge = outer.filter(([x]) => x === -0.5).map(([, y]) => y);
      expect(Math.min(...onEdge)).toBeCloseTo(cy - r, 0);
      expect(Math.max(...onEdge)).toBeCloseTo(cy + r, 0);
      // Half a disc, and the half-cell strip of the edge cells' footprint beyond their centres.
      expect(Math.abs(areaAtOrAbove(bands, i) / ((Math.PI * r * r) / 2 + r) - 1)).toBeLessThan(0.01);
    });
    // A field filling the grid: one rectangle, the grid's footprint, corners included.
    const full = contourBands(new Float32Array(12).fill(5), 4, 3, [1], identity);
    expect(full[0]!.polygons).toHaveLength(1);
    expect(full[0]!.polygons[0]!.holes).toEqual([]);
    expect(Math.abs(ringArea(full[0]!.polygons[0]!.outer))).toBe(12);
    const corners = ["-0.5,-0.5", "3.5,-0.5", "3.5,2.5", "-0.5,2.5"];
    expect(full[0]!.polygons[0]!.outer.map((p) => p.join(",")).filter((p) => corners.includes(p)).sort()).toEqual(corners.sort());
  });
});

describe("contourBands: long straight edges", () => {
  it("cuts a straight run (a block of equal values) into edges of at most 4 cells, on the same line, the area unchanged", () => {
    // 300 × 30 cells of 5 in a 0.1° grid: each side of the block is one straight run; simplified, a single edge of 30°.
    const block = field(400, 100, (x, y) => (x >= 50 && x < 350 && y >= 30 && y < 60 ? 5 : 0));
    const tenth: GridToLonLat = (x, y) => [-30 + x * 0.1, 45 + y * 0.1];
    const bands = contourBands(block, 400, 100, THRESHOLDS, tenth);
    expectValid(bands);
    for (const band of bands) {
      const outer = band.polygons[0]!.outer;
      for (let i = 1; i < outer.length; i++) {
        const edge = Math.hypot(outer[i]![0] - outer[i - 1]![0], outer[i]![1] - outer[i - 1]![1]);
        if (edge > 0.4 + 1e-9) expect.fail(`band ${band.lower}: an edge of ${edge}° (more than 4 cells) from ${outer[i - 1]} to ${outer[i]}`);
      }
      // Every position on the rectangle's sides: nothing moved, only positions added.
      const [west, east] = [Math.min(...outer.map((p) => p[0])), Math.max(...outer.map((p) => p[0]))];
      const [south, north] = [Math.min(...outer.map((p) => p[1])), Math.max(...outer.map((p) => p[1]))];
      for (const [lon, lat] of outer) expect([west, east].some((x) => Math.abs(lon - x) < 1e-9) || [south, north].some((y) => Math.abs(lat - y) < 1e-9)).toBe(true);
    }
    // ≥ 4: the block's centres (29.9° × 2.9°) and 0.2 cell beyond them on each side (5 falls to 0 over a cell), less
    // marching squares' four corner triangles (legs of 0.2 cell): as before, no position moved.
    expect(areaAtOrAbove(bands, 2)).toBeCloseTo((29.9 + 2 * 0.02) * (2.9 + 2 * 0.02) - (4 * 0.02 * 0.02) / 2, 9);
  });
});

describe("contourBands: the grid-to-lon/lat mapping", () => {
  const nx = 61;
  const ny = 51;
  const values = field(nx, ny, (x, y) => gaussian(22, 22, 6)(x, y) + 0.6 * gaussian(50, 38, 3)(x, y));

  it("is applied after contouring: a rotated grid gives the identity result rotated, outer rings still CCW", () => {
    const angle = (30 * Math.PI) / 180;
    const rotated: GridToLonLat = (x, y) => [5 + 0.25 * (x * Math.cos(angle) - y * Math.sin(angle)), 55 + 0.25 * (x * Math.sin(angle) + y * Math.cos(angle))];
    const plain = contourBands(values, nx, ny, THRESHOLDS, identity);
    const mapped = contourBands(values, nx, ny, THRESHOLDS, rotated);
    expectValid(mapped);
    // A rotation (with this y-down grid, a reflection) keeps or flips orientation: compare as position sets.
    mapped.forEach((band, i) => {
      expect(band.polygons.length).toBe(plain[i]!.polygons.length);
      band.polygons.forEach((polygon, k) => {
        const expected = plain[i]!.polygons[k]!;
        const asSet = (ring: Position[]) => new Set(ring.map((p) => p.join(",")));
        expect(asSet(polygon.outer)).toEqual(asSet(expected.outer.map(([x, y]) => rotated(x, y))));
        expect(polygon.holes.map(asSet)).toEqual(expected.holes.map((h) => asSet(h.map(([x, y]) => rotated(x, y)))));
      });
    });
    // Radius of the main plume's high core, scaled by 0.25° per cell, around the mapped centre.
    const c = rotated(22, 22);
    const outer = mapped[2]!.polygons[0]!.outer;
    for (const d of vertexDistances(outer, c)) expect(Math.abs(d / 0.25 - gaussianRadius(6, 4))).toBeLessThan(0.15);
  });

  it("on a curvilinear (rotated-pole-like) grid, areas match the mapped analytic circle", () => {
    // Rotated pole: grid cells 0.2° in rotated coordinates, pole rotated so the grid sits over Iceland.
    const rotatedPole = rotatedPoleMapping(0.2, -6, -5, 64, -19);
    const bands = contourBands(values, nx, ny, THRESHOLDS, rotatedPole);
    expectValid(bands);
    // Reference: the analytic circle of the main core mapped through the same grid, as a 720-gon.
    const r = gaussianRadius(6, 4);
    const circle: Position[] = [];
    for (let k = 0; k <= 720; k++) circle.push(rotatedPole(22 + r * Math.cos((k * Math.PI) / 360), 22 + r * Math.sin((k * Math.PI) / 360)));
    const analytic = Math.abs(polygonAreaKm2({ outer: circle, holes: [] }));
    const ours = polygonAreaKm2(bands[2]!.polygons[0]!);
    expect(Math.abs(ours / analytic - 1)).toBeLessThan(0.015);
    expect(analytic).toBeGreaterThan(1000);
  });
});

/**
 * A rotated-pole grid: x, y index a regular grid of `step` degrees in rotated coordinates starting at
 * (lon0, lat0); the rotated pole's equator is centred on (centreLat, centreLon) in true coordinates.
 */
function rotatedPoleMapping(step: number, lon0: number, lat0: number, centreLat: number, centreLon: number): GridToLonLat {
  const rad = Math.PI / 180;
  const tilt = centreLat * rad;
  return (x, y) => {
    const lon = (lon0 + x * step) * rad;
    const lat = (lat0 + y * step) * rad;
    // Rotated → Cartesian, tilt about the y axis, back to spherical, then shift in longitude.
    const cx = Math.cos(lat) * Math.cos(lon);
    const cy = Math.cos(lat) * Math.sin(lon);
    const cz = Math.sin(lat);
    const tx = cx * Math.cos(tilt) - cz * Math.sin(tilt);
    const tz = cx * Math.sin(tilt) + cz * Math.cos(tilt);
    return [centreLon + Math.atan2(cy, tx) / rad, Math.asin(tz) / rad];
  };
}

describe("contourBands: degenerate fields (property)", () => {
  // Values on and between the thresholds, and NaN: saddles, touching rings, zero-width bands, grid edges.
  const value = fc.constantFrom(0, 0.1, 0.2, 1, 2, 3, 4, 6, Number.NaN);
  const grid = fc.record({ nx: fc.integer({ min: 1, max: 9 }), ny: fc.integer({ min: 1, max: 9 }) }).chain(({ nx, ny }) =>
    fc.record({ nx: fc.constant(nx), ny: fc.constant(ny), values: fc.array(value, { minLength: nx * ny, maxLength: nx * ny }) }),
  );

  it("bands are valid and their areas are the differences of the level-set areas", () => {
    fc.assert(
      fc.property(grid, fc.constantFrom(0, 0.1), ({ nx, ny, values }, simplifyCells) => {
        const field = Float32Array.from(values);
        const bands = contourBands(field, nx, ny, THRESHOLDS, identity, { simplifyCells });
        expectValid(bands);
        if (simplifyCells === 0) {
          const level = THRESHOLDS.map((t) => bandArea(contourBands(field, nx, ny, [t], identity, { simplifyCells: 0 })[0]!));
          bands.forEach((band, i) => expect(bandArea(band)).toBeCloseTo(level[i]! - (level[i + 1] ?? 0), 9));
        }
        // Every position stays within the footprint of the grid's cells.
        for (const p of bands.flatMap(rings).flat()) {
          expect(p[0] >= -0.5 && p[0] <= nx - 0.5 && p[1] >= -0.5 && p[1] <= ny - 0.5).toBe(true);
        }
      }),
      { numRuns: 300, seed: 20240501 },
    );
  });
});
