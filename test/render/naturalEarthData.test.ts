/**
 * The base maps' Natural Earth (src/render/naturalEarthData.ts): the files kept in src/render are what the
 * installed world-atlas gives (run `npm run natural-earth` after upgrading it), and they decode to the very
 * positions topojson-client gives for world-atlas's TopoJSON, piece by piece and in order, with the same
 * bounding boxes: the base maps are drawn from the same numbers as before, bit for bit.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { feature, mesh } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import { describe, expect, it } from "vitest";
import { naturalEarthBytes, naturalEarthPath, RESOLUTIONS } from "../../scripts/natural-earth.ts";
import { naturalEarth } from "../../src/render/basemap.ts";

const topology = (file: string): Topology => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`world-atlas/${file}`), "utf8")) as Topology;

/** Land polygons and border lines as topojson-client decodes them, each with the box of its (outer) points. */
function viaTopojson(resolution: string) {
  const land = topology(`land-${resolution}.json`);
  const countries = topology(`countries-${resolution}.json`);
  const box = (points: GeoJSON.Position[]) => ({
    west: Math.min(...points.map((p) => p[0]!)),
    east: Math.max(...points.map((p) => p[0]!)),
    south: Math.min(...points.map((p) => p[1]!)),
    north: Math.max(...points.map((p) => p[1]!)),
  });
  const polygons = feature(land, land.objects["land"] as GeometryCollection).features.flatMap((f) => (f.geometry.type === "Polygon" ? [f.geometry.coordinates] : f.geometry.type === "MultiPolygon" ? f.geometry.coordinates : []));
  const lines = mesh(countries, countries.objects["countries"] as GeometryCollection, (a, b) => a !== b).coordinates;
  return {
    land: polygons.map((coordinates) => ({ ...box(coordinates[0]!), geometry: { type: "Polygon", coordinates } })),
    borders: lines.map((coordinates) => ({ ...box(coordinates), geometry: { type: "LineString", coordinates } })),
  };
}

describe.each(RESOLUTIONS)("Natural Earth %s", (resolution) => {
  it("is kept as the installed world-atlas gives it", () => {
    expect(Buffer.from(readFileSync(naturalEarthPath(resolution))).equals(Buffer.from(naturalEarthBytes(resolution))), `src/render/natural-earth-${resolution}.bin is stale: run npm run natural-earth`).toBe(true);
  });

  it("gives topojson-client's positions and boxes, piece by piece", () => {
    const data = naturalEarth(resolution);
    const expected = viaTopojson(resolution);
    const decoded = {
      land: data.land.map(({ west, east, south, north, geometry }) => ({ west, east, south, north, geometry: geometry() })),
      borders: data.borders.map(({ west, east, south, north, geometry }) => ({ west, east, south, north, geometry: geometry() })),
    };
    expect(decoded.land.length).toBeGreaterThan(100);
    expect(decoded.borders.length).toBeGreaterThan(100);
    // toStrictEqual compares numbers with Object.is: -0 is not 0, and no position may be off by a bit.
    expect(decoded).toStrictEqual(expected);
  });
});
