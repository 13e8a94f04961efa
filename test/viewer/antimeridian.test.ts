/**
 * The viewer on a run across the antimeridian (an Aleutian volcano at 178°E, its ash carried past 180°),
 * in Debian's chromium: the land east of 180° is drawn beside the ash, a drag keeps the run's ash in view
 * (no jump to another copy of the world), a click east of 180° asks /point at the longitude within ±180,
 * and a forecaster's ring written across 180° is read as the shorter way round.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { buildSite, makeSite, serve, type Site } from "../server/serverFixtures.ts";
import { launchBrowser, openPage, pagePoint, screenshot, untilDrawn, type Browser, type WatchedPage } from "./browser.ts";

const REFTIME = "2026-01-01T00:00:00Z";
const LAST = "2026-01-01T12:00:00Z";
const BAND = "SFC/FL200";
/** The viewer's land fill (viewer.js). */
const LAND: readonly number[] = [0xf1, 0xef, 0xe4];

let site: Site;
let server: RunningServer;
let browser: Browser;
let watched: WatchedPage;

beforeAll(async () => {
  site = await makeSite("ashcast-viewer-180-");
  const outDir = path.join(site.runsDir, "2026-01-01-aleutians");
  await writeEemepOutput({ outDir, nx: 60, ny: 30, steps: 12, res: 0.5, lat0: 45, lon0: 165, reftime: REFTIME, volcano: { name: "Test", lat: 55, lon: 178, altitude: 1000 }, volcanoXml: true });
  await writeFile(path.join(outDir, "run.json"), JSON.stringify({ type: "Exercise", reftime: REFTIME }));
  const result = await buildSite(site);
  if (result.report.counts.published !== 1) throw new Error(`the run did not publish: ${JSON.stringify(result.report.runs)}`);
  [server, browser] = await Promise.all([serve(site), launchBrowser()]);
  watched = await openPage(browser);
  await watched.page.goto(`${server.url}/viewer/?band=${encodeURIComponent(BAND)}&time=${LAST}`);
  await untilDrawn(watched.page, REFTIME, BAND, LAST);
  await watched.page.waitForFunction("document.querySelectorAll('.leaflet-land-pane canvas').length > 0", undefined, { timeout: 20_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await site?.cleanup();
});

const mapRect = () => watched.page.evaluate<{ left: number; top: number; right: number; bottom: number }>(`(() => { const r = document.getElementById("map").getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; })()`);

/** The run's ash polygons drawn within the view (the land's polygons are on their own pane). */
const ashPolygonsInView = () =>
  watched.page.evaluate<number>(`(() => {
    const map = ashcastViewer.map;
    const view = map.getBounds();
    let count = 0;
    map.eachLayer((layer) => { if (layer instanceof L.Polygon && layer.options.pane !== "land" && view.intersects(layer.getBounds())) count++; });
    return count;
  })()`);

describe("the viewer on a run across the antimeridian", () => {
  it("draws the land east of 180° beside the ash, not only the land west of it", async () => {
    // The paint of the land copy follows its moveend; wait for a frame after it.
    await watched.page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
    const pixels = await screenshot(watched.page, "antimeridian-last-step");
    const rect = await mapRect();
    const meridian = await pagePoint(watched.page, 180, 52);
    expect(meridian.x).toBeGreaterThan(rect.left + 50);
    expect(meridian.x).toBeLessThan(rect.right - 200);
    const isLand = (p: readonly number[]) => [0, 1, 2].every((i) => Math.abs(p[i]! - LAND[i]!) <= 2);
    const east = { x: meridian.x + 5, y: Math.ceil(rect.top), w: Math.floor(rect.right) - meridian.x - 5, h: Math.floor(rect.bottom - rect.top) };
    const west = { x: Math.ceil(rect.left), y: east.y, w: meridian.x - 5 - Math.ceil(rect.left), h: east.h };
    expect(pixels.countWhere(west, isLand), "land west of 180°").toBeGreaterThan(100);
    expect(pixels.countWhere(east, isLand), "land east of 180° (the Andreanof Islands)").toBeGreaterThan(100);
    expect(await ashPolygonsInView()).toBeGreaterThan(0);
    // The ash areas come cut at 180° (KML 2.2, as the GeoJSON): their parts meet there without an outline
    // along the cut. A vertical line shows as pixels unlike those 3 px either side, row after row.
    const apart = (a: readonly number[], b: readonly number[]) => [0, 1, 2].some((i) => Math.abs(a[i]! - b[i]!) > 40);
    let lineRows = 0;
    for (let y = Math.ceil(rect.top); y < Math.floor(rect.bottom); y++) {
      const here = pixels.at(meridian.x, y);
      if (apart(here, pixels.at(meridian.x - 3, y)) && apart(here, pixels.at(meridian.x + 3, y))) lineRows++;
    }
    expect(lineRows, "rows with a vertical line at 180°").toBeLessThan(12);
  });

  it("keeps the run's ash in view when the map is dragged east", async () => {
    const rect = await mapRect();
    const centre = () => watched.page.evaluate<number>("ashcastViewer.map.getCenter().lng");
    const before = await centre();
    expect(before, "the view is centred east of 180°, on the run's box").toBeGreaterThan(180);
    // Without inertia the map stops where the mouse is let go: the pixels the next test clicks stay put.
    await watched.page.evaluate("ashcastViewer.map.options.inertia = false");
    const from = { x: (rect.left + rect.right) / 2, y: (rect.top + rect.bottom) / 2 };
    await watched.page.mouse.move(from.x, from.y);
    await watched.page.mouse.down();
    await watched.page.mouse.move(from.x - 200, from.y, { steps: 10 });
    await watched.page.mouse.up();
    await watched.page.waitForFunction("!ashcastViewer.map._panAnim || !ashcastViewer.map._panAnim._inProgress", undefined, { timeout: 10_000 });
    // Moved east by the drag, not jumped a whole turn to the copy of the world west of 180°.
    expect(await centre()).toBeGreaterThan(before);
    expect(await centre()).toBeLessThan(before + 10);
    expect(await ashPolygonsInView(), "the ash polygons are still in view").toBeGreaterThan(0);
    await screenshot(watched.page, "antimeridian-dragged");
  });

  it("asks /point at the longitude within ±180 for a click east of 180°", async () => {
    const at = await pagePoint(watched.page, 183.5, 54);
    await watched.page.mouse.click(at.x, at.y);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").endsWith(${JSON.stringify(`|${BAND}`)})`, undefined, { timeout: 10_000 });
    const [, lat, lon] = (await watched.page.evaluate<string>("document.body.dataset.point")).split("|").map(Number);
    expect(lat).toBeCloseTo(54, 1);
    expect(lon).toBeCloseTo(-176.5, 1);
    expect(watched.failures).toEqual([]);
    expect(watched.errors).toEqual([]);
  });

  it("reads a forecaster's ring written across 180° the shorter way round", async () => {
    const kml = `<?xml version="1.0"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>FL200/350</name><Polygon><outerBoundaryIs><LinearRing><coordinates>179,50 -179,50 -178,52 179.5,52 179,50</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark></Document></kml>`;
    const rings = await watched.page.evaluate<number[][][]>(`ashKml.parse(${JSON.stringify(kml)}).areas[0].latlngs[0]`);
    expect(rings[0]).toEqual([[50, 179], [50, 181], [52, 182], [52, 179.5], [50, 179]]);
  });
});
