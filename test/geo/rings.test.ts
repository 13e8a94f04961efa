import { describe, expect, it } from "vitest";
import {
  EARTH_RADIUS_KM,
  findCrossingRings,
  ringCrossing,
  isCounterClockwise,
  orientRing,
  pointInRing,
  polygonArea,
  polygonAreaKm2,
  ringArea,
  ringAreaKm2,
  segmentDistance2,
  segmentsConflict,
  simplifyRing,
  simplifyRingIndices,
} from "../../src/geo/rings.ts";
import type { Position, Ring } from "../../src/geo/types.ts";

const square: Ring = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
  [0, 0],
];

describe("ringArea / isCounterClockwise / orientRing", () => {
  it("gives the signed shoelace area, positive counter-clockwise", () => {
    expect(ringArea(square)).toBe(1);
    expect(ringArea(square.slice().reverse())).toBe(-1);
    expect(ringArea([[0, 0], [4, 0], [0, 3], [0, 0]])).toBe(6);
    expect(ringArea([])).toBe(0);
    expect(isCounterClockwise(square)).toBe(true);
    expect(isCounterClockwise(square.slice().reverse())).toBe(false);
  });

  it("orients a ring without touching the input", () => {
    const cw = square.slice().reverse();
    expect(orientRing(cw, true)).toEqual(square);
    expect(orientRing(square, true)).toEqual(square);
    expect(orientRing(square, false)).toEqual(cw);
    expect(cw[1]).toEqual([0, 1]);
  });
});

describe("pointInRing", () => {
  it("tells inside (1), boundary (0) and outside (-1), whatever the orientation", () => {
    for (const ring of [square, square.slice().reverse()]) {
      expect(pointInRing([0.5, 0.5], ring)).toBe(1);
      expect(pointInRing([1.5, 0.5], ring)).toBe(-1);
      expect(pointInRing([-1e-9, 0.5], ring)).toBe(-1);
      expect(pointInRing([0.5, 0], ring)).toBe(0);
      expect(pointInRing([1, 1], ring)).toBe(0);
      expect(pointInRing([0, 0.25], ring)).toBe(0);
    }
  });

  it("handles a concave ring (a U)", () => {
    const u: Ring = [[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3], [0, 0]];
    expect(pointInRing([1.5, 2], u)).toBe(-1);
    expect(pointInRing([0.5, 2], u)).toBe(1);
    expect(pointInRing([2.5, 2], u)).toBe(1);
    expect(pointInRing([1.5, 0.5], u)).toBe(1);
  });
});

describe("simplifyRing", () => {
  it("drops positions within the tolerance and keeps the others (exact)", () => {
    const ring: Ring = [[0, 0], [1, 0.05], [2, 0], [2, 1], [2.04, 2], [0, 2], [0, 1], [0, 0]];
    expect(simplifyRing(ring, 0.1)).toEqual([[0, 0], [2, 0], [2.04, 2], [0, 2], [0, 0]]);
    expect(simplifyRing(ring, 0.01)).toEqual([[0, 0], [1, 0.05], [2, 0], [2, 1], [2.04, 2], [0, 2], [0, 0]]);
    expect(simplifyRing(ring, 0)).toEqual(ring);
  });

  it("keeps forced positions", () => {
    const ring: Ring = [[0, 0], [1, 0], [2, 0], [2, 2], [0, 2], [0, 0]];
    expect(simplifyRing(ring, 0.1)).toEqual([[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]);
    expect(simplifyRing(ring, 0.1, new Set([1]))).toEqual([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2], [0, 0]]);
    expect(simplifyRingIndices(ring, 0.1, [1])).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("never returns fewer than 4 positions: a ring smaller than the tolerance stays whole", () => {
    const tiny: Ring = [[0.05, 0], [0, 0.05], [-0.05, 0], [0, -0.05], [0.05, 0]];
    expect(simplifyRing(tiny, 0.1)).toEqual(tiny);
    const sliver: Ring = [[0, 0], [1, 0.01], [2, 0], [1, -0.01], [0, 0]];
    expect(simplifyRing(sliver, 0.1)).toEqual(sliver);
  });

  it("keeps every dropped position within the tolerance of the simplified outline", () => {
    // A wobbly circle, radius 20, 400 positions, wobble 0.3.
    const ring: Ring = [];
    for (let i = 0; i < 400; i++) {
      const a = (2 * Math.PI * i) / 400;
      const r = 20 + 0.3 * Math.sin(17 * a) + 0.05 * Math.cos(91 * a);
      ring.push([r * Math.cos(a), r * Math.sin(a)]);
    }
    ring.push(ring[0]!);
    for (const tolerance of [0.05, 0.1, 0.5]) {
      const simple = simplifyRing(ring, tolerance);
      expect(simple.length).toBeLessThan(ring.length);
      expect(simple[0]).toEqual(simple[simple.length - 1]);
      for (const p of ring) {
        let best = Infinity;
        for (let i = 1; i < simple.length; i++) best = Math.min(best, segmentDistance2(p, simple[i - 1]!, simple[i]!));
        expect(Math.sqrt(best)).toBeLessThanOrEqual(tolerance + 1e-12);
      }
      expect(findCrossingRings([simple]).size).toBe(0);
      expect(Math.abs(ringArea(simple) - ringArea(ring)) / ringArea(ring)).toBeLessThan(0.01);
    }
  });
});

describe("segments and crossings", () => {
  it("segmentDistance2 measures to the segment, not the line", () => {
    expect(segmentDistance2([1, 1], [0, 0], [2, 0])).toBe(1);
    expect(segmentDistance2([3, 0], [0, 0], [2, 0])).toBe(1);
    expect(segmentDistance2([0, 2], [0, 0], [0, 0])).toBe(4);
  });

  it("segmentsConflict: crossings and overlaps conflict, shared end points do not", () => {
    expect(segmentsConflict([0, 0], [2, 2], [0, 2], [2, 0])).toBe(true);
    expect(segmentsConflict([0, 0], [2, 0], [2, 0], [3, 1])).toBe(false);
    expect(segmentsConflict([0, 0], [2, 0], [1, 0], [1, 1])).toBe(true); // T
    expect(segmentsConflict([0, 0], [2, 0], [1, 0], [3, 0])).toBe(true); // collinear overlap
    expect(segmentsConflict([0, 0], [2, 0], [1, 0], [3, 0], true)).toBe(false);
    expect(segmentsConflict([0, 0], [2, 0], [2, 0], [0, 0])).toBe(true); // same segment
    expect(segmentsConflict([0, 0], [1, 0], [0, 1], [1, 1])).toBe(false);
  });

  it("findCrossingRings names the rings that cross", () => {
    const a: Ring = [[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]];
    const b: Ring = [[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]];
    const c: Ring = [[5, 5], [6, 5], [6, 6], [5, 5]];
    const bow: Ring = [[10, 0], [12, 2], [12, 0], [10, 2], [10, 0]];
    expect([...findCrossingRings([a, b, c])].sort()).toEqual([0, 1]);
    expect([...findCrossingRings([c, bow])]).toEqual([1]);
    expect(findCrossingRings([a, c]).size).toBe(0);
    // Only pairs involving a "new" segment count.
    expect(findCrossingRings([a, b], { onlyNew: () => false }).size).toBe(0);
    expect([...findCrossingRings([a, b], { onlyNew: (r) => r === 1 })]).toEqual([1]);
  });

  it("ringCrossing says whether and where a ring crosses itself", () => {
    expect(ringCrossing([[10, 0], [12, 2], [12, 0], [10, 2], [10, 0]])).toEqual({ at: [11, 1] }); // a bow tie
    expect(ringCrossing([[0, 0], [4, 0], [4, 2], [2, 0.000001], [0, 2], [0, 0]])).toBeUndefined(); // a notch short of the edge
    expect(ringCrossing([[0, 0], [4, 0], [4, 2], [2, 0], [0, 2], [0, 0]])).toEqual({ at: [2, 0] }); // a notch touching it
    expect(ringCrossing([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]])).toBeUndefined();
    expect(ringCrossing([[0, 0], [4, 0], [2, 0], [2, 2], [0, 0]])).toEqual({ at: [2, 0] }); // doubling back along an edge
  });
});

describe("areas on the sphere", () => {
  it("a 1° × 1° cell at the equator", () => {
    const cell: Ring = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]];
    const exact = EARTH_RADIUS_KM ** 2 * (Math.PI / 180) * Math.sin(Math.PI / 180);
    expect(ringAreaKm2(cell)).toBeCloseTo(exact, 6);
    expect(exact).toBeCloseTo(12363.7, 0);
    expect(ringAreaKm2(cell.slice().reverse())).toBeCloseTo(-exact, 6);
  });

  it("a lat/lon box at 60°N is exact: R² Δλ (sin φ2 − sin φ1)", () => {
    const box: Ring = [[-20, 60], [-10, 60], [-10, 65], [-20, 65], [-20, 60]];
    const rad = Math.PI / 180;
    const exact = EARTH_RADIUS_KM ** 2 * 10 * rad * (Math.sin(65 * rad) - Math.sin(60 * rad));
    expect(ringAreaKm2(box)).toBeCloseTo(exact, 6);
  });

  it("polygon areas subtract holes whatever their orientation", () => {
    const outer: Ring = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]];
    const hole: Position[] = [[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]];
    expect(polygonArea({ outer, holes: [hole] })).toBe(15);
    expect(polygonArea({ outer, holes: [hole.slice().reverse()] })).toBe(15);
    const km2 = polygonAreaKm2({ outer, holes: [hole] });
    expect(km2).toBeCloseTo(Math.abs(ringAreaKm2(outer)) - Math.abs(ringAreaKm2(hole)), 6);
  });
});
