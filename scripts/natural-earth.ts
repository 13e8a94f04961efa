/**
 * Writes src/render/natural-earth-<resolution>.bin from world-atlas's TopoJSON, in the layout
 * src/render/naturalEarthData.ts reads (a test fails when one is stale). Only here is TopoJSON parsed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { feature, mesh } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import { FORMAT_VERSION } from "../src/render/naturalEarthData.ts";

export const RESOLUTIONS = ["50m", "110m"] as const;
export const naturalEarthPath = (resolution: string): string => fileURLToPath(new URL(`../src/render/natural-earth-${resolution}.bin`, import.meta.url));

const topology = (file: string): Topology => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`world-atlas/${file}`), "utf8")) as Topology;

/** The file's bytes as world-atlas (the installed version) gives them. */
export const naturalEarthBytes = (resolution: string): Uint8Array => encodeNaturalEarth(topology(`land-${resolution}.json`), topology(`countries-${resolution}.json`));

interface Quantisation {
  kx: number;
  ky: number;
  dx: number;
  dy: number;
}

const quantisationOf = (topology: Topology): Quantisation => {
  if (!topology.transform) throw new RangeError("Internal error: world-atlas TopoJSON without a transform (quantisation)");
  const [kx, ky] = topology.transform.scale;
  const [dx, dy] = topology.transform.translate;
  return { kx, ky, dx, dy };
};

/** The file's bytes for world-atlas's land and countries TopoJSON at one resolution. */
function encodeNaturalEarth(land: Topology, countries: Topology): Uint8Array {
  const landQ = quantisationOf(land);
  const bordersQ = quantisationOf(countries);
  const polygons: GeoJSON.Position[][][] = [];
  for (const f of feature(land, land.objects["land"] as GeometryCollection).features) {
    const g = f.geometry;
    if (g.type === "Polygon") polygons.push(g.coordinates);
    else if (g.type === "MultiPolygon") polygons.push(...g.coordinates);
  }
  const lines = mesh(countries, countries.objects["countries"] as GeometryCollection, (a, b) => a !== b).coordinates;
  const rings = polygons.flat();
  const landPoints = rings.reduce((sum, ring) => sum + ring.length, 0);
  const borderPoints = lines.reduce((sum, line) => sum + line.length, 0);
  const int32s = 8 + polygons.length + 1 + rings.length + 1 + 2 * landPoints + lines.length + 1 + 2 * borderPoints;
  const buffer = new ArrayBuffer(int32s * 4 + 8 * 8);
  const head = new Int32Array(buffer, 0, 8);
  head.set([FORMAT_VERSION, polygons.length, rings.length, landPoints, lines.length, borderPoints]);
  new Float64Array(buffer, 32, 8).set([landQ.kx, landQ.ky, landQ.dx, landQ.dy, bordersQ.kx, bordersQ.ky, bordersQ.dx, bordersQ.dy]);
  const ints = new Int32Array(buffer, 96);
  let at = 0;
  let ringCount = 0;
  for (const polygon of polygons) {
    ints[at++] = ringCount;
    ringCount += polygon.length;
  }
  ints[at++] = ringCount;
  let pointCount = 0;
  for (const ring of rings) {
    ints[at++] = pointCount;
    pointCount += ring.length;
  }
  ints[at++] = pointCount;
  for (const ring of rings) for (const position of ring) at = putQuantised(ints, at, position, landQ);
  pointCount = 0;
  for (const line of lines) {
    ints[at++] = pointCount;
    pointCount += line.length;
  }
  ints[at++] = pointCount;
  for (const line of lines) for (const position of line) at = putQuantised(ints, at, position, bordersQ);
  return new Uint8Array(buffer);
}

/** A position as TopoJSON's integers; refused when they would not give the same position back. */
function putQuantised(ints: Int32Array, at: number, [x, y]: GeoJSON.Position, q: Quantisation): number {
  const qx = Math.round((x! - q.dx) / q.kx);
  const qy = Math.round((y! - q.dy) / q.ky);
  if (qx * q.kx + q.dx !== x || qy * q.ky + q.dy !== y) throw new RangeError(`Internal error: Natural Earth position ${x}, ${y} is not on its TopoJSON's quantisation grid`);
  ints[at] = qx;
  ints[at + 1] = qy;
  return at + 2;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const resolution of RESOLUTIONS) {
    writeFileSync(naturalEarthPath(resolution), naturalEarthBytes(resolution));
    process.stdout.write(`wrote ${naturalEarthPath(resolution)}\n`);
  }
}
