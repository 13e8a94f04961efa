import { describe, expect, it } from "vitest";
import { distanceToBoxKm, publishedBox, unionOfBoxes, unwrappedBox } from "../../src/geo/lonLatBox.ts";

describe("longitude/latitude boxes across the antimeridian", () => {
  it("publishes a box past 180° wrapped, east < west", () => {
    expect(publishedBox({ north: 56, south: 53, west: 177, east: 187.5 })).toEqual({ north: 56, south: 53, west: 177, east: -172.5 });
    expect(publishedBox({ north: 10, south: 0, west: -190, east: -170 })).toEqual({ north: 10, south: 0, west: 170, east: -170 });
    // Within ±180 already: the very numbers, no round trip through the wrap (-22.581 came back -22.581000000000017).
    expect(publishedBox({ north: 65, south: 63, west: -22.581, east: -12.3 })).toEqual({ north: 65, south: 63, west: -22.581, east: -12.3 });
    expect(publishedBox({ north: 1, south: 0, west: -20, east: 30 })).toEqual({ north: 1, south: 0, west: -20, east: 30 });
    expect(publishedBox({ north: 1, south: 0, west: 170, east: 180 })).toEqual({ north: 1, south: 0, west: 170, east: 180 });
    expect(publishedBox({ north: 1, south: 0, west: 0, east: 360 })).toEqual({ north: 1, south: 0, west: -180, east: 180 });
  });

  it("unions boxes on either side of 180° into one box across it", () => {
    const pacific = unionOfBoxes([{ north: 56, south: 53, west: 177, east: -175 }, { north: 60, south: 50, west: 170, east: 179 }]);
    expect(pacific).toEqual({ north: 60, south: 50, west: 170, east: 185 });
    expect(publishedBox(pacific!)).toEqual({ north: 60, south: 50, west: 170, east: -175 });
    expect(unionOfBoxes([])).toBeUndefined();
    expect(unwrappedBox({ north: 1, south: 0, west: 170, east: -170 })).toEqual({ north: 1, south: 0, west: 170, east: 190 });
  });
});

describe("distanceToBoxKm", () => {
  const KM_PER_DEGREE = (Math.PI / 180) * 6371.0088;
  it("is 0 inside a box and on its edge, either convention", () => {
    expect(distanceToBoxKm({ north: 1, south: -1, west: -1, east: 1 }, 0, 0)).toBe(0);
    expect(distanceToBoxKm({ north: 1, south: -1, west: -1, east: 1 }, 1, 1)).toBe(0);
    expect(distanceToBoxKm({ north: 10, south: -10, west: 170, east: -170 }, 180, 0)).toBe(0);
    expect(distanceToBoxKm({ north: 10, south: -10, west: 170, east: -170 }, -175, 5)).toBe(0);
  });

  it("along a meridian and along the equator: the degrees between, in km", () => {
    expect(distanceToBoxKm({ north: 1, south: -1, west: -1, east: 1 }, 0, 3)).toBeCloseTo(2 * KM_PER_DEGREE, 6);
    expect(distanceToBoxKm({ north: 10, south: -10, west: 170, east: -170 }, -160, 0)).toBeCloseTo(10 * KM_PER_DEGREE, 6);
    expect(distanceToBoxKm({ north: 10, south: -10, west: 170, east: -170 }, 160, 0)).toBeCloseTo(10 * KM_PER_DEGREE, 6);
  });

  it("a drawing with latitude and longitude swapped lies a continent from its volcano", () => {
    // Askja (65.03°N, 16.75°W) against a box drawn around it in lat,lon order (around 16.75°S, 65°E).
    expect(distanceToBoxKm({ north: -16, south: -17.5, west: 64, east: 66 }, -16.75, 65.03)).toBeGreaterThan(9000);
  });
});
