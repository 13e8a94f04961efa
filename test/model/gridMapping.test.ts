import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Position } from "../../src/geo/types.ts";
import { arcDegrees, curvilinearGrid, geographicToRotated, regularGrid, rotatedToGeographic, unwrapAxis, wrapLongitude } from "../../src/model/gridMapping.ts";
import { rotatedByVectors } from "./helpers.ts";

function expectClose(actual: Position, expected: Position, tolerance = 1e-9): void {
  expect(Math.abs(wrapLongitude(actual[0] - expected[0], 0)), `lon ${actual[0]} vs ${expected[0]}`).toBeLessThan(tolerance);
  expect(Math.abs(actual[1] - expected[1]), `lat ${actual[1]} vs ${expected[1]}`).toBeLessThan(tolerance);
}

/** Same point on the sphere (longitude means nothing at a pole). */
function expectSamePoint(actual: Position, expected: Position, toleranceDegrees: number): void {
  expect(arcDegrees(actual, expected), `${actual} vs ${expected}`).toBeLessThan(toleranceDegrees);
}

describe("rotated pole (CF rotated_latitude_longitude)", () => {
  it("puts grid (0, 0) opposite the pole, as CF and PROJ do", () => {
    // CF Appendix F example (pole 32.5N 170E): grid centre over the British Isles.
    expectClose(rotatedToGeographic(0, 0, 32.5, 170), [-10, 57.5]);
    // MET Norway's rotation (south pole 22S 40W, so north pole 22N 140E): grid centre over Greenland.
    expectClose(rotatedToGeographic(0, 0, 22, 140), [-40, 68]);
    // The grid's north pole is the pole; no rotation is the identity.
    expect(rotatedToGeographic(0, 90, 22, 140)[1]).toBeCloseTo(22, 9);
    expectClose(rotatedToGeographic(12.5, 47.25, 90, 180), [12.5, 47.25]);
  });

  it("agrees with an independent rotation of unit vectors everywhere", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -89, max: 89, noNaN: true }),
        fc.double({ min: -89, max: 89, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        (rlon, rlat, poleLat, poleLon) => {
          expectSamePoint(rotatedToGeographic(rlon, rlat, poleLat, poleLon), rotatedByVectors(rlon, rlat, poleLat, poleLon), 1e-6);
        },
      ),
    );
  });

  it("keeps its digits next to a pole (latitudes by atan2, not asin: asin is off by up to 8.5e-7° there)", () => {
    // A rotated pole 1° from the geographic one: the point 1° from it, towards it, is the pole itself.
    expect(rotatedToGeographic(0, 88.99999999999986, 88.99999999999986, 0)[1]).toBeGreaterThan(90 - 1e-12);
    expect(geographicToRotated(0, 90, 89, 0)[1]).toBeCloseTo(89, 12);
  });

  it("has geographicToRotated as its inverse", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -85, max: 85, noNaN: true }),
        fc.double({ min: 0, max: 89, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -30, max: 30, noNaN: true }),
        (lon, lat, poleLat, poleLon, gridLon) => {
          const [rlon, rlat] = geographicToRotated(lon, lat, poleLat, poleLon, gridLon);
          expectSamePoint(rotatedToGeographic(rlon, rlat, poleLat, poleLon, gridLon), [lon, lat], 1e-9);
        },
      ),
    );
  });

  it("places the true north pole at rotated longitude north_pole_grid_longitude", () => {
    expect(geographicToRotated(0, 90, 22, 140)[0]).toBeCloseTo(0, 9);
    expect(geographicToRotated(0, 90, 22, 140, 15)[0]).toBeCloseTo(15, 9);
  });
});

describe("regularGrid", () => {
  const grid = regularGrid([-45, -44.5, -44, -43.5], [40, 40.5, 41]);

  it("interpolates linearly between centres and extrapolates the outer half cells", () => {
    expect(grid.kind).toBe("regular");
    expect([grid.nx, grid.ny]).toEqual([4, 3]);
    expect(grid.toLonLat(0, 0)).toEqual([-45, 40]);
    expect(grid.toLonLat(3, 2)).toEqual([-43.5, 41]);
    expect(grid.toLonLat(1.5, 0.5)).toEqual([-44.25, 40.25]);
    expect(grid.toLonLat(-0.5, -0.5)).toEqual([-45.25, 39.75]);
    expect(grid.toLonLat(3.5, 2.5)).toEqual([-43.25, 41.25]);
    expect(grid.domain).toEqual({ north: 41, south: 40, east: -43.5, west: -45 });
    expect(grid.cellDegrees).toBe(0.5);
  });

  it("takes north-to-south latitudes and 0..360 longitudes", () => {
    const flipped = regularGrid([340, 350, 0, 10], [62, 61, 60]);
    expect(flipped.toLonLat(0, 0)).toEqual([-20, 62]);
    expect(flipped.toLonLat(2.5, 2)).toEqual([5, 60]);
    expect(flipped.domain).toEqual({ north: 62, south: 60, east: 10, west: -20 });
    expect(flipped.cellDegrees).toBe(1);
  });

  it("keeps longitudes continuous across the antimeridian", () => {
    const pacific = regularGrid([177, 178, 179, 180, -179], [50, 51]);
    expect(pacific.toLonLat(3.5, 0)[0]).toBeCloseTo(180.5, 12);
    expect(pacific.toLonLat(4.5, 0)[0]).toBeCloseTo(181.5, 12);
    expect(pacific.domain.west).toBe(177);
    expect(pacific.domain.east).toBe(181);
  });

  it("clamps latitudes extrapolated past a pole", () => {
    expect(regularGrid([0, 1], [89, 89.5]).toLonLat(0, 2)[1]).toBe(90);
  });

  it("unwrapAxis removes jumps of 360", () => {
    expect([...unwrapAxis([170, 180, -170, -160])]).toEqual([170, 180, 190, 200]);
  });
});

describe("curvilinearGrid", () => {
  it("interpolates the 2-D arrays bilinearly, extrapolating beyond the outer centres", () => {
    // A 3 × 2 grid, sheared: lon depends on x and y, lat on y.
    const lon = [0, 1, 2, 0.5, 1.5, 2.5];
    const lat = [60, 60.2, 60.4, 61, 61.2, 61.4];
    const grid = curvilinearGrid(lon, lat, 3, 2);
    expect(grid.kind).toBe("curvilinear");
    expect(grid.toLonLat(1, 1)).toEqual([1.5, 61.2]);
    const [x, y] = grid.toLonLat(0.5, 0.5);
    expect(x).toBeCloseTo(0.75, 12);
    expect(y).toBeCloseTo(60.6, 12);
    const [ex, ey] = grid.toLonLat(-0.5, 0);
    expect(ex).toBeCloseTo(-0.5, 12);
    expect(ey).toBeCloseTo(59.9, 12);
    expect(grid.domain).toEqual({ north: 61.4, south: 60, east: 2.5, west: 0 });
  });

  it("unwraps the corners of a cell across the antimeridian", () => {
    const grid = curvilinearGrid([179.2, -179.8, 179.2, -179.8], [10, 10, 11, 11], 2, 2);
    const [lon, lat] = grid.toLonLat(0.5, 0.5);
    expect(lon).toBeCloseTo(179.7, 12); // through 180, not through 0
    expect(lat).toBeCloseTo(10.5, 12);
    expect(grid.toLonLat(1, 0)[0]).toBeCloseTo(180.2, 12);
    expect(grid.domain.west).toBeCloseTo(179.2, 12);
    expect(grid.domain.east).toBeCloseTo(180.2, 12);
  });

  it("gives the cell size in degrees of arc", () => {
    const lon: number[] = [];
    const lat: number[] = [];
    for (let j = 0; j < 5; j++) {
      for (let i = 0; i < 6; i++) {
        const [a, b] = rotatedToGeographic(-2 + i * 0.25, -1 + j * 0.25, 22, 140);
        lon.push(a);
        lat.push(b);
      }
    }
    expect(curvilinearGrid(lon, lat, 6, 5).cellDegrees).toBeCloseTo(0.25, 3);
  });
});
