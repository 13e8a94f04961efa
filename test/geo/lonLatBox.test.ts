import { describe, expect, it } from "vitest";
import { publishedBox, unionOfBoxes, unwrappedBox } from "../../src/geo/lonLatBox.ts";

describe("longitude/latitude boxes across the antimeridian", () => {
  it("publishes a box past 180° wrapped, east < west", () => {
    expect(publishedBox({ north: 56, south: 53, west: 177, east: 187.5 })).toEqual({ north: 56, south: 53, west: 177, east: -172.5 });
    expect(publishedBox({ north: 10, south: 0, west: -190, east: -170 })).toEqual({ north: 10, south: 0, west: 170, east: -170 });
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
