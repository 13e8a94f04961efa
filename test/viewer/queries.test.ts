/**
 * Point and route queries in the viewer, in Debian's chromium on the bundled sample runs: a click on the
 * map lists the values /point gives at that place for the band shown (the shown step marked), and a
 * GeoJSON route file chosen in the page is sent to /route and its encounters listed and drawn. Every wait
 * is for a state of the page; no timing is asserted.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ashClasses, DEFAULT_THRESHOLDS_MG_M3 } from "../../src/contract/ashClasses.ts";
import type { PointAnswer, RouteAnswer } from "../../src/contract/queries.ts";
import { http } from "../server/serverFixtures.ts";
import { launchBrowser, openPage, pagePoint, screenshot, untilDrawn, type Browser } from "./browser.ts";
import { SAMPLES, startSampleSite, type SampleSite } from "./sampleSite.ts";

let sample: SampleSite;
let browser: Browser;
let dir: string;
const UA = { "user-agent": "ashcast-test/1 viewer" };

beforeAll(async () => {
  [sample, browser] = await Promise.all([startSampleSite(), launchBrowser()]);
  dir = await mkdtemp(path.join(tmpdir(), "ashcast-route-file-"));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sample?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const formatTime = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;
/** A class's outline as the viewer reads it from ashcast's KML (aabbggrr, opaque) and gives it to Leaflet. */
const outlineOf = (id: string) => {
  const hex = ashClasses([...DEFAULT_THRESHOLDS_MG_M3]).find((c) => c.id === id)!.outline;
  return `rgba(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(",")},1.00)`;
};

/** The volcano of the Exercise run, and a band and step where /point has ash there. */
async function ashAtVolcano(): Promise<{ lon: number; lat: number; point: PointAnswer; band: number; step: number }> {
  const volcanoes = (await http(sample.server, "/resources?name=volcanoes.json", { headers: UA })).json() as Array<{ lat: number; lon: number; reftimes?: string[] }> | { volcanoes: Array<{ lat: number; lon: number }> };
  const list = Array.isArray(volcanoes) ? volcanoes : volcanoes.volcanoes;
  for (const { lon, lat } of list) {
    const res = await http(sample.server, `/point?lat=${lat}&lon=${lon}&reftime=${SAMPLES.exercise}`, { headers: UA });
    if (res.status !== 200) continue;
    const point = res.json() as PointAnswer;
    for (const [b, series] of point.series.entries()) {
      const step = series.steps.findIndex((s) => s.class !== "none" && s.class !== "missing");
      if (step >= 0) return { lon, lat, point, band: b, step };
    }
  }
  throw new Error("no volcano of the Exercise run has ash in any band at any step: the sample runs changed");
}

describe("point and route queries in the viewer", () => {
  it("a click lists the value series of the band shown, the shown step marked; another band lists its own", async () => {
    const { lon, lat, point, band, step } = await ashAtVolcano();
    const series = point.series[band]!;
    const time = series.steps[step]!.time;
    const watched = await openPage(browser);
    await watched.page.goto(`${sample.viewerUrl}?reftime=${SAMPLES.exercise}&band=${encodeURIComponent(series.label)}&time=${time}`);
    await untilDrawn(watched.page, SAMPLES.exercise, series.label, time);
    const at = await pagePoint(watched.page, lon, lat);
    await watched.page.mouse.click(at.x, at.y);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").endsWith(${JSON.stringify(`|${series.label}`)})`, undefined, { timeout: 20_000 });
    // The place clicked is a pixel, not the volcano's exact coordinates: ask /point for it as the page did.
    const requested = watched.requests.map((url) => new URL(url)).find((url) => url.pathname.endsWith("/point"))!;
    const answer = (await http(sample.server, `/point${requested.search}`, { headers: UA })).json() as PointAnswer;
    const shown = answer.series.filter((s) => s.label === series.label).flatMap((s) => s.steps);
    const items = await watched.page.locator("#point-list li").allTextContents();
    expect(items).toEqual(shown.map((s) => expect.stringMatching(new RegExp(`^${formatTime(s.time)}: .* \\(${s.class}\\)$`))));
    expect(items.some((text) => !text.includes("(none)"))).toBe(true);
    expect(await watched.page.locator('#point-list li[aria-current="true"]').getAttribute("data-time")).toBe(time);
    await screenshot(watched.page, "point-series");

    const other = point.series.find((s) => s.label !== series.label)!;
    await watched.page.locator("#band-list label", { hasText: other.label }).click();
    await watched.page.waitForFunction(`(document.body.dataset.point || "").endsWith(${JSON.stringify(`|${other.label}`)})`, undefined, { timeout: 20_000 });
    expect(await watched.page.locator("#point-list li").count()).toBe(answer.series.filter((s) => s.label === other.label).flatMap((s) => s.steps).length);
    expect(watched.failures).toEqual([]);
    expect(watched.errors).toEqual([]);
    await watched.page.close();
  });

  it("on a phone, a tap lists the values without moving the page, and neither do the steps after it", async () => {
    const { lon, lat, point, band, step } = await ashAtVolcano();
    const series = point.series[band]!;
    const watched = await openPage(browser, { width: 390, height: 844 });
    await watched.page.goto(`${sample.viewerUrl}?reftime=${SAMPLES.exercise}&band=${encodeURIComponent(series.label)}&time=${series.steps[step]!.time}`);
    await untilDrawn(watched.page, SAMPLES.exercise, series.label, series.steps[step]!.time);
    const at = await pagePoint(watched.page, lon, lat);
    await watched.page.mouse.click(at.x, at.y);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").endsWith(${JSON.stringify(`|${series.label}`)})`, undefined, { timeout: 20_000 });
    const scrolled = () => watched.page.evaluate("window.scrollY") as Promise<number>;
    expect(await scrolled()).toBe(0);
    for (let i = 0; i < 3; i++) {
      const marked = await watched.page.locator('#point-list li[aria-current="true"]').getAttribute("data-time");
      await watched.page.evaluate('document.getElementById("next").click()');
      await watched.page.waitForFunction(`document.querySelector('#point-list li[aria-current="true"]')?.dataset.time !== ${JSON.stringify(marked)}`, undefined, { timeout: 20_000 });
      expect(await scrolled()).toBe(0);
    }
    await watched.page.close();
  });

  it("a route file chosen in the page is sent to /route; its encounters are listed and drawn", async () => {
    const { lon, lat, point, band, step } = await ashAtVolcano();
    const series = point.series[band]!;
    const start = Date.parse(series.steps[step]!.time) + 5 * 60_000;
    const altitude = ((series.lower_fl + series.upper_fl) / 2) * 30.48;
    const route = {
      type: "Feature",
      geometry: { type: "LineString", coordinates: [[lon - 2, lat, altitude], [lon + 2, lat, altitude]] },
      properties: { coordTimes: [new Date(start).toISOString(), new Date(start + 30 * 60_000).toISOString()] },
    };
    const file = path.join(dir, "flight.geojson");
    await writeFile(file, JSON.stringify(route));
    const expected = (await http(sample.server, `/route?reftime=${SAMPLES.exercise}`, { method: "POST", headers: { ...UA, "content-type": "application/geo+json" }, body: JSON.stringify(route) })).json() as RouteAnswer;
    const encounters = expected.models.flatMap((m) => m.encounters ?? []);
    expect(encounters.length).toBeGreaterThanOrEqual(1);

    const watched = await openPage(browser);
    await watched.page.goto(`${sample.viewerUrl}?reftime=${SAMPLES.exercise}`);
    await watched.page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|`)})`, undefined, { timeout: 20_000 });
    await watched.page.locator("#route-file").setInputFiles(file);
    await watched.page.waitForFunction("document.body.dataset.route !== undefined", undefined, { timeout: 20_000 });
    expect(await watched.page.evaluate("document.body.dataset.route")).toBe(`${SAMPLES.exercise}|${encounters.length}`);
    const items = await watched.page.locator("#route-list li").allTextContents();
    // Bands named as the map's controls name them (SFC/FL200, FL200/350).
    const labels = new Map(expected.models.flatMap((m) => m.bands.map((b) => [b.band, b.label] as const)));
    for (const e of encounters) expect(items.some((text) => text.startsWith(`${labels.get(e.band)} ${e.class} up to`) && text.includes(formatTime(e.entry.time!)))).toBe(true);
    // The route and each encounter are drawn on the map (Leaflet's SVG paths in the overlay pane), each encounter
    // in its class's colour as the map draws that class.
    expect(await watched.page.locator(".leaflet-overlay-pane path").count()).toBeGreaterThanOrEqual(1 + encounters.length);
    const strokes = await watched.page.locator('.leaflet-overlay-pane path[stroke-width="6"]').evaluateAll((paths) => paths.map((p) => p.getAttribute("stroke")));
    expect(strokes.sort()).toEqual(encounters.map((e) => outlineOf(e.class)).sort());
    await screenshot(watched.page, "route-encounters");

    // A flight running on past the forecast's end: that stretch drawn grey and dashed (nothing known), not as clear.
    const lastStep = series.steps.at(-1)!.time;
    const late = { ...route, properties: { coordTimes: [new Date(Date.parse(lastStep) - 30 * 60_000).toISOString(), new Date(Date.parse(lastStep) + 6 * 3_600_000).toISOString()] } };
    const lateAnswer = (await http(sample.server, `/route?reftime=${SAMPLES.exercise}`, { method: "POST", headers: { ...UA, "content-type": "application/geo+json" }, body: JSON.stringify(late) })).json() as RouteAnswer;
    expect(lateAnswer.models[0]!.outside_forecast.length).toBe(1);
    const lateFile = path.join(dir, "late.geojson");
    await writeFile(lateFile, JSON.stringify(late));
    await watched.page.locator("#route-file").setInputFiles(lateFile);
    await watched.page.waitForFunction(`(document.body.dataset.route || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|`)}) && document.querySelector('.leaflet-overlay-pane path[stroke-dasharray]') !== null`, undefined, { timeout: 20_000 });
    expect(await watched.page.locator('.leaflet-overlay-pane path[stroke="#6c757d"][stroke-dasharray="6 6"]').count()).toBe(1);

    // A file that is not a route: the service's reason is shown.
    const bad = path.join(dir, "bad.geojson");
    await writeFile(bad, JSON.stringify({ type: "Feature", geometry: { type: "Point", coordinates: [0, 0] } }));
    await watched.page.locator("#route-file").setInputFiles(bad);
    await watched.page.waitForFunction('document.body.dataset.route === "refused"', undefined, { timeout: 20_000 });
    expect(await watched.page.locator("#route-list li").first().textContent()).toMatch(/geometry.type is "Point"/);
    await watched.page.close();
  });
});
