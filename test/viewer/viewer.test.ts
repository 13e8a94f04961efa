/**
 * The map viewer in a real browser (Debian's chromium through playwright-core) on the bundled sample
 * runs, served by the real server on 127.0.0.1: it loads with no failed request and none leaving the
 * service, draws the band and time asked for (pixels checked where the published KML says ash is, and
 * is not), shows each run type's banner, works by keyboard and on a phone-sized screen. Screenshots are
 * saved in test-artifacts/viewer/. No timing is asserted: every wait is for a state of the page.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noValueNote } from "../../src/contract/missingValues.ts";
import { eemepCdl, ncgen } from "../model/helpers.ts";
import type { AshModel } from "../../src/contract/ashModel.ts";
import { colourDistance, launchBrowser, openPage, pagePoint, screenshot, screenshotWithProbe, untilDrawn, type Browser, type WatchedPage } from "./browser.ts";
import { kmlPolygons, probeBetween, type AshPolygon, type Probe } from "./plume.ts";
import { writeMapServerRun } from "../build/runFixtures.ts";
import { buildSite, makeSite, serve, type Site } from "../server/serverFixtures.ts";
import { SAMPLES, resourceText, runModel, startSampleSite, type SampleSite } from "./sampleSite.ts";

/** The band labels the viewer shows: the flight-level band its layer name starts with. */
const BAND = /^((?:SFC|FL\d+)\/(?:FL)?\d+) ash areas, maximum of 6-hour mean ash concentration$/;

interface BandSteps {
  band: string;
  steps: Array<{ time: string; polygons: AshPolygon[] }>;
}

let sample: SampleSite;
let browser: Browser;
let exercise: AshModel;
let exerciseBands: BandSteps[];
let volcano: { lon: number; lat: number };

/** Every band of a run with the ash polygons of every step, read from the KML the API serves. */
async function bandsOf(model: AshModel): Promise<BandSteps[]> {
  const bands: BandSteps[] = [];
  for (const layer of model.layergroups.flatMap((g) => g.layers)) {
    const band = BAND.exec(layer.name)?.[1];
    if (layer.type !== "KML" || !band) continue;
    const steps = await Promise.all(layer.timesteps.map(async (t) => ({ time: t.time, polygons: kmlPolygons(await resourceText(sample.server, t.url!)) })));
    bands.push({ band, steps });
  }
  return bands;
}

beforeAll(async () => {
  [sample, browser] = await Promise.all([startSampleSite(), launchBrowser()]);
  exercise = await runModel(sample.server, SAMPLES.exercise);
  exerciseBands = await bandsOf(exercise);
  const kml = await resourceText(sample.server, exercise.layergroups.flatMap((g) => g.layers).find((l) => BAND.test(l.name))!.timesteps[0]!.url!);
  const [lon, lat] = /<Point><coordinates>([^<]+)<\/coordinates>/.exec(kml)![1]!.split(",").map(Number);
  volcano = { lon: lon!, lat: lat! };
});

afterAll(async () => {
  await browser?.close();
  await sample?.close();
});

/** Opens the viewer with this query and waits for what it must draw. */
/** The volcano marker's size, and where in it the volcano is (Leaflet places the marker's box at the volcano, shifted by its margins). */
async function volcanoMarker(page: WatchedPage["page"]): Promise<{ width: number; height: number; anchorX: number; anchorY: number }> {
  return page.evaluate(`(() => {
    const marker = document.querySelector(".volcano-marker");
    const box = marker.getBoundingClientRect();
    const style = getComputedStyle(marker);
    return { width: box.width, height: box.height, anchorX: -parseFloat(style.marginLeft), anchorY: -parseFloat(style.marginTop) };
  })()`);
}

async function open(query: string, expect: { reftime: string; band: string; time: string }, viewport?: { width: number; height: number }): Promise<WatchedPage> {
  const watched = await openPage(browser, viewport);
  await watched.page.goto(`${sample.viewerUrl}${query}`);
  await untilDrawn(watched.page, expect.reftime, expect.band, expect.time);
  return watched;
}

/** Pixels at least this far from a plume edge: anti-aliasing and line widths cannot reach the probe. */
async function expectClearOfEdges(watched: WatchedPage, probe: Probe): Promise<{ x: number; y: number }> {
  const at = await pagePoint(watched.page, probe.lon, probe.lat);
  const edge = await pagePoint(watched.page, probe.lon, probe.lat + probe.margin);
  expect(Math.abs(edge.y - at.y), "the probe is too close to a plume edge at this zoom to prove anything").toBeGreaterThanOrEqual(4);
  return at;
}

function expectOnlyTheService(watched: WatchedPage): void {
  expect(watched.failures).toEqual([]);
  expect(watched.errors).toEqual([]);
  expect(watched.requests.length).toBeGreaterThan(0);
  for (const url of watched.requests) expect(new URL(url).hostname, url).toBe("127.0.0.1");
  expect(new Set(watched.requests.map((url) => new URL(url).origin)).size).toBe(1);
}

describe("the viewer on the published sample runs", () => {
  it("loads the latest run with no failed request and no request leaving 127.0.0.1", async () => {
    const latest = (await runModel(sample.server, SAMPLES.rehearsal)).meta.reftime;
    const watched = await openPage(browser);
    await watched.page.goto(sample.viewerUrl);
    await watched.page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${latest}|`)})`, undefined, { timeout: 20_000 });
    // The coastlines arrive in parallel with the run; both must be there before the picture is taken.
    await watched.page.waitForFunction("document.querySelectorAll('.leaflet-land-pane canvas').length > 0", undefined, { timeout: 20_000 });
    await screenshot(watched.page, "latest-desktop");
    expectOnlyTheService(watched);
    const paths = watched.requests.map((url) => new URL(url).pathname + new URL(url).search);
    // A true client of the API: the run, the list of runs, and its KML through /resources.
    expect(paths).toContain("/volcanicashforecast/0.1/.json");
    expect(paths).toContain("/volcanicashforecast/0.1/reftimes");
    expect(paths.some((p) => p.startsWith("/volcanicashforecast/0.1/resources?name="))).toBe(true);
    expect(await watched.page.locator("#run option").allTextContents()).toEqual([
      "2026-05-02 12:00 UTC (latest)",
      "2026-03-14 06:00 UTC",
      "2010-04-15 06:00 UTC",
    ]);
    expect(await watched.page.locator("#banner").getAttribute("data-type")).toBe("Rehearsal");
    // The latest run is not pinned in the address: a reload shows whatever run is latest then.
    expect(new URL(watched.page.url()).search).toBe("");
    expect(await watched.page.locator('a[href="../changelog"]').count()).toBe(1);
    expect((await watched.page.locator("#legend-list li").allTextContents()).map((t) => t.trim())).toEqual(["0.2 – 2 mg/m³ low", "2 – 4 mg/m³ medium", "≥ 4 mg/m³ high"]);
    // What the field is, read from the model output's MAX6h_ naming through the KML (src/model/fieldMeaning.ts).
    expect(await watched.page.locator("#legend-title").textContent()).toBe("Maximum of 6-hour mean ash concentration");
    expect(await watched.page.locator(".volcano-marker").count()).toBe(1);
    expect(await volcanoMarker(watched.page)).toEqual({ width: 20, height: 20, anchorX: 10, anchorY: 12 });
    await watched.page.close();
  });

  it("shows an Exercise's banner, and a Real Eruption's in another style, with its report link", async () => {
    const first = exerciseBands[0]!;
    const ex = await open(`?reftime=${SAMPLES.exercise}`, { reftime: SAMPLES.exercise, band: first.band, time: first.steps[0]!.time });
    const exBanner = ex.page.locator("#banner");
    expect(await exBanner.isVisible()).toBe(true);
    expect(await exBanner.getAttribute("data-type")).toBe("Exercise");
    expect(await exBanner.textContent()).toMatch(/^Exercise\s*not a real eruption/);
    expect(await ex.page.locator("#watermark").textContent()).toBe("Exercise");
    expect(await ex.page.locator("#report").isVisible()).toBe(false);
    const exPixels = await screenshot(ex.page, "exercise-desktop");
    expectOnlyTheService(ex);

    const real = await runModel(sample.server, SAMPLES.real);
    const realBand = (await bandsOf(real))[0]!;
    const re = await open(`?reftime=${SAMPLES.real}`, { reftime: SAMPLES.real, band: realBand.band, time: realBand.steps[0]!.time });
    const reBanner = re.page.locator("#banner");
    expect(await reBanner.getAttribute("data-type")).toBe("Real Eruption");
    expect(await reBanner.textContent()).toMatch(/^Real Eruption\s*not an exercise/);
    expect(await re.page.locator("#watermark").textContent()).toBe("");
    expect(await re.page.locator("#report").getAttribute("href")).toBe(real.meta.report_url);
    const rePixels = await screenshot(re.page, "real-eruption-desktop");
    expectOnlyTheService(re);

    // Both banners span the top of the page, in colours far apart (sampled left of the centred text).
    for (const box of [await exBanner.boundingBox(), await reBanner.boundingBox()]) {
      expect(box!.y).toBe(0);
      expect(box!.width).toBe(1280);
      expect(box!.height).toBeGreaterThanOrEqual(30);
    }
    expect(colourDistance(exPixels.at(8, 8), rePixels.at(8, 8))).toBeGreaterThan(100);
    await ex.page.close();
    await re.page.close();
  });

  it("draws another picture when the band is switched: pixels where one band has ash and the other has none", async () => {
    // The step and band pair where the published KML gives the widest patch of ash in A and none in B.
    let best: { a: BandSteps; b: BandSteps; time: string; probe: Probe } | undefined;
    for (const a of exerciseBands) {
      for (const b of exerciseBands) {
        if (a === b) continue;
        for (const step of a.steps) {
          const other = b.steps.find((s) => s.time === step.time);
          const probe = other && probeBetween(step.polygons, other.polygons, { ...volcano, degrees: 0.6 });
          if (probe && (!best || probe.margin > best.probe.margin)) best = { a, b, time: step.time, probe };
        }
      }
    }
    expect(best, "the sample Exercise must have a step where one band has ash and another none").toBeDefined();
    const { a, b, time, probe } = best!;
    const watched = await open(`?reftime=${SAMPLES.exercise}&band=${encodeURIComponent(a.band)}&time=${time}`, { reftime: SAMPLES.exercise, band: a.band, time });
    const at = await expectClearOfEdges(watched, probe);
    const withAsh = (await screenshot(watched.page, "band-with-ash")).at(at.x, at.y);
    await screenshotWithProbe(watched.page, "band-with-ash-probe", at);

    await watched.page.getByLabel(b.band, { exact: true }).check();
    await untilDrawn(watched.page, SAMPLES.exercise, b.band, time);
    const without = (await screenshot(watched.page, "band-without-ash")).at(at.x, at.y);
    expect(colourDistance(withAsh, without), `pixel ${at.x},${at.y} (${probe.lon.toFixed(2)}, ${probe.lat.toFixed(2)}): ${a.band} ${withAsh} vs ${b.band} ${without}`).toBeGreaterThan(40);

    // The view is in the address: a reload shows the same run, band and time.
    const address = new URL(watched.page.url()).searchParams;
    expect([address.get("reftime"), address.get("band"), address.get("time")]).toEqual([SAMPLES.exercise, b.band, time]);
    await watched.page.reload();
    await untilDrawn(watched.page, SAMPLES.exercise, b.band, time);

    await watched.page.getByLabel(a.band, { exact: true }).check();
    await untilDrawn(watched.page, SAMPLES.exercise, a.band, time);
    expect((await screenshot(watched.page, "band-with-ash-again")).at(at.x, at.y)).toEqual(withAsh);
    expectOnlyTheService(watched);
    await watched.page.close();
  });

  it("draws another picture when the time moves, by keyboard: pixels where ash is at one step and gone at the next", async () => {
    let best: { band: BandSteps; index: number; probe: Probe; ashFirst: boolean } | undefined;
    for (const band of exerciseBands) {
      for (let i = 0; i + 1 < band.steps.length; i++) {
        const [now, next] = [band.steps[i]!.polygons, band.steps[i + 1]!.polygons];
        for (const [probe, ashFirst] of [[probeBetween(now, next, { ...volcano, degrees: 0.6 }), true], [probeBetween(next, now, { ...volcano, degrees: 0.6 }), false]] as const) {
          if (probe && (!best || probe.margin > best.probe.margin)) best = { band, index: i, probe, ashFirst };
        }
      }
    }
    expect(best, "the sample Exercise must have consecutive steps with ash moving").toBeDefined();
    const { band, index, probe, ashFirst } = best!;
    const [t0, t1] = [band.steps[index]!.time, band.steps[index + 1]!.time];
    const watched = await open(`?reftime=${SAMPLES.exercise}&band=${encodeURIComponent(band.band)}&time=${t0}`, { reftime: SAMPLES.exercise, band: band.band, time: t0 });
    const at = await expectClearOfEdges(watched, probe);
    const before = (await screenshot(watched.page, "time-before")).at(at.x, at.y);

    await watched.page.locator("#time").focus();
    await watched.page.keyboard.press("ArrowRight");
    await untilDrawn(watched.page, SAMPLES.exercise, band.band, t1);
    const after = (await screenshot(watched.page, "time-after")).at(at.x, at.y);
    await screenshotWithProbe(watched.page, "time-after-probe", at);
    expect(colourDistance(before, after), `pixel ${at.x},${at.y}: ${t0} ${before} vs ${t1} ${after} (ash ${ashFirst ? "first" : "second"})`).toBeGreaterThan(40);
    expect(await watched.page.locator("#time-label").textContent()).toContain(t1.slice(0, 16).replace("T", " "));
    expectOnlyTheService(watched);
    await watched.page.close();
  });

  it("is operated by keyboard alone: Tab reaches every control, with a visible focus, and keys change band, time and play", async () => {
    const first = exerciseBands[0]!;
    const watched = await open(`?reftime=${SAMPLES.exercise}`, { reftime: SAMPLES.exercise, band: first.band, time: first.steps[0]!.time });
    const { page } = watched;
    const reached: string[] = [];
    const controls = ["map", "run", "band", "time", "prev", "play", "next"];
    for (let i = 0; i < 25 && !controls.every((id) => reached.includes(id)); i++) {
      await page.keyboard.press("Tab");
      reached.push(await page.evaluate<string>("document.activeElement.id || document.activeElement.name || document.activeElement.tagName"));
    }
    expect(reached).toEqual(expect.arrayContaining(controls));
    // The focused control shows it (the browser's default ring or ours, never none).
    expect(await page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle")).not.toBe("none");

    // Arrow keys in the band group move to the next band.
    await page.getByLabel(first.band, { exact: true }).focus();
    await page.keyboard.press("ArrowDown");
    const second = exerciseBands[1]!;
    await untilDrawn(page, SAMPLES.exercise, second.band, second.steps[0]!.time);

    // Space on Play plays (the step advances by itself), and again pauses.
    await page.locator("#play").focus();
    await page.keyboard.press("Space");
    expect(await page.locator("#play").getAttribute("aria-pressed")).toBe("true");
    await untilDrawn(page, SAMPLES.exercise, second.band, second.steps[2]!.time);
    await page.keyboard.press("Space");
    expect(await page.locator("#play").getAttribute("aria-pressed")).toBe("false");

    // The run is chosen with the keyboard too.
    await page.locator("#run").focus();
    await page.keyboard.press("End");
    await page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${SAMPLES.real}|`)})`, undefined, { timeout: 20_000 });
    expect(await page.locator("#banner").getAttribute("data-type")).toBe("Real Eruption");
    expectOnlyTheService(watched);
    await page.close();
  });

  it("fits a phone-sized screen: banner on top, map, and the controls below without sideways scrolling", async () => {
    const first = exerciseBands[0]!;
    const phone = { width: 390, height: 844 };
    const watched = await open(`?reftime=${SAMPLES.exercise}`, { reftime: SAMPLES.exercise, band: first.band, time: first.steps[0]!.time }, phone);
    const { page } = watched;
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(phone.width);
    const banner = await page.locator("#banner").boundingBox();
    const map = await page.locator("#map").boundingBox();
    expect(banner!.y).toBe(0);
    expect(banner!.height).toBeLessThan(80);
    expect(map!.width).toBe(phone.width);
    expect(map!.height).toBeGreaterThan(300);
    // The volcano is larger on a phone, its triangle's middle still on the volcano.
    expect(await volcanoMarker(page)).toEqual({ width: 24, height: 24, anchorX: 12, anchorY: 14 });
    for (const control of ["#run", "#time", "#play"]) {
      const box = await page.locator(control).boundingBox();
      expect(box!.x, control).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, control).toBeLessThanOrEqual(phone.width);
    }
    await screenshot(page, "exercise-phone-top");
    // Viewport screenshots, as a phone shows it (a full-page one resizes the viewport, and with it the map).
    await page.locator("#next").click();
    await untilDrawn(page, SAMPLES.exercise, first.band, first.steps[1]!.time);
    const stuck = await page.locator("#banner").boundingBox();
    expect(stuck!.y, "the banner stays on top while the controls are scrolled into view").toBe(0);
    await screenshot(page, "exercise-phone-controls");
    expectOnlyTheService(watched);
    await page.close();
  });
});

describe("the viewer with nothing it can draw", () => {
  async function onSite(fill: (site: Site) => Promise<void>, check: (watched: WatchedPage) => Promise<void>): Promise<void> {
    const site = await makeSite("ashcast-viewer-nothing-");
    try {
      await fill(site);
      await buildSite(site);
      const server = await serve(site);
      try {
        const watched = await openPage(browser);
        await watched.page.goto(`${server.url}/viewer/`);
        await check(watched);
        expectOnlyTheService(watched);
        await watched.page.close();
      } finally {
        await server.close();
      }
    } finally {
      await site.cleanup();
    }
  }

  it("says that no run is published yet, with no failed request", async () => {
    await onSite(async () => {}, async ({ page }) => {
      await page.waitForFunction(`document.body.dataset.drawn === "nothing published"`, undefined, { timeout: 20_000 });
      expect(await page.locator("#banner").textContent()).toMatch(/^No forecast run is published yet/);
      expect(await page.locator("#run option").count()).toBe(0);
    });
  });

  it("says how much of the grid has no model value at a step, in the words of the maps and the KML, and never 'no ash' alone there, nor for a route through it", async () => {
    const reftime = "2019-03-22T00:00:00Z";
    const times = ["2019-03-22T01:00:00Z", "2019-03-22T02:00:00Z", "2019-03-22T03:00:00Z"];
    let flightFile = "";
    await onSite(
      async (site) => {
        // SFC/FL200 on 3 × 4 cells: step 0 no ash (0.1 mg/m³) with 3 cells missing, step 1 ash with 3 missing, step 2 complete.
        const value = (step: number, cell: number) => (step < 2 && cell < 3 ? "_" : step === 0 ? "100" : "900");
        const data = Array.from({ length: 3 * 12 }, (_, k) => value(Math.floor(k / 12), k % 12)).join(", ");
        const folder = path.join(site.runsDir, "2019-03-22-hekla");
        await mkdir(folder, { recursive: true });
        await ncgen(eemepCdl({ times: [1 / 24, 2 / 24, 3 / 24], fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data }] }), path.join(folder, "eemep_hour_20190322T000000.nc"), "nc4");
        await rm(path.join(folder, "eemep_hour_20190322T000000.nc.cdl"), { force: true });
        await writeFile(path.join(folder, "run.json"), JSON.stringify({ type: "Exercise", reftime, description: "Hekla: missing cells" }));
        const flight = { type: "Feature", geometry: { type: "LineString", coordinates: [[-20, 60, 3048], [-18, 60, 3048]] }, properties: { coordTimes: ["2019-03-22T01:00:00Z", "2019-03-22T01:50:00Z"] } };
        flightFile = path.join(site.root, "through-the-gap.geojson");
        await writeFile(flightFile, JSON.stringify(flight));
      },
      async ({ page }) => {
        const note = async (time: string) => {
          await page.waitForLoadState("networkidle"); // a new address would abort a step still loading
          await page.goto(`${page.url().split("?")[0]}?reftime=${reftime}&band=${encodeURIComponent("SFC/FL200")}&time=${time}`);
          await untilDrawn(page, reftime, "SFC/FL200", time);
          return page.locator("#ash-note").textContent();
        };
        const missing = noValueNote(0.25); // the words of the KML and, without "no ash area is drawn there", of the maps
        expect(await note(times[0]!)).toBe(`No ash above the lowest threshold where the model has values. ${missing}`);
        expect(await note(times[1]!)).toBe(missing);
        expect(await note(times[2]!)).toBe("");
        // A flight along the row without values (60°N, 20–18°W) at 01:00–01:50: the route list says so, not "no ash".
        await page.locator("#route-file").setInputFiles(flightFile);
        await page.waitForFunction("document.body.dataset.route !== undefined", undefined, { timeout: 20_000 });
        const items = await page.locator("#route-list li").allTextContents();
        expect(items).toContain("EEMEP: the model has no value along part of the route (nothing known there).");
        expect(items.some((text) => /^No ash/.test(text))).toBe(false);
      },
    );
  }, 60_000);

  it("shows a run whose layers are all on other servers (WMS) with its banner, and never asks those servers", async () => {
    await onSite(
      async (site) => void (await writeMapServerRun(site.runsDir, "2006-06-23-radar", { type: "Rehearsal" })),
      async ({ page }) => {
        await page.waitForFunction(`document.body.dataset.drawn === "2006-06-23T00:00:00Z|none"`, undefined, { timeout: 20_000 });
        expect(await page.locator("#banner").getAttribute("data-type")).toBe("Rehearsal");
        expect(await page.locator("#status").textContent()).toMatch(/no ash areas to draw here/);
        expect(await page.locator("#band-list input").count()).toBe(0);
      },
    );
  });
});
