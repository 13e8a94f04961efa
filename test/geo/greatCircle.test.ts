/**
 * The farthest a great-circle arc goes from the equator, which bounds how narrow the cells of a lon/lat grid
 * it crosses can be (the /route sampling step): exact cases, and a brute-force walk along random arcs.
 */
import { describe, expect, it } from "vitest";
import { arcBetween, farthestFromEquator, interpolateArc } from "../../src/geo/greatCircle.ts";
import type { Position } from "../../src/geo/types.ts";

describe("farthestFromEquator", () => {
  it("an end, when the arc turns nowhere between them", () => {
    expect(farthestFromEquator([0, 0], [90, 0])).toBe(0);
    expect(farthestFromEquator([10, 20], [10, 50])).toBe(50);
    expect(farthestFromEquator([10, -50], [10, 20])).toBe(50);
    expect(farthestFromEquator([5, 60], [5, 60])).toBe(60);
  });

  it("over the pole, and where a long arc along a parallel bulges poleward", () => {
    expect(farthestFromEquator([0, 60], [180, 60])).toBeCloseTo(90, 9);
    expect(farthestFromEquator([0, -60], [180, -60])).toBeCloseTo(90, 9);
    // Between two places on 45°N 90° of longitude apart the arc's vertex is at atan(tan 45° / cos 45°) = 54.7356°.
    expect(farthestFromEquator([-45, 45], [45, 45])).toBeCloseTo((Math.atan(1 / Math.cos(Math.PI / 4)) * 180) / Math.PI, 9);
  });

  it("never below the latitudes met walking along 2,000 random arcs, and within 0.01° of their largest", () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 2000; k++) {
      const a: Position = [random() * 360 - 180, Math.asin(random() * 2 - 1) * (180 / Math.PI)];
      const b: Position = [random() * 360 - 180, Math.asin(random() * 2 - 1) * (180 / Math.PI)];
      if (arcBetween(a, b) > 179) continue;
      let walked = 0;
      for (let i = 0; i <= 2000; i++) walked = Math.max(walked, Math.abs(interpolateArc(a, b, i / 2000)[1]));
      const bound = farthestFromEquator(a, b);
      expect(bound).toBeGreaterThanOrEqual(walked - 1e-9);
      expect(bound - walked).toBeLessThan(0.01);
    }
  });
});
