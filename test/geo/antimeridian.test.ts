/**
 * RFC 7946 antimeridian cutting (§3.1.9) and bbox (§5.2): exact parts for a square across 180°, a ring
 * with a hole across it, a shape crossing it twice, a ring touching it without crossing, lines and
 * points; then GDAL as the judge: `ogr2ogr -wrapdateline` of the uncut polygon covers exactly our parts,
 * and the parts' areas (SpatiaLite's ST_Area) add up to the uncut polygon's.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { keptByRfc7946, rfc7946Bbox, rfc7946LineString, rfc7946Polygon, rfc7946Position, unwrappedExtent, type GeoPosition } from "../../src/geo/antimeridian.ts";
import { ringArea } from "../../src/geo/rings.ts";
import type { Position } from "../../src/geo/types.ts";
import { HAS_GDAL } from "./gdalContainment.ts";

const planarArea = (polygon: GeoPosition[][]): number => polygon.reduce((sum, ring) => sum + ringArea(ring as Position[]), 0);
const longitudes = (parts: GeoPosition[][][]): number[] => parts.flat(2).map((p) => p[0]!);

// Counter-clockwise, 1° on either side of 180°.
const SQUARE: GeoPosition[] = [[179, 0], [181, 0], [181, 1], [179, 1], [179, 0]];
// 178 … 183 by −2 … 3 with a hole 179 … 181 by −1 … 2: both rings cross 180°.
const HOLED: GeoPosition[][] = [
  [[178, -2], [183, -2], [183, 3], [178, 3], [178, -2]],
  [[179, -1], [181, -1], [181, 2], [179, 2], [179, -1]],
];
// A "C" opening east: 180° crosses its lower and upper arm, so the east side is two polygons.
const TWICE: GeoPosition[] = [[178, 0], [182, 0], [182, 1], [179, 1], [179, 2], [182, 2], [182, 3], [178, 3], [178, 0]];

describe("rfc7946Polygon", () => {
  it("cuts a square from 179° to 181° into two squares on either side of the antimeridian", () => {
    expect(rfc7946Polygon([SQUARE])).toEqual([
      [[[180, 1], [179, 1], [179, 0], [180, 0], [180, 1]]],
      [[[-180, 0], [-179, 0], [-179, 1], [-180, 1], [-180, 0]]],
    ]);
  });

  it("gives the same parts for the square as KML writes it (within ±180, jumping across) and unclosed, clockwise", () => {
    const asKml: GeoPosition[] = [[179, 0], [-179, 0], [-179, 1], [179, 1], [179, 0]];
    expect(rfc7946Polygon([asKml])).toEqual(rfc7946Polygon([SQUARE]));
    const clockwiseOpen: GeoPosition[] = [[179, 1], [-179, 1], [-179, 0], [179, 0]];
    expect(rfc7946Polygon([clockwiseOpen]).map((p) => planarArea(p))).toEqual([1, 1]);
  });

  it("cuts a ring with a hole across the line: each side's outline runs round its part of the hole", () => {
    expect(rfc7946Polygon(HOLED)).toEqual([
      [[[180, 3], [178, 3], [178, -2], [180, -2], [180, -1], [179, -1], [179, 2], [180, 2], [180, 3]]],
      [[[-180, -2], [-177, -2], [-177, 3], [-180, 3], [-180, 2], [-179, 2], [-179, -1], [-180, -1], [-180, -2]]],
    ]);
    // 25 − 6 = 19 deg², 7 west and 12 east.
    expect(rfc7946Polygon(HOLED).map(planarArea)).toEqual([7, 12]);
  });

  it("keeps a hole that does not cross with the part that holds it, clockwise", () => {
    const [west, east] = rfc7946Polygon([HOLED[0]!, [[181, 0], [182, 0], [182, 1], [181, 0]]]);
    expect(west).toEqual([[[180, 3], [178, 3], [178, -2], [180, -2], [180, 3]]]);
    expect(east).toEqual([
      [[-180, -2], [-177, -2], [-177, 3], [-180, 3], [-180, -2]],
      [[-179, 0], [-178, 1], [-178, 0], [-179, 0]],
    ]);
  });

  it("cuts a shape crossing the line twice into one part west and two east", () => {
    expect(rfc7946Polygon([TWICE])).toEqual([
      [[[180, 1], [179, 1], [179, 2], [180, 2], [180, 3], [178, 3], [178, 0], [180, 0], [180, 1]]],
      [[[-180, 0], [-178, 0], [-178, 1], [-180, 1], [-180, 0]]],
      [[[-180, 2], [-178, 2], [-178, 3], [-180, 3], [-180, 2]]],
    ]);
  });

  it("leaves a ring touching 180° without crossing as it is, from either side", () => {
    const west: GeoPosition[] = [[170, 0], [180, 5], [170, 10], [170, 0]];
    expect(rfc7946Polygon([west])).toEqual([[west]]);
    const eastAsKml: GeoPosition[] = [[-170, 0], [-170, 10], [-180, 5], [-170, 0]];
    expect(rfc7946Polygon([eastAsKml])).toEqual([[eastAsKml]]);
    // Unwrapped (a model grid past 180°): moved a turn west, the touching corner on −180.
    expect(rfc7946Polygon([[[180, 5], [190, 0], [190, 10], [180, 5]]])).toEqual([[[[-180, 5], [-170, 0], [-170, 10], [-180, 5]]]]);
  });

  it("keeps altitudes, interpolating them at the cut, and positions as given elsewhere", () => {
    const ring: GeoPosition[] = [[179.5, 0, 100], [180.5, 0, 300], [180.5, 1, 300], [179.5, 1, 100], [179.5, 0, 100]];
    expect(rfc7946Polygon([ring])).toEqual([
      [[[180, 1, 200], [179.5, 1, 100], [179.5, 0, 100], [180, 0, 200], [180, 1, 200]]],
      [[[-180, 0, 200], [-179.5, 0, 300], [-179.5, 1, 300], [-180, 1, 200], [-180, 0, 200]]],
    ]);
    // Not crossing: exactly the input's numbers, closed and counter-clockwise.
    const given: GeoPosition[] = [[-19.9, 63.9, 0], [-19.6, 64.1, 0], [-18.3, 64, 0], [-18.6, 63.7, 0]];
    expect(rfc7946Polygon([given])).toEqual([[[[-19.9, 63.9, 0], [-18.6, 63.7, 0], [-18.3, 64, 0], [-19.6, 64.1, 0], [-19.9, 63.9, 0]]]]);
  });

  it("keeps the area and puts every longitude within ±180 for any polygon across the line (star-shaped, random)", () => {
    const star = fc.array(fc.tuple(fc.double({ min: 0.2, max: 8, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 3, maxLength: 24 });
    fc.assert(
      fc.property(star, fc.double({ min: 175, max: 185, noNaN: true }), (spokes, centre) => {
        const ring: GeoPosition[] = spokes
          .map(([r, a], i) => [r, ((i + a * 0.9) / spokes.length) * 2 * Math.PI] as const)
          .map(([r, angle]) => [centre + r * Math.cos(angle), 10 + r * Math.sin(angle)]);
        ring.push(ring[0]!);
        const parts = rfc7946Polygon([ring]);
        for (const lon of longitudes(parts)) expect(Math.abs(lon)).toBeLessThanOrEqual(180);
        const total = parts.reduce((sum, part) => sum + planarArea(part), 0);
        expect(total).toBeCloseTo(Math.abs(ringArea(ring as Position[])), 9);
        for (const part of parts) expect(ringArea(part[0] as Position[])).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe("rfc7946LineString and rfc7946Position", () => {
  it("cuts a line at 180°, the cut point's latitude and altitude interpolated", () => {
    expect(rfc7946LineString([[179, 0], [-179, 2]])).toEqual([[[179, 0], [180, 1]], [[-180, 1], [-179, 2]]]);
    expect(rfc7946LineString([[179, 0, 100], [181, 2, 300], [182, 2, 300]])).toEqual([[[179, 0, 100], [180, 1, 200]], [[-180, 1, 200], [-179, 2, 300], [-178, 2, 300]]]);
    expect(rfc7946LineString([[-19.7, 63.98], [-18, 64]])).toEqual([[[-19.7, 63.98], [-18, 64]]]);
    // Back and forth: three pieces.
    expect(rfc7946LineString([[179, 0], [-179, 0], [179, 2]])).toEqual([[[179, 0], [180, 0]], [[-180, 0], [-179, 0], [-180, 1]], [[180, 1], [179, 2]]]);
  });

  it("brings a longitude past 180 back within ±180, keeping the rest", () => {
    expect(rfc7946Position([190, 5])).toEqual([-170, 5]);
    expect(rfc7946Position([-190, 5, 12])).toEqual([170, 5, 12]);
    expect(rfc7946Position([180, 5])).toEqual([180, 5]);
  });
});

describe("rfc7946Bbox", () => {
  it("writes a box across the antimeridian west > east (§5.2), and one past it within ±180", () => {
    expect(rfc7946Bbox([unwrappedExtent(SQUARE)!])).toEqual([179, 0, -179, 1]);
    expect(rfc7946Bbox([unwrappedExtent([[179, 0], [-179, 1]])!])).toEqual([179, 0, -179, 1]);
    expect(rfc7946Bbox([{ west: 180, east: 190, south: 0, north: 1 }])).toEqual([-180, 0, -170, 1]);
    expect(rfc7946Bbox([{ west: 170, east: 175, south: 0, north: 1 }, { west: 185, east: 186, south: -1, north: 0 }])).toEqual([170, -1, -174, 1]);
    expect(rfc7946Bbox([{ west: -20, east: -10, south: 60, north: 65 }], { min: 0, max: 1666 })).toEqual([-20, 60, 0, -10, 65, 1666]);
    expect(rfc7946Bbox([{ west: -170, east: 200, south: 0, north: 1 }])).toEqual([-180, 0, 180, 1]);
    expect(rfc7946Bbox([])).toBeUndefined();
  });
});

const scratch = mkdtempSync(path.join(tmpdir(), "ashcast-antimeridian-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!HAS_GDAL)("the cut judged by GDAL", () => {
  it("covers what ogr2ogr -wrapdateline makes of the uncut polygon, and keeps its area", () => {
    const cases: Array<[string, GeoPosition[][]]> = [
      ["square", [SQUARE]],
      ["holed", HOLED],
      ["twice", [TWICE]],
      ["touching", [[[170, 0], [180, 5], [170, 10], [170, 0]]]],
      ["irregular", [[[176.3, 51.2], [183.7, 50.1], [185.2, 54.9], [181.1, 53.3], [179.4, 56.8], [174.9, 54.2], [176.3, 51.2]], [[178.2, 52.4], [178.9, 54.1], [181.6, 52.2], [178.2, 52.4]]]],
    ];
    const feature = (id: string, src: string, geometry: unknown) => ({ type: "Feature", properties: { id, src }, geometry });
    const uncut = path.join(scratch, "uncut.geojson");
    writeFileSync(uncut, JSON.stringify({ type: "FeatureCollection", features: cases.map(([id, rings]) => feature(id, "uncut", { type: "Polygon", coordinates: rings })) }));
    const wrapped = path.join(scratch, "wrapped.geojson");
    const w = spawnSync("ogr2ogr", ["-f", "GeoJSON", "-wrapdateline", wrapped, uncut], { encoding: "utf8" });
    expect(w.status, w.stderr).toBe(0);
    const gdal = (JSON.parse(readFileSync(wrapped, "utf8")) as { features: Array<{ properties: { id: string }; geometry: unknown }> }).features;
    const all = path.join(scratch, "areas.geojson");
    writeFileSync(
      all,
      JSON.stringify({
        type: "FeatureCollection",
        features: [
          ...cases.map(([id, rings]) => feature(id, "uncut", { type: "Polygon", coordinates: rings })),
          ...cases.map(([id, rings]) => feature(id, "ours", { type: "MultiPolygon", coordinates: rfc7946Polygon(rings) })),
          ...gdal.map((f) => feature(f.properties.id, "gdal", f.geometry)),
        ],
      }),
    );
    const sql =
      "SELECT u.id AS id, ST_Area(u.geometry) AS uncut, ST_Area(o.geometry) AS ours, ST_Area(g.geometry) AS gdal, " +
      "COALESCE(ST_Area(ST_SymDifference(o.geometry, g.geometry)), 0.0) AS apart, ST_IsValid(o.geometry) AS valid, ST_MinX(o.geometry) AS minx, ST_MaxX(o.geometry) AS maxx " +
      "FROM areas u JOIN areas o ON o.id = u.id AND o.src = 'ours' JOIN areas g ON g.id = u.id AND g.src = 'gdal' WHERE u.src = 'uncut' ORDER BY u.id";
    const r = spawnSync("ogr2ogr", ["-f", "CSV", "/vsistdout/", all, "-dialect", "SQLite", "-sql", sql], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.trim().split("\n").slice(1).map((line) => line.split(",").map((cell) => cell.replace(/"/g, "")));
    expect(rows.map((row) => row[0])).toEqual(cases.map(([id]) => id).sort());
    for (const [id, uncutArea, ours, gdalArea, apart, valid, minx, maxx] of rows) {
      expect(Number(ours), `${id}: our parts' area`).toBeCloseTo(Number(uncutArea), 9);
      expect(Number(gdalArea), `${id}: GDAL's parts' area`).toBeCloseTo(Number(uncutArea), 9);
      expect(Number(apart), `${id}: area between ours and GDAL's`).toBeLessThan(1e-9);
      expect(valid, `${id}: valid`).toBe("1");
      expect(Number(minx)).toBeGreaterThanOrEqual(-180);
      expect(Number(maxx)).toBeLessThanOrEqual(180);
    }
    expect(Number(rows.find((row) => row[0] === "holed")![1])).toBe(19);
  });

  it("cuts a ring written as KML writes it (within ±180, jumping across) as ogr2ogr -wrapdateline does", () => {
    const rings: GeoPosition[][] = [[[176.3, 51.2], [-176.3, 50.1], [-174.8, 54.9], [-178.9, 53.3], [179.4, 56.8], [174.9, 54.2], [176.3, 51.2]], [[178.2, 52.4], [178.9, 54.1], [-178.4, 52.2], [178.2, 52.4]]];
    const input = path.join(scratch, "as-kml.geojson");
    writeFileSync(input, JSON.stringify({ type: "FeatureCollection", features: [{ type: "Feature", properties: { src: "given" }, geometry: { type: "Polygon", coordinates: rings } }] }));
    const wrapped = path.join(scratch, "as-kml-wrapped.geojson");
    const w = spawnSync("ogr2ogr", ["-f", "GeoJSON", "-wrapdateline", wrapped, input], { encoding: "utf8" });
    expect(w.status, w.stderr).toBe(0);
    const gdal = (JSON.parse(readFileSync(wrapped, "utf8")) as { features: Array<{ geometry: unknown }> }).features[0]!.geometry;
    const both = path.join(scratch, "askml.geojson");
    const ours = { type: "MultiPolygon", coordinates: rfc7946Polygon(rings) };
    writeFileSync(both, JSON.stringify({ type: "FeatureCollection", features: [{ type: "Feature", properties: { src: "ours" }, geometry: ours }, { type: "Feature", properties: { src: "gdal" }, geometry: gdal }] }));
    const sql = "SELECT ST_Area(o.geometry) AS ours, ST_Area(g.geometry) AS gdal, COALESCE(ST_Area(ST_SymDifference(o.geometry, g.geometry)), 0.0) AS apart FROM askml o JOIN askml g ON g.src = 'gdal' WHERE o.src = 'ours'";
    const r = spawnSync("ogr2ogr", ["-f", "CSV", "/vsistdout/", both, "-dialect", "SQLite", "-sql", sql], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const [oursArea, gdalArea, apart] = r.stdout.trim().split("\n")[1]!.split(",").map((cell) => Number(cell.replace(/"/g, "")));
    expect(oursArea).toBeCloseTo(gdalArea!, 9);
    expect(apart).toBeLessThan(1e-9);
    // The same shape unwrapped (longitudes past 180) gives the same parts.
    const unwrapped = rings.map((ring) => ring.map(([lon, lat]) => [lon! < 0 ? lon! + 360 : lon!, lat!]));
    expect(rfc7946Polygon(unwrapped).map((part) => part.map((ring) => ring.map(([lon, lat]) => [Number(lon!.toFixed(9)), lat])))).toEqual(ours.coordinates);
  });
});

describe("keptByRfc7946", () => {
  const flat = (rings: GeoPosition[][]): Float64Array[] => rings.map((ring) => Float64Array.from(ring.flat()));
  /** A star-shaped ring around (lon, lat), closed, turned either way; positions rounded to 4 decimals as the writers give them. */
  const star = (lon: number, lat: number, radii: number[], clockwise: boolean, wrapped = false): GeoPosition[] => {
    const ring = radii.map((r, i) => {
      const angle = ((clockwise ? -i : i) / radii.length) * 2 * Math.PI;
      const x = lon + r * Math.cos(angle);
      return [Number((wrapped ? ((((x + 180) % 360) + 360) % 360) - 180 : x).toFixed(4)), Number((lat + r * Math.sin(angle)).toFixed(4))];
    });
    return [...ring, ring[0]!];
  };

  it("says rings are kept only when rfc7946Polygon gives them back as they are, and says so of plain polygons", () => {
    let kept = 0;
    fc.assert(
      fc.property(
        fc.double({ min: -200, max: 200, noNaN: true }),
        fc.double({ min: -80, max: 80, noNaN: true }),
        fc.array(fc.double({ min: 0.5, max: 40, noNaN: true }), { minLength: 3, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.option(fc.tuple(fc.double({ min: -400, max: 400, noNaN: true }), fc.boolean()), { nil: undefined }),
        (lon, lat, radii, clockwise, wrapped, hole) => {
          // Wrapped into ±180, a ring across 180° jumps from 179 to -179, as a grid's longitudes may.
          const rings = [star(lon, lat, radii, clockwise, wrapped)];
          if (hole) rings.push(star(hole[0], lat, [0.1, 0.1, 0.1, 0.1], hole[1]));
          if (keptByRfc7946(flat(rings))) {
            kept++;
            expect(rfc7946Polygon(rings)).toEqual([rings]);
          }
        },
      ),
      { numRuns: 2000 },
    );
    expect(kept).toBeGreaterThan(200);
    // A counter-clockwise polygon with a clockwise hole, within ±180: kept.
    expect(keptByRfc7946(flat([star(-19.7, 63.98, [2, 3, 2, 3], false), star(-19.7, 63.98, [0.5, 0.5, 0.5], true)]))).toBe(true);
  });

  it("says no to what rfc7946Polygon changes: turned the wrong way, across 180°, a hole a turn away, an open ring", () => {
    const plain = star(10, 50, [2, 3, 2, 3], false);
    expect(keptByRfc7946(flat([plain]))).toBe(true);
    expect(keptByRfc7946(flat([star(10, 50, [2, 3, 2, 3], true)]))).toBe(false);
    expect(keptByRfc7946(flat([star(179, 50, [2, 3, 2, 3], false)]))).toBe(false);
    expect(keptByRfc7946(flat([star(182, 50, [1, 1, 1], false)]))).toBe(false);
    expect(keptByRfc7946(flat([star(179.5, 50, [2, 3, 2, 3], false, true)]))).toBe(false);
    // Counter-clockwise on the plane as written, but its edge from 179 to -179 is 2° east across 180, not 358° west.
    const across: GeoPosition[] = [[179, 50], [179, 51], [-179, 51], [-179, 50], [179, 50]];
    expect(ringArea(across as Position[])).toBeGreaterThan(0);
    expect(rfc7946Polygon([across])).not.toEqual([[across]]);
    expect(keptByRfc7946(flat([across]))).toBe(false);
    expect(keptByRfc7946(flat([plain, star(10, 50, [0.5, 0.5, 0.5], false)]))).toBe(false);
    expect(keptByRfc7946(flat([plain, star(370, 50, [0.5, 0.5, 0.5], true)]))).toBe(false);
    expect(keptByRfc7946(flat([plain.slice(0, -1)]))).toBe(false);
    expect(keptByRfc7946([])).toBe(false);
  });
});
