/**
 * One truth between the outputs a pilot may read: wherever a published GeoJSON ash area of a class lies
 * (band, step), GET /point at that place and time answers that class or a higher one, never less. Checked
 * just inside the areas' edges, where the contouring, its simplification and the cutting of long edges
 * could leave an area larger than the cells /point reads: the generated EEMEP run (regular grid), the SNAP
 * run (rotated pole, its areas drawn straight in longitude and latitude) and a grid across the antimeridian.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ashClasses } from "../../src/contract/ashClasses.ts";
import type { PointAnswer } from "../../src/contract/queries.ts";
import { DEFAULT_THRESHOLDS_MG_M3 } from "../../src/model/types.ts";
import { modelSite, type ModelSite } from "./pointFixtures.ts";
import { http } from "./serverFixtures.ts";

const UA = { "user-agent": "ashcast-test/1 one-truth" };
const CLASS_RANK = new Map<string, number>([["none", 0], ...ashClasses(DEFAULT_THRESHOLDS_MG_M3).map((c, i): [string, number] => [c.name, i + 1])]);
/** How far inside an edge a place is taken, in degrees: well within a cell (0.1° and more here), beyond float rounding. */
const INSIDE = 0.002;

type Ring = number[][];
interface AshFeature {
  geometry: { type: "MultiPolygon"; coordinates: Ring[][] };
  properties: { kind: "ash"; band: string; class: string; time: string };
}

/** Even-odd over every ring of every polygon: inside an outer ring and outside its holes. */
function insideAreas(polygons: Ring[][], x: number, y: number): boolean {
  let inside = false;
  for (const polygon of polygons) {
    for (const ring of polygon) {
      for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
        const [xi, yi] = ring[i]! as [number, number];
        const [xj, yj] = ring[j]! as [number, number];
        if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
      }
    }
  }
  return inside;
}

/** Places just inside the areas: on either side of the middle of (up to 40 of) each ring's edges, kept where inside. */
function placesInside(polygons: Ring[][]): Array<[number, number]> {
  const places: Array<[number, number]> = [];
  for (const polygon of polygons) {
    for (const ring of polygon) {
      const every = Math.max(1, Math.floor(ring.length / 40));
      for (let i = 0; i + 1 < ring.length; i += every) {
        const [x1, y1] = ring[i]! as [number, number];
        const [x2, y2] = ring[i + 1]! as [number, number];
        const length = Math.hypot(x2 - x1, y2 - y1) || 1;
        for (const side of [1, -1]) {
          const x = (x1 + x2) / 2 - (side * (y2 - y1) * INSIDE) / length;
          const y = (y1 + y2) / 2 + (side * (x2 - x1) * INSIDE) / length;
          if (insideAreas(polygons, x, y)) places.push([x, y]);
        }
      }
    }
  }
  return places;
}

let m: ModelSite;
beforeAll(async () => {
  m = await modelSite();
}, 120_000);
afterAll(async () => {
  await m?.server.close();
  await m?.site.cleanup();
});

it("every place inside a published ash area gets at least its class from /point, at that band and time", async () => {
  const runsDir = path.join(m.site.distDir, "runs");
  const checked = new Map<string, number>();
  const under: string[] = [];
  let asked = 0;
  for (const dir of readdirSync(runsDir)) {
    const runDir = path.join(runsDir, dir);
    if (!readdirSync(runDir).includes("geojson")) continue;
    const { reftime } = (JSON.parse(readFileSync(path.join(runDir, "model.json"), "utf8")) as { meta: { reftime: string } }).meta;
    for (const bandDir of readdirSync(path.join(runDir, "geojson"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)) {
      const steps = readdirSync(path.join(runDir, "geojson", bandDir)).filter((name) => name.endsWith(".geojson")).sort();
      for (const file of steps.filter((_, i) => i % 3 === 1)) {
        const document = JSON.parse(readFileSync(path.join(runDir, "geojson", bandDir, file), "utf8")) as { features: Array<AshFeature | { properties: { kind: string } }> };
        for (const feature of document.features.filter((f): f is AshFeature => f.properties.kind === "ash")) {
          const { band, time } = feature.properties;
          const rank = CLASS_RANK.get(feature.properties.class)!;
          for (const [lon, lat] of placesInside(feature.geometry.coordinates)) {
            // Every other place asks for the whole series (every step), the others for the one step.
            const oneStep = asked++ % 2 === 0;
            const res = await http(m.server, `/point?lat=${lat.toFixed(6)}&lon=${lon.toFixed(6)}${oneStep ? `&time=${time}` : ""}&reftime=${reftime}`, { headers: UA });
            expect(res.status, `${reftime} ${band} ${time} at ${lat},${lon}: ${res.text()}`).toBe(200);
            const { steps } = (res.json() as PointAnswer).series.find((series) => series.label === band)!;
            const step = oneStep ? steps[0]! : steps.find((candidate) => candidate.time === time)!;
            checked.set(reftime, (checked.get(reftime) ?? 0) + 1);
            if (CLASS_RANK.get(step.class)! < rank) under.push(`${reftime} ${band} ${time}: inside a ${feature.properties.class} area at ${lat}, ${lon}, /point says ${step.class} (${step.value})`);
          }
        }
      }
    }
  }
  expect(under.slice(0, 10)).toEqual([]);
  // Every run was checked, at many places (none of them vacuously).
  expect([...checked.keys()].sort()).toHaveLength(3);
  for (const [reftime, count] of checked) expect(count, reftime).toBeGreaterThan(100);
}, 300_000);
