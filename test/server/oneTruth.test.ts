/**
 * One truth between the outputs a pilot may read: wherever a published GeoJSON ash area of a class lies
 * (band, step), GET /point at that place and time answers that class or a higher one, never less. Checked
 * just inside the areas' edges, where the contouring, its simplification and the cutting of long edges
 * could leave an area larger than the cells /point reads: the generated EEMEP run (regular grid), the SNAP
 * run (rotated pole, its areas drawn straight in longitude and latitude) and a grid across the antimeridian.
 * A short flight through such a place, at that band's middle flight level and time, meets that class or a
 * higher one (POST /route). And each published band image shows, inside the areas, its own band's and step's
 * class colours.
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ashClasses, ASH_FILL_OPACITY, rgbOf } from "../../src/contract/ashClasses.ts";
import type { LatLonBoxModel, RunType } from "../../src/contract/ashModel.ts";
import { mapBox } from "../../src/build/renderModelOutput.ts";
import { bandImageLayout, drawBandImage } from "../../src/render/bandImage.ts";
import { getBaseMap } from "../../src/render/basemap.ts";
import { basePixels, over, readPixels } from "../render/pixels.ts";
import type { PointAnswer, RouteAnswer } from "../../src/contract/queries.ts";
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
  properties: { kind: "ash"; band: string; class: string; time: string; quantity: string };
}
interface VolcanoFeature {
  geometry: { type: "Point"; coordinates: [number, number] };
  properties: { kind: "volcano"; name: string };
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

/** Whether (x, y) lies within `r` of a ring's edges (screen coordinates). */
function nearRing(ring: number[][], x: number, y: number, r: number): boolean {
  for (let i = 0; i + 1 < ring.length; i++) {
    const [x1, y1] = ring[i]! as [number, number];
    const [x2, y2] = ring[i + 1]! as [number, number];
    if (Math.min(x1, x2) > x + r || Math.max(x1, x2) < x - r || Math.min(y1, y2) > y + r || Math.max(y1, y2) < y - r) continue;
    const dx = x2 - x1;
    const dy = y2 - y1;
    const t = dx === 0 && dy === 0 ? 0 : Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)));
    if (Math.hypot(x - (x1 + t * dx), y - (y1 + t * dy)) < r) return true;
  }
  return false;
}

/** The published ash areas of every run, band and every `every`-th step (read from dist/). */
function* ashAreas(every: number): Generator<{ reftime: string; band: string; time: string; rank: number; className: string; polygons: Ring[][] }> {
  const runsDir = path.join(m.site.distDir, "runs");
  for (const dir of readdirSync(runsDir)) {
    const runDir = path.join(runsDir, dir);
    if (!readdirSync(runDir).includes("geojson")) continue;
    const { reftime } = (JSON.parse(readFileSync(path.join(runDir, "model.json"), "utf8")) as { meta: { reftime: string } }).meta;
    for (const bandDir of readdirSync(path.join(runDir, "geojson"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)) {
      const steps = readdirSync(path.join(runDir, "geojson", bandDir)).filter((name) => name.endsWith(".geojson")).sort();
      for (const file of steps.filter((_, i) => i % every === 1)) {
        const document = JSON.parse(readFileSync(path.join(runDir, "geojson", bandDir, file), "utf8")) as { features: Array<AshFeature | { properties: { kind: string } }> };
        for (const feature of document.features.filter((f): f is AshFeature => f.properties.kind === "ash")) {
          const { band, time } = feature.properties;
          yield { reftime, band, time, rank: CLASS_RANK.get(feature.properties.class)!, className: feature.properties.class, polygons: feature.geometry.coordinates };
        }
      }
    }
  }
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
  const checked = new Map<string, number>();
  const under: string[] = [];
  let asked = 0;
  for (const { reftime, band, time, rank, className, polygons } of ashAreas(3)) {
    for (const [lon, lat] of placesInside(polygons)) {
      // Every other place asks for the whole series (every step), the others for the one step.
      const oneStep = asked++ % 2 === 0;
      const res = await http(m.server, `/point?lat=${lat.toFixed(6)}&lon=${lon.toFixed(6)}${oneStep ? `&time=${time}` : ""}&reftime=${reftime}`, { headers: UA });
      expect(res.status, `${reftime} ${band} ${time} at ${lat},${lon}: ${res.text()}`).toBe(200);
      const { steps } = (res.json() as PointAnswer).series.find((series) => series.label === band)!;
      const step = oneStep ? steps[0]! : steps.find((candidate) => candidate.time === time)!;
      checked.set(reftime, (checked.get(reftime) ?? 0) + 1);
      if (CLASS_RANK.get(step.class)! < rank) under.push(`${reftime} ${band} ${time}: inside a ${className} area at ${lat}, ${lon}, /point says ${step.class} (${step.value})`);
    }
  }
  expect(under.slice(0, 10)).toEqual([]);
  // Every run was checked, at many places (none of them vacuously).
  expect([...checked.keys()].sort()).toHaveLength(3);
  for (const [reftime, count] of checked) expect(count, reftime).toBeGreaterThan(100);
}, 300_000);

it("a flight through a place inside a published ash area, at that band and time, meets at least its class", async () => {
  const checked = new Map<string, number>();
  const under: string[] = [];
  let turn = 0;
  for (const { reftime, band, time, rank, className, polygons } of ashAreas(3)) {
    const [lower, upper] = band.match(/\d+/g)!.length === 2 ? band.match(/\d+/g)!.map(Number) : [0, Number(band.match(/\d+/)![0])];
    const altitude = (((lower! + upper!) / 2) * 100 * 0.3048); // the band's middle flight level, in metres
    for (const [lon, lat] of placesInside(polygons).filter((_, i) => i % 3 === 0)) {
      // 0.5° each way (5 cells of these grids, so its ends read other cells), in a direction that turns from place
      // to place; 20 minutes into the step. Its great circle passes within 0.001° of the place.
      const angle = (turn++ * 2.399963) % Math.PI;
      const [dx, dy] = [0.5 * Math.cos(angle), 0.5 * Math.sin(angle)];
      const start = Date.parse(time);
      const feature = {
        type: "Feature",
        geometry: { type: "LineString", coordinates: [[lon - dx, lat - dy, altitude], [lon + dx, lat + dy, altitude]] },
        properties: { coordTimes: [new Date(start).toISOString(), new Date(start + 20 * 60_000).toISOString()] },
      };
      const res = await http(m.server, `/route?reftime=${reftime}`, { method: "POST", headers: { ...UA, "content-type": "application/geo+json" }, body: JSON.stringify(feature) });
      expect(res.status, res.text()).toBe(200);
      const met = (res.json() as RouteAnswer).models[0]!.bands.find((b) => b.label === band)!;
      checked.set(reftime, (checked.get(reftime) ?? 0) + 1);
      if (CLASS_RANK.get(met.class)! < rank) under.push(`${reftime} ${band} ${time}: through a ${className} area at ${lat}, ${lon} (heading ${angle.toFixed(2)} rad), the route met ${met.class} (${met.highest})`);
    }
  }
  expect(under.slice(0, 10)).toEqual([]);
  expect([...checked.keys()]).toHaveLength(3);
  for (const [reftime, count] of checked) expect(count, reftime).toBeGreaterThan(50);
}, 300_000);

it("each band image shows its own band's and step's areas, in their class colours, where the GeoJSON has them", async () => {
  const classes = ashClasses(DEFAULT_THRESHOLDS_MG_M3);
  const fills = classes.map((c) => rgbOf(c.colour));
  const checkedPerRun = new Map<string, number>();
  const wrong: string[] = [];
  let skipped = 0;
  for (const dir of readdirSync(path.join(m.site.distDir, "runs"))) {
    const runDir = path.join(m.site.distDir, "runs", dir);
    if (!readdirSync(runDir).includes("images")) continue;
    const { meta } = JSON.parse(readFileSync(path.join(runDir, "model.json"), "utf8")) as { meta: { reftime: string; type: RunType; latlonbox: LatLonBoxModel } };
    const list = JSON.parse(readFileSync(path.join(runDir, "artefacts.json"), "utf8")) as { artefacts: Record<string, { identity: { file: string } }>; resources: Record<string, string> };
    const fileOf = (name: string) => path.join(m.site.distDir, list.artefacts[list.resources[name]!]!.identity.file);
    const stepImages = Object.keys(list.resources).filter((name) => /\/[^/]+\/[^/]+\.png$/.test(name)).sort();
    for (const imageName of stepImages.filter((_, i) => i % 5 === 2)) {
      const geoJson = JSON.parse(await readFile(fileOf(imageName.replace(/\.png$/, ".geojson")), "utf8")) as { features: Array<AshFeature | VolcanoFeature> };
      const areas = geoJson.features.filter((f): f is AshFeature => f.properties.kind === "ash");
      if (areas.length === 0) continue;
      const volcano = geoJson.features.find((f): f is VolcanoFeature => f.properties.kind === "volcano");
      // The frame the build drew this image in: its box (the run's box and the volcano), layout and projection.
      const place = volcano && { name: volcano.properties.name, lon: volcano.geometry.coordinates[0], lat: volcano.geometry.coordinates[1] };
      const box = mapBox(meta.latlonbox, place);
      const { band, time, quantity } = areas[0]!.properties;
      const { panel } = bandImageLayout({ type: meta.type, box, thresholds: DEFAULT_THRESHOLDS_MG_M3, quantity });
      const base = getBaseMap(box, panel.w, panel.h);
      const under = await basePixels(base.canvas, panel);
      const image = await readPixels(await readFile(fileOf(imageName)));
      // Where the frame draws over the map (labels, the volcano, the watermark): the same image without ash, drawn
      // by the renderer, differs from the bare base map there. Only ash fills are judged.
      const frame = drawBandImage({ type: meta.type, reftime: meta.reftime, time, box, thresholds: DEFAULT_THRESHOLDS_MG_M3, quantity, band: { label: band, areas: [] }, ...(place ? { volcano: place } : {}) });
      const frameData = frame.ctx.getImageData(0, 0, frame.width, frame.height).data;
      const overlaid = (x: number, y: number): boolean =>
        [[0, 0], [-2, 0], [2, 0], [0, -2], [0, 2]].some(([dx, dy]) => {
          const b = under.at(x + dx!, y + dy!);
          const i = ((y + dy!) * frame.width + x + dx!) * 4;
          return [0, 1, 2].some((k) => Math.abs(frameData[i + k]! - b[k]!) > 2);
        });
      // The areas as the image draws them: each position projected, joined straight (src/render/draw.ts).
      const projected = areas.map((area) => ({
        rank: CLASS_RANK.get(area.properties.class)!,
        rings: area.geometry.coordinates.flatMap((polygon) => polygon.map((ring) => ring.map(([lon, lat]) => base.projection([lon!, lat!])!).map(([px, py]) => [px! + panel.x, py! + panel.y]))),
      }));
      for (let y = panel.y + 4; y < panel.y + panel.h - 4; y += 3) {
        for (let x = panel.x + 4; x < panel.x + panel.w - 4; x += 3) {
          const inArea = projected.find((area) => insideAreas([area.rings], x, y));
          // Inside an area, at least three pixels from every edge (outlines and anti-aliasing lie on the edges).
          if (inArea === undefined || projected.some((area) => area.rings.some((ring) => nearRing(ring, x, y, 3)))) continue;
          const want = inArea.rank;
          const seen = image.at(x, y);
          const b = under.at(x, y);
          const expected = [b, ...fills.map((fill) => over(b, fill, ASH_FILL_OPACITY))];
          const distance = expected.map((e) => Math.max(...[0, 1, 2].map((k) => Math.abs(seen[k]! - e[k]!))));
          const nearest = distance.indexOf(Math.min(...distance));
          if (overlaid(x, y)) {
            skipped++;
            continue;
          }
          checkedPerRun.set(meta.reftime, (checkedPerRun.get(meta.reftime) ?? 0) + 1);
          // The class's fill over the base map, as the palette keeps it (Skia's rounding against ours: ±2).
          if (nearest !== want || distance[nearest]! > 2) wrong.push(`${imageName} at ${x},${y}: inside a ${classes[want - 1]!.name} area, drawn ${seen.slice(0, 3)} (nearest: ${nearest === 0 ? "no ash" : classes[nearest - 1]!.name}, ${distance[nearest]} off)`);
        }
      }
    }
  }
  const checked = [...checkedPerRun.values()].reduce((a, b) => a + b, 0);
  expect(wrong.slice(0, 10)).toEqual([]);
  expect([...checkedPerRun.keys()]).toHaveLength(3);
  for (const [reftime, count] of checkedPerRun) expect(count, reftime).toBeGreaterThan(200);
  expect(skipped / (checked + skipped), "pixels under labels, markers and the watermark").toBeLessThan(0.5);
}, 300_000);
