/**
 * The GeoJSON twin of a forecaster's KML judged by GDAL: `ogr2ogr -f GeoJSON` of the same file (its LIBKML
 * driver, one layer per Document and Folder) gives the same geometries, feature by feature, for the sample
 * runs' advisories (the whole file and each time's split) and for the test KMLs holding every geometry.
 * Rings may differ in orientation and closure only (GDAL keeps them as written; RFC 7946 wants them closed
 * and oriented), and GDAL gives 2-D positions of a 3-D MultiGeometry an altitude of 0. Nothing of
 * ashcast's geometry code does the judging. /work/shared/data/real/ holds no KML: the sample runs' advisory
 * files and test/fixtures/kml are the inputs.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Issues } from "../../src/build/issues.ts";
import { kmlReader } from "../../src/build/readers/kml.ts";
import type { KmlDocument } from "../../src/build/readers/types.ts";
import { forecasterGeoJson } from "../../src/geo/forecasterGeoJson.ts";
import { tool } from "./gdalContainment.ts";

const ROOT = path.join(import.meta.dirname, "../..");
const SAMPLE_KML = readdirSync(path.join(ROOT, "runs"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => readdirSync(path.join(ROOT, "runs", entry.name)).filter((name) => name.endsWith(".kml")).map((name) => path.join(ROOT, "runs", entry.name, name)));
const FIXTURES = ["hekla-advisory.kml", "geometries.kml"].map((name) => path.join(ROOT, "test/fixtures/kml", name));
const HAS_OGR = tool("ogr2ogr") && tool("ogrinfo");

const scratch = mkdtempSync(path.join(tmpdir(), "ashcast-kml-gdal-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Position = number[];
interface Geometry {
  type: string;
  coordinates?: unknown;
  geometries?: Geometry[];
}
interface Feature {
  name: string | null;
  geometry: Geometry | null;
}

async function readKml(file: string): Promise<KmlDocument> {
  const bytes = readFileSync(file);
  const issues = new Issues();
  const reading = await kmlReader.read({ name: path.basename(file), displayPath: file, absolutePath: file, size: statSync(file).size, bytes: async () => bytes }, issues);
  if (reading?.kind !== "kml") throw new Error(`${file} did not read: ${JSON.stringify(issues.list)}`);
  return reading.kml;
}

/** Every feature GDAL reads from a KML file, layer after layer (the Document's own, then each Folder's), in order. */
function gdalFeatures(file: string): Feature[] {
  const layers = spawnSync("ogrinfo", ["-ro", "-q", file], { encoding: "utf8" });
  if (layers.status !== 0) throw new Error(`ogrinfo failed on ${file}: ${layers.stderr}`);
  const names = layers.stdout.split("\n").flatMap((line) => {
    // LIBKML layers have no fixed geometry type, so ogrinfo adds none after the name: the rest of the line is the name.
    const match = /^\d+: (.*)$/.exec(line);
    return match ? [match[1]!] : [];
  });
  return names.flatMap((layer) => {
    const r = spawnSync("ogr2ogr", ["-f", "GeoJSON", "/vsistdout/", file, layer], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`ogr2ogr failed on ${file} layer ${layer}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout) as { features: Array<{ properties: { Name?: string }; geometry: Geometry | null }> };
    return doc.features.map((f) => ({ name: f.properties.Name ?? null, geometry: f.geometry }));
  });
}

/** A ring as a cycle: unclosed, started at its smallest position, run the way whose next position is smaller. */
function canonicalRing(ring: Position[]): string {
  const key = (p: Position) => p.join(",");
  const open = ring.length > 1 && key(ring[0]!) === key(ring[ring.length - 1]!) ? ring.slice(0, -1) : ring;
  const keys = open.map(key);
  const smallest = keys.reduce((best, k, i) => (k < keys[best]! ? i : best), 0);
  const forward = [...keys.slice(smallest), ...keys.slice(0, smallest)];
  const backward = [forward[0]!, ...forward.slice(1).reverse()];
  return (forward[1] ?? "") <= (backward[1] ?? "") ? forward.join(" ") : backward.join(" ");
}

/**
 * A geometry in a form where GDAL's and ours compare equal when they hold the same shapes: rings as cycles,
 * and altitudes dropped where ours has none (GDAL writes 0 there in a 3-D collection; checked below).
 */
function canonical(geometry: Geometry | null, dims: (p: Position) => Position): unknown {
  if (!geometry) return null;
  const c = geometry.coordinates;
  switch (geometry.type) {
    case "Point":
      return { type: "Point", at: dims(c as Position).join(",") };
    case "MultiPoint":
    case "LineString":
      return { type: geometry.type, at: (c as Position[]).map((p) => dims(p).join(",")) };
    case "MultiLineString":
      return { type: geometry.type, at: (c as Position[][]).map((line) => line.map((p) => dims(p).join(","))) };
    case "Polygon":
      return { type: geometry.type, at: (c as Position[][]).map((ring) => canonicalRing(ring.map(dims))) };
    case "MultiPolygon":
      return { type: geometry.type, at: (c as Position[][][]).map((polygon) => polygon.map((ring) => canonicalRing(ring.map(dims)))) };
    case "GeometryCollection":
      return { type: geometry.type, members: geometry.geometries!.map((g) => canonical(g, dims)) };
    default:
      throw new Error(`unexpected geometry ${geometry.type}`);
  }
}

function positionsOf(geometry: Geometry | null): Position[] {
  if (!geometry) return [];
  if (geometry.type === "GeometryCollection") return geometry.geometries!.flatMap(positionsOf);
  const flat = (value: unknown): Position[] => (Array.isArray(value) && typeof value[0] === "number" ? [value as Position] : (value as unknown[]).flatMap(flat));
  return flat(geometry.coordinates);
}

/**
 * Ours against GDAL's, matched by name in document order. GDAL's features ours has no counterpart for
 * (it turns a GroundOverlay into its box and a gx:Track into a line) are returned, to be checked.
 */
function compare(ours: Feature[], gdal: Feature[], label: string): Feature[] {
  const skipped: Feature[] = [];
  let g = 0;
  for (const feature of ours) {
    while (g < gdal.length && gdal[g]!.name !== feature.name) skipped.push(gdal[g++]!);
    const theirs = gdal[g++];
    expect(theirs, `${label}: GDAL has no feature ${feature.name}`).toBeDefined();
    if (feature.geometry === null) {
      // Ours leaves out a geometry GeoJSON cannot hold here (a gx:Track); GDAL reads it as something or nothing.
      continue;
    }
    const ourPositions = positionsOf(feature.geometry);
    const theirPositions = positionsOf(theirs!.geometry);
    // GDAL's altitude is ours where ours has one, 0 where ours has none.
    const altitudes = new Map(ourPositions.map((p) => [`${p[0]},${p[1]}`, p[2]]));
    for (const p of theirPositions) if (p.length > 2) expect(p[2], `${label} ${feature.name}: altitude at ${p[0]},${p[1]}`).toBe(altitudes.get(`${p[0]},${p[1]}`) ?? 0);
    const lonLat = (p: Position): Position => p.slice(0, 2);
    const asOurs = (p: Position): Position => (altitudes.get(`${p[0]},${p[1]}`) === undefined ? lonLat(p) : p);
    expect(canonical(feature.geometry, (p) => p), `${label}: ${feature.name}`).toEqual(canonical(theirs!.geometry, asOurs));
  }
  skipped.push(...gdal.slice(g));
  return skipped;
}

describe.skipIf(!HAS_OGR)("forecasters' KML as GeoJSON, against ogr2ogr", () => {
  it("finds the sample runs' forecaster KML", () => {
    expect(SAMPLE_KML.length).toBeGreaterThanOrEqual(3);
  });

  for (const file of SAMPLE_KML) {
    const label = path.relative(ROOT, file);
    it(`gives GDAL's geometries for ${label}, the whole file and each time's split`, async () => {
      const kml = await readKml(file);
      const whole = forecasterGeoJson(kml.features());
      expect(whole.left_out.count).toBe(0);
      const ours = whole.features.map((f) => ({ name: f.properties.name, geometry: f.geometry }));
      expect(compare(ours, gdalFeatures(file), label)).toEqual([]);
      expect(ours.length).toBeGreaterThan(3);
      expect(kml.times.length).toBeGreaterThan(1);
      for (const time of kml.times) {
        const split = path.join(scratch, `${path.basename(path.dirname(file))}-${time.replace(/:/g, "")}.kml`);
        writeFileSync(split, kml.forTime(time));
        const twin = forecasterGeoJson(kml.features(time)).features.map((f) => ({ name: f.properties.name, geometry: f.geometry }));
        expect(compare(twin, gdalFeatures(split), `${label} at ${time}`)).toEqual([]);
        expect(twin.length).toBeLessThan(ours.length);
      }
    });
  }

  it("gives GDAL's geometries for the Hekla advisory fixture (3-D positions, HTML description)", async () => {
    const file = FIXTURES[0]!;
    const ours = forecasterGeoJson((await readKml(file)).features()).features.map((f) => ({ name: f.properties.name, geometry: f.geometry }));
    expect(compare(ours, gdalFeatures(file), "hekla-advisory.kml")).toEqual([]);
  });

  it("gives GDAL's geometries for every kind of geometry, and leaves out only what GeoJSON has no counterpart for", async () => {
    const file = FIXTURES[1]!;
    const doc = forecasterGeoJson((await readKml(file)).features());
    const ours = doc.features.map((f) => ({ name: f.properties.name, geometry: f.geometry }));
    const skipped = compare(ours, gdalFeatures(file), "geometries.kml");
    // GDAL turns the GroundOverlay into its LatLonBox: a picture of ash is not an ash area.
    expect(skipped.map((f) => f.name)).toEqual(["satellite"]);
    expect(doc.left_out).toEqual({ count: 4, kinds: { GroundOverlay: 1, NetworkLink: 1, ScreenOverlay: 1, Track: 1 } });
    expect(ours.map((f) => [f.name, f.geometry?.type ?? null])).toEqual([
      ["Grimsvotn", "Point"],
      ["Area with holes", "Polygon"],
      ["Two cells", "MultiPolygon"],
      ["Plume axis and vent", "GeometryCollection"],
      ["Flight track", "LineString"],
      ["Boundary only", "LineString"],
      ["Balloon", null],
      ["Note without geometry", null],
    ]);
    expect(doc.features[1]!.properties).toMatchObject({ band: "FL200/350", timestamp: "2024-05-21T18:00:00Z", description: "Observed 18Z & from radar\ntwo holes clear of ash" });
    expect(doc.features[2]!.properties).toMatchObject({ band: "FL200/350", time: "2024-05-21T18:00:00Z", end: "2024-05-22T00:00:00Z", timestamp: null });
    expect(doc.features[0]!.properties).toMatchObject({ band: null, time: null, timestamp: null, description: "Grimsvotn, 64.42N 17.33W, 1725 m" });
  });
});
