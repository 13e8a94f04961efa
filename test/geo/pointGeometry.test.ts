/** The pure pieces of point and route queries, with exact values: cells, great circles, flight levels, codes. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ashClasses, classOf } from "../../src/contract/ashClasses.ts";
import { CODE_RATIO, CODE_VALUES, decodeConcentration, encodeConcentration, encodeFloat32Concentration, MAX_CODED_MG_M3, MIN_CODED_MG_M3, MISSING_CODE } from "../../src/formats/concentrationCodes.ts";
import { bandsAt, flightLevel } from "../../src/geo/flightLevel.ts";
import { arcBetween, interpolateArc } from "../../src/geo/greatCircle.ts";
import { axisPosition, geographicExtent, halfCellArcDegrees, supportOf, type GridGeometry } from "../../src/geo/gridCells.ts";
import { rotatedToGeographic } from "../../src/model/gridMapping.ts";

describe("axisPosition: the fractional index, half a cell beyond the ends", () => {
  const axis = [10, 10.5, 11, 11.5];
  it.each([
    [10, 0], [10.25, 0.5], [11.5, 3], [11.75, 3.5], [9.75, -0.5], [9.74, undefined], [11.76, undefined], [Number.NaN, undefined],
  ])("%d → %s", (v, position) => expect(axisPosition(axis, v)).toBe(position));
  it("a decreasing axis (latitudes north to south) too", () => {
    expect(axisPosition([60, 59.5, 59], 59.75)).toBe(0.5);
    expect(axisPosition([60, 59.5, 59], 60.25)).toBe(-0.5);
    expect(axisPosition([60, 59.5, 59], 58.7)).toBeUndefined();
  });
});

describe("geographicExtent: where a domain is, to its cells' outer edges", () => {
  const axis = (first: number, step: number, n: number) => Array.from({ length: n }, (_, i) => first + i * step);
  it("a regular grid, either direction of its axes", () => {
    expect(geographicExtent({ kind: "regular", x: axis(-45, 0.5, 161), y: axis(25, 0.25, 201) })).toEqual({ south: 24.875, north: 75.125, west: -45.25, east: 35.25 });
    expect(geographicExtent({ kind: "regular", x: axis(10, -2, 6), y: axis(60, -1, 5) })).toEqual({ south: 55.5, north: 60.5, west: -1, east: 11 });
  });

  it("a rotated pole: the box around the domain's edge; a pole inside gives every longitude; across 180° west exceeds east", () => {
    // The rotation that is none (the grid's pole at the Earth's): the same box as a regular grid.
    const none = geographicExtent({ kind: "rotated", x: axis(-10, 1, 21), y: axis(-10, 1, 21), poleLat: 90, poleLon: 180, northPoleGridLon: 0 });
    expect(none.south).toBeCloseTo(-10.5, 9);
    expect(none.north).toBeCloseTo(10.5, 9);
    expect(none.west).toBeCloseTo(-10.5, 9);
    expect(none.east).toBeCloseTo(10.5, 9);
    // The grid's centre (0, 0) at the North Pole: every longitude, down to the latitude of its corners (90 − 14.8°).
    const polar = geographicExtent({ kind: "rotated", x: axis(-10, 1, 21), y: axis(-10, 1, 21), poleLat: 0, poleLon: 0, northPoleGridLon: 0 });
    expect(polar).toMatchObject({ north: 90, west: -180, east: 180 });
    expect(polar.south).toBeCloseTo(90 - (Math.acos(Math.cos((10.5 * Math.PI) / 180) ** 2) * 180) / Math.PI, 6);
    // The centre at 180° on the equator (the grid's pole at 90 °N, 0°... rotated by 180°): west of 180 to east of it.
    const across = geographicExtent({ kind: "rotated", x: axis(-5, 1, 11), y: axis(-5, 1, 11), poleLat: 90, poleLon: 0, northPoleGridLon: 0 });
    expect(across.west).toBeCloseTo(174.5, 9);
    expect(across.east).toBeCloseTo(-174.5, 9);
    expect(across.south).toBeCloseTo(-5.5, 9);
    // Its corners, where the rotation puts them, lie in the box.
    const [lon, lat] = rotatedToGeographic(-5.5, 5.5, 90, 0, 0);
    expect(Math.abs(lat)).toBeLessThanOrEqual(across.north + 1e-9);
    expect(Math.abs(lon)).toBeGreaterThanOrEqual(174.5 - 1e-9);
  });
});

describe("supportOf: the centres a place's value is the highest of", () => {
  const grid: GridGeometry = { kind: "regular", x: [0, 1, 2, 3], y: [10, 11, 12] };
  it.each([
    [1, 11, { x: 1, y: 1 }, [{ x: 1, y: 1 }]],
    [1.00001, 11, { x: 1, y: 1 }, [{ x: 1, y: 1 }]], // within SNAP_FRACTION of a cell: on the centre
    [1.4, 11, { x: 1, y: 1 }, [{ x: 1, y: 1 }, { x: 2, y: 1 }]],
    [1.6, 11.5, { x: 2, y: 2 }, [{ x: 1, y: 1 }, { x: 2, y: 1 }, { x: 1, y: 2 }, { x: 2, y: 2 }]],
    [-0.4, 10, { x: 0, y: 0 }, [{ x: 0, y: 0 }]], // beyond the outer centre, within half a cell
    [3.5, 12.5, { x: 3, y: 2 }, [{ x: 3, y: 2 }]],
  ])("lon %d, lat %d → cell %j, support %j", (lon, lat, cell, support) => {
    expect(supportOf(grid, lon, lat)).toMatchObject({ cell, support });
  });
  it("outside by more than half a cell: none", () => {
    expect(supportOf(grid, 3.51, 11)).toBeUndefined();
    expect(axisPosition([0, 1, 2, 3], -0.5)).toBe(-0.5);
    expect(axisPosition([3, 2, 1, 0], 0.25)).toBe(2.75);
  });
});

describe("the cell of a place", () => {
  const cellOf = (geometry: GridGeometry, lon: number, lat: number) => supportOf(geometry, lon, lat)?.cell;
  const dateline: GridGeometry = { kind: "regular", x: [178, 179, 180, 181, 182], y: [-1, 0, 1] };
  it("across the antimeridian: -179 is the column centred at 181", () => {
    expect(cellOf(dateline, -179, 0)).toEqual({ x: 3, y: 1 });
    expect(cellOf(dateline, 179.6, 0.4)).toEqual({ x: 2, y: 1 });
    expect(cellOf(dateline, -177, 0)).toBeUndefined();
  });
  it("a grid all the way round: between its last and first columns both are around the place (the highest of them, never the first alone)", () => {
    const global: GridGeometry = { kind: "regular", x: Array.from({ length: 360 }, (_, i) => -180 + i), y: [-1, 0, 1] };
    expect(supportOf(global, 179.6, 0)).toMatchObject({ cell: { x: 0, y: 1 }, support: [{ x: 359, y: 1 }, { x: 0, y: 1 }] });
    expect(supportOf(global, 179.4, 0)).toMatchObject({ cell: { x: 359, y: 1 }, support: [{ x: 359, y: 1 }, { x: 0, y: 1 }] });
    expect(supportOf(global, -180, 0)?.support).toEqual([{ x: 0, y: 1 }]); // on a centre: that one alone
    expect(supportOf(global, 179, 0)?.support).toEqual([{ x: 359, y: 1 }]);
    expect(supportOf(global, 178.5, 0)?.support).toEqual([{ x: 358, y: 1 }, { x: 359, y: 1 }]);
    const eastern: GridGeometry = { kind: "regular", x: Array.from({ length: 360 }, (_, i) => i), y: [-1, 0, 1] };
    expect(supportOf(eastern, -0.3, 0)?.support).toEqual([{ x: 359, y: 1 }, { x: 0, y: 1 }]);
    // A grid short of the whole round keeps its edges: half a cell beyond the last centre is the last cell alone.
    const almost: GridGeometry = { kind: "regular", x: Array.from({ length: 359 }, (_, i) => -180 + i), y: [-1, 0, 1] };
    expect(supportOf(almost, 178.4, 0)?.support).toEqual([{ x: 358, y: 1 }]);
    expect(supportOf(global, 179.6, 0)!.key).not.toBe(supportOf(global, 178.5, 0)!.key);
  });

  it("a rotated pole: the geographic place of a rotated centre falls in that cell", () => {
    const rotated: GridGeometry = { kind: "rotated", x: [-1, -0.5, 0, 0.5, 1], y: [-1, -0.5, 0, 0.5, 1], poleLat: 22, poleLon: 140, northPoleGridLon: 0 };
    for (let y = 0; y < 5; y++) for (let x = 0; x < 5; x++) {
      const [lon, lat] = rotatedToGeographic(rotated.x[x]!, rotated.y[y]!, 22, 140);
      expect(cellOf(rotated, lon, lat)).toEqual({ x, y });
    }
    // Rotated (0, 0) is 68°N 40°W; 2° away in any direction is outside this 2° × 2° grid.
    expect(cellOf(rotated, -40, 70.5)).toBeUndefined();
  });
  it("half a cell of arc: the longitude spacing shrinks with cos(latitude)", () => {
    expect(halfCellArcDegrees({ dx: 0.5, dy: 0.5 }, 0)).toBe(0.25);
    expect(halfCellArcDegrees({ dx: 0.5, dy: 0.5 }, 60)).toBeCloseTo(0.125, 12);
  });
});

describe("great circles", () => {
  it("the midpoint of 170°E–170°W on the equator is the antimeridian, not 0°", () => {
    const [lon, lat] = interpolateArc([170, 0], [-170, 0], 0.5);
    expect(Math.abs(lon)).toBeCloseTo(180, 9);
    expect(lat).toBeCloseTo(0, 9);
    expect(arcBetween([170, 0], [-170, 0])).toBeCloseTo(20, 9);
  });
  it("along a meridian, fractions are latitudes; ends are exact", () => {
    expect(interpolateArc([-19.5, 60], [-19.5, 66], 0.25)[1]).toBeCloseTo(61.5, 9);
    expect(interpolateArc([10, 20], [30, 40], 0)).toEqual([10, 20]);
    expect(interpolateArc([10, 20], [30, 40], 1)[0]).toBeCloseTo(30, 9);
  });
  it("a great circle between two places at 50°N bulges north (tan φ = tan 50° / cos 5°: 50.1075°)", () => {
    expect(interpolateArc([175, 50], [-175, 50], 0.5)[1]).toBeCloseTo((Math.atan(Math.tan((50 * Math.PI) / 180) / Math.cos((5 * Math.PI) / 180)) * 180) / Math.PI, 9);
  });
});

describe("flight levels", () => {
  it("pressure altitude in hundreds of feet, whole levels exact", () => {
    expect(flightLevel(10668)).toBe(350);
    expect(flightLevel(6096)).toBe(200);
    expect(flightLevel(0)).toBe(0);
  });
  const bands = [{ lowerFl: 0, upperFl: 200 }, { lowerFl: 200, upperFl: 350 }, { lowerFl: 350, upperFl: 550 }];
  it.each([[100, [0]], [200, [0, 1]], [200.01, [1]], [350, [1, 2]], [550, [2]], [550.1, []], [-5, [0]]])("FL%d is in bands %j", (fl, expected) => {
    expect(bandsAt(bands, fl)).toEqual(expected);
  });
});

describe("concentration codes", () => {
  it("0, tiny values and NaN", () => {
    expect(encodeConcentration(0)).toBe(0);
    expect(decodeConcentration(0)).toBe(0);
    expect(encodeConcentration(MIN_CODED_MG_M3 * 0.999)).toBe(0);
    expect(encodeConcentration(Number.NaN)).toBe(MISSING_CODE);
    expect(decodeConcentration(MISSING_CODE)).toBeNaN();
    expect(decodeConcentration(1)).toBe(MIN_CODED_MG_M3);
  });
  it("never below the value, at most 0.1 % (+ rounding) above, any value from 1 µg/m³ to 1e6 mg/m³", () => {
    fc.assert(
      fc.property(fc.double({ min: MIN_CODED_MG_M3, max: 1e6, noNaN: true }), (value) => {
        const read = decodeConcentration(encodeConcentration(value));
        return read >= value && read <= value * (CODE_RATIO + 1e-5);
      }),
      { numRuns: 20_000 },
    );
  });
  it("the build's coder of float32 values gives encodeConcentration's code for every float32: each code's value and its neighbours, the edges, and random values", () => {
    const f32 = (x: number) => Math.fround(x);
    const above = (x: number) => {
      const bits = new Uint32Array(new Float32Array([x]).buffer);
      bits[0]! += 1;
      return new Float32Array(bits.buffer)[0]!;
    };
    const below = (x: number) => {
      const bits = new Uint32Array(new Float32Array([x]).buffer);
      bits[0]! -= 1;
      return new Float32Array(bits.buffer)[0]!;
    };
    const values = [0, -1, Number.NaN, Infinity, f32(MIN_CODED_MG_M3), below(f32(MIN_CODED_MG_M3)), above(f32(MIN_CODED_MG_M3)), f32(1e25), f32(3e38)];
    for (let code = 1; code < MISSING_CODE; code += 1) {
      const value = f32(CODE_VALUES[code]!);
      values.push(value, below(value), above(value));
    }
    for (const value of values) expect.soft(encodeFloat32Concentration(value), String(value)).toBe(encodeConcentration(value));
    fc.assert(
      fc.property(fc.float({ min: 0, max: f32(1e6), noNaN: true }), (value) => encodeFloat32Concentration(value) === encodeConcentration(value)),
      { numRuns: 50_000 },
    );
  });
  it("the scale's top: every value up to MAX_CODED_MG_M3 reads at or above itself, the first above it would read less (the reader refuses those)", () => {
    expect(MAX_CODED_MG_M3).toBe(decodeConcentration(MISSING_CODE - 1));
    expect(MAX_CODED_MG_M3).toBeGreaterThan(2.7e25);
    expect(decodeConcentration(encodeConcentration(MAX_CODED_MG_M3))).toBe(MAX_CODED_MG_M3);
    expect(decodeConcentration(encodeConcentration(MAX_CODED_MG_M3 * 0.9995))).toBeGreaterThanOrEqual(MAX_CODED_MG_M3 * 0.9995);
    expect(decodeConcentration(encodeConcentration(MAX_CODED_MG_M3 * 1.0005))).toBeLessThan(MAX_CODED_MG_M3 * 1.0005);
  });
  it("a value on a threshold keeps its class; just below, it may move up a class but never down", () => {
    const classes = ashClasses([0.2, 2, 4]);
    for (const t of [0.2, 2, 4, 5, 10]) {
      expect(classOf(decodeConcentration(encodeConcentration(t)), classes)?.lower).toBe(classOf(t, classes)?.lower);
      const below = classOf(decodeConcentration(encodeConcentration(t * 0.9999)), classes)?.lower ?? 0;
      expect(below).toBeGreaterThanOrEqual(classOf(t * 0.9999, classes)?.lower ?? 0);
    }
  });
});
