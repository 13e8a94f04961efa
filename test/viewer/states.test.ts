/**
 * The viewer when the network is slow or fails and when the run changes, in Debian's chromium on the bundled
 * sample runs: what the map shows always matches the time the page names (or the map says it is loading or
 * failed, and then draws no ash under that time); play waits for each step; a run that cannot be loaded never
 * takes the shown run's place; a place or a route asked about is asked again of a new run; a route is drawn
 * along the great circles the service follows; a place's values can be asked from the keyboard. Slow and
 * failing answers are made by the browser's own request interception; the service is real. No timing is
 * asserted: every wait is for a state of the page.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { interpolateArc } from "../../src/geo/greatCircle.ts";
import { segmentDistance2 } from "../../src/geo/rings.ts";
import type { PointAnswer } from "../../src/contract/queries.ts";
import { http } from "../server/serverFixtures.ts";
import { launchBrowser, openPage, screenshot, untilDrawn, type Browser } from "./browser.ts";
import { SAMPLES, startSampleSite, type SampleSite } from "./sampleSite.ts";

let sample: SampleSite;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  [sample, browser] = await Promise.all([startSampleSite(), launchBrowser()]);
  dir = await mkdtemp(path.join(tmpdir(), "ashcast-viewer-states-"));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sample?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const formatTime = (iso: string) => iso.replace("T", " ").replace(/:00Z$/, " UTC");
const isStep = (url: URL) => url.pathname.endsWith("/resources") && url.searchParams.get("name")?.endsWith(".kml") === true;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Choice {
  label: string;
  steps: Array<{ time: string; url: string }>;
}
const choicesOf = (page: Page) => page.evaluate<Choice[]>("ashcastViewer.state.choices");

/** Opens the viewer on a run and waits for its first drawing: the run's band choices. */
async function openRun(page: Page, reftime: string, query = ""): Promise<Choice[]> {
  await page.goto(`${sample.viewerUrl}?reftime=${reftime}${query}`);
  await page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${reftime}|`)})`, undefined, { timeout: 20_000 });
  return choicesOf(page);
}

/**
 * Records, in every frame the browser paints, the time label, the time of the step the map shows and the
 * map's note: read back by framesSeen().
 */
async function watchFrames(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.framesSeen = [];
    const frame = () => {
      const note = document.getElementById("map-note");
      window.framesSeen.push({
        label: document.getElementById("time-label").textContent,
        shown: ashcastViewer.state.time ?? null,
        stale: document.getElementById("map").dataset.stale ?? "",
        note: note.hidden ? "" : note.textContent,
        areas: ashcastViewer.areasDrawn(),
      });
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  })()`);
}
interface Frame {
  label: string;
  shown: string | null;
  stale: string;
  note: string;
  areas: number;
}
const framesSeen = (page: Page) => page.evaluate<Frame[]>("window.framesSeen");

/** In every frame: the map shows the step the label names, or the map is marked and its note names that time. */
function expectOneTruth(frames: readonly Frame[]): void {
  expect(frames.length).toBeGreaterThan(0);
  for (const frame of frames) {
    const labelled = frame.label.replace(/ \(T\+.*$/, "");
    if (frame.stale) expect(frame.note, JSON.stringify(frame)).toContain(labelled);
    else expect(frame.shown && formatTime(frame.shown), JSON.stringify(frame)).toBe(labelled);
    if (frame.stale === "failed") expect(frame.areas, "no ash is drawn under a step that failed").toBe(0);
  }
}

describe("a slow or failing network", () => {
  it("play waits for each step on a slow network: every step is drawn in turn, and no frame shows one step's ash under another's time", async () => {
    const watched = await openPage(browser);
    // Every step's KML 400 ms late.
    await watched.page.route(isStep, async (route: Route) => {
      await sleep(400);
      await route.continue();
    });
    const [first] = await openRun(watched.page, SAMPLES.real);
    await watchFrames(watched.page);
    await watched.page.locator("#play").click();
    // Before, each tick of play cancelled the step still loading: nothing after the first step was ever drawn.
    await untilDrawn(watched.page, SAMPLES.real, first!.label, first!.steps[3]!.time);
    await watched.page.locator("#play").click();
    const frames = await framesSeen(watched.page);
    expectOneTruth(frames);
    // Each of the steps played was on screen, and the map said "Loading" while one was on its way.
    for (const step of first!.steps.slice(1, 4)) expect(frames.some((f) => !f.stale && f.shown === step.time)).toBe(true);
    expect(frames.some((f) => f.stale === "loading" && f.note.startsWith("Loading "))).toBe(true);
    expect(watched.errors).toEqual([]);
    await watched.page.close();
  });

  it("a step that cannot be loaded: the map is emptied and greyed and says why, never the last step's ash under its time", async () => {
    const watched = await openPage(browser);
    const [first] = await openRun(watched.page, SAMPLES.real);
    const withAsh = first!.steps.findIndex((_, i) => i > 0);
    await untilDrawn(watched.page, SAMPLES.real, first!.label, first!.steps[0]!.time);
    expect(await watched.page.evaluate<number>("ashcastViewer.areasDrawn()")).toBeGreaterThan(0);
    await watchFrames(watched.page);
    const failing = first!.steps[withAsh]!.url;
    await watched.page.route(
      (url) => url.href === failing,
      (route: Route) => route.fulfill({ status: 503, contentType: "application/problem+json", body: JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, detail: "the origin is being restarted" }) }),
    );
    await watched.page.locator("#next").click();
    await watched.page.waitForFunction(`document.body.dataset.drawn === ${JSON.stringify(`${SAMPLES.real}|${first!.label}|${first!.steps[withAsh]!.time}|failed`)}`, undefined, { timeout: 20_000 });
    expect(await watched.page.locator("#map").getAttribute("data-stale")).toBe("failed");
    expect(await watched.page.locator("#map-note").textContent()).toBe(
      `${first!.label} at ${formatTime(first!.steps[withAsh]!.time)} could not be loaded: the origin is being restarted. Nothing is drawn; this is not clear air.`,
    );
    expect(await watched.page.evaluate<number>("ashcastViewer.areasDrawn()")).toBe(0);
    await screenshot(watched.page, "step-failed");
    expectOneTruth(await framesSeen(watched.page));
    // The next step loads again as usual.
    await watched.page.locator("#next").click();
    await untilDrawn(watched.page, SAMPLES.real, first!.label, first!.steps[withAsh + 1]!.time);
    expect(await watched.page.locator("#map").getAttribute("data-stale")).toBe("");
    expect(await watched.page.locator("#map-note").isHidden()).toBe(true);
    await watched.page.close();
  });

  it("a run that cannot be loaded never takes the shown run's place: its banner, name and ash stay, and the reason is said", async () => {
    const watched = await openPage(browser);
    await openRun(watched.page, SAMPLES.exercise);
    await watched.page.route(
      (url) => url.pathname.endsWith("/.json") && url.searchParams.get("reftime") === SAMPLES.real,
      (route: Route) => route.fulfill({ status: 500, contentType: "application/problem+json", body: JSON.stringify({ type: "about:blank", title: "Internal Server Error", status: 500, detail: "Internal error: disk read failed" }) }),
    );
    await watched.page.locator("#run").selectOption(SAMPLES.real);
    await watched.page.waitForFunction(`document.getElementById("status").textContent.includes("could not be loaded")`, undefined, { timeout: 20_000 });
    expect(await watched.page.locator("#status").textContent()).toBe(
      `The run ${formatTime(SAMPLES.real)} could not be loaded: Internal error: disk read failed. Still showing the run ${formatTime(SAMPLES.exercise)}.`,
    );
    expect(await watched.page.locator("#banner").getAttribute("data-type")).toBe("Exercise");
    expect(await watched.page.locator("#banner").textContent()).toContain("not a real eruption");
    expect(await watched.page.locator("#run").inputValue()).toBe(SAMPLES.exercise);
    expect(await watched.page.evaluate<string>("ashcastViewer.state.model.meta.reftime")).toBe(SAMPLES.exercise);
    expect(await watched.page.locator("#map").getAttribute("data-stale")).toBe("");
    await watched.page.close();
  });

  it("a run that cannot be loaded leaves the map's note as it was: a step that failed stays marked, a step still loading too", async () => {
    const failing = (run: string) => (url: URL) => url.pathname.endsWith("/.json") && url.searchParams.get("reftime") === run;
    const refused = (route: Route) => route.fulfill({ status: 500, contentType: "application/problem+json", body: JSON.stringify({ type: "about:blank", title: "Internal Server Error", status: 500, detail: "Internal error: disk read failed" }) });
    const noteOf = (page: Page) => page.evaluate<{ stale: string; note: string; areas: number }>(`({ stale: document.getElementById("map").dataset.stale, note: document.getElementById("map-note").hidden ? "" : document.getElementById("map-note").textContent, areas: ashcastViewer.areasDrawn() })`);
    const runFailed = (page: Page) => page.waitForFunction(`document.getElementById("status").textContent.includes("could not be loaded")`, undefined, { timeout: 20_000 });

    // A step that failed (the map emptied, "not clear air"), then a run that fails: still so.
    const watched = await openPage(browser);
    const [first] = await openRun(watched.page, SAMPLES.real);
    await watched.page.route((url) => url.href === first!.steps[1]!.url, (route: Route) => route.fulfill({ status: 503, contentType: "application/problem+json", body: JSON.stringify({ status: 503, detail: "down" }) }));
    await watched.page.route(failing(SAMPLES.exercise), refused);
    await watched.page.locator("#next").click();
    await watched.page.waitForFunction(`(document.body.dataset.drawn || "").endsWith("|failed")`, undefined, { timeout: 20_000 });
    const failedNote = await noteOf(watched.page);
    await watched.page.locator("#run").selectOption(SAMPLES.exercise);
    await runFailed(watched.page);
    expect(await noteOf(watched.page)).toEqual(failedNote);
    expect(failedNote).toMatchObject({ stale: "failed", areas: 0 });
    await watched.page.close();

    // A step still loading (the last step's ash greyed under the new time), then a run that fails: still greyed and said.
    const second = await openPage(browser);
    const [band] = await openRun(second.page, SAMPLES.real);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await second.page.route((url) => url.href === band!.steps[1]!.url, async (route: Route) => {
      await held;
      await route.continue();
    });
    await second.page.route(failing(SAMPLES.exercise), refused);
    await second.page.locator("#next").click();
    await second.page.waitForFunction(`document.getElementById("map").dataset.stale === "loading"`, undefined, { timeout: 20_000 });
    await second.page.locator("#run").selectOption(SAMPLES.exercise);
    await runFailed(second.page);
    expect(await noteOf(second.page)).toMatchObject({ stale: "loading", note: `Loading ${band!.label} at ${formatTime(band!.steps[1]!.time)}…` });
    release();
    await untilDrawn(second.page, SAMPLES.real, band!.label, band!.steps[1]!.time);
    expect((await noteOf(second.page)).stale).toBe("");
    await second.page.close();
  });

  it("nothing published any more after a run was shown: nothing of it stays, on the map or beside it", async () => {
    const watched = await openPage(browser);
    await openRun(watched.page, SAMPLES.real);
    await watched.page.evaluate("ashcastViewer.map.setView([63.5, -18], 6, { animate: false })");
    const at = await watched.page.evaluate<{ x: number; y: number }>("ashcastViewer.pagePoint(-18, 63.5)");
    await watched.page.mouse.click(at.x, at.y);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").startsWith(${JSON.stringify(`${SAMPLES.real}|`)})`, undefined, { timeout: 20_000 });
    // The latest run asked for, and the service answers that none is published (all withdrawn meanwhile).
    await watched.page.route((url) => url.pathname.endsWith("/.json") && !url.searchParams.has("reftime"), (route: Route) => route.fulfill({ status: 204, body: "" }));
    await watched.page.locator("#run").selectOption({ index: 0 });
    await watched.page.waitForFunction(`document.body.dataset.drawn === "nothing published"`, undefined, { timeout: 20_000 });
    expect(
      await watched.page.evaluate(`({
        areas: ashcastViewer.areasDrawn(),
        point: document.getElementById("point").hidden,
        pointList: document.getElementById("point-list").textContent,
        label: document.getElementById("time-label").textContent,
        description: document.getElementById("description").textContent,
        ashNote: document.getElementById("ash-note").textContent,
        query: location.search,
        markers: document.querySelectorAll(".leaflet-overlay-pane path").length,
      })`),
    ).toEqual({ areas: 0, point: true, pointList: "", label: "–", description: "", ashNote: "", query: "", markers: 0 });
    await watched.page.close();
  });

  it("a run in the address that is not published: the service's reason is said and the latest run shown, with no uncaught error", async () => {
    const watched = await openPage(browser);
    const missing = "2026-05-02T18:00:00Z";
    await watched.page.goto(`${sample.viewerUrl}?reftime=${missing}`);
    await watched.page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${SAMPLES.rehearsal}|`)})`, undefined, { timeout: 20_000 });
    await watched.page.waitForFunction(`document.getElementById("status").textContent !== ""`, undefined, { timeout: 20_000 });
    const detail = ((await http(sample.server, `/.json?reftime=${missing}`)).json() as { detail: string }).detail;
    expect(await watched.page.locator("#status").textContent()).toBe(`The run ${missing} is not published (${detail}): showing the latest run.`);
    expect(await watched.page.locator("#banner").getAttribute("data-type")).toBe("Rehearsal");
    expect(await watched.page.locator("#run").inputValue()).toBe(SAMPLES.rehearsal);
    // The 404 itself is the only failure: no uncaught promise rejection, no console error beyond the browser's own line for it.
    expect(watched.errors.filter((e) => !/Failed to load resource: .*404/.test(e))).toEqual([]);
    await watched.page.close();
  });
});

describe("changing the band and the run", () => {
  it("a band with other times (the forecaster's advisory) and back: the time chosen is kept", async () => {
    const watched = await openPage(browser);
    const choices = await openRun(watched.page, SAMPLES.exercise);
    const band = choices[0]!;
    const other = choices.find((c) => !/^(SFC|FL\d+)\//.test(c.label) && !c.steps.some((s) => s.time === band.steps.at(-1)!.time));
    expect(other, "the Exercise has a forecaster's layer at other times than the bands").toBeDefined();
    const last = band.steps.at(-1)!.time;
    await watched.page.goto(`${sample.viewerUrl}?reftime=${SAMPLES.exercise}&time=${last}`);
    await untilDrawn(watched.page, SAMPLES.exercise, band.label, last);
    await watched.page.locator("#band-list label", { hasText: other!.label }).click();
    await watched.page.waitForFunction(`(document.body.dataset.drawn || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|${other!.label}|`)})`, undefined, { timeout: 20_000 });
    await watched.page.locator("#band-list label", { hasText: band.label }).click();
    await untilDrawn(watched.page, SAMPLES.exercise, band.label, last);
    await watched.page.close();
  });

  it("a place and a route asked about are asked again of the run chosen next, and say which run they are of", async () => {
    const watched = await openPage(browser);
    await openRun(watched.page, SAMPLES.rehearsal);
    await watched.page.evaluate("ashcastViewer.map.setView([63.5, -18], 6, { animate: false })");
    const centre = await watched.page.evaluate<{ x: number; y: number }>("ashcastViewer.pagePoint(-18, 63.5)");
    await watched.page.mouse.click(centre.x, centre.y);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").startsWith(${JSON.stringify(`${SAMPLES.rehearsal}|`)})`, undefined, { timeout: 20_000 });
    const file = path.join(dir, "over-iceland.geojson");
    await writeFile(file, JSON.stringify({ type: "Feature", geometry: { type: "LineString", coordinates: [[-10, 59, 3000], [0, 59, 3000]] }, properties: {} }));
    await watched.page.locator("#route-file").setInputFiles(file);
    await watched.page.waitForFunction(`(document.body.dataset.route || "").startsWith(${JSON.stringify(`${SAMPLES.rehearsal}|`)})`, undefined, { timeout: 20_000 });

    await watched.page.locator("#run").selectOption(SAMPLES.exercise);
    await watched.page.waitForFunction(`(document.body.dataset.point || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|`)})`, undefined, { timeout: 20_000 });
    await watched.page.waitForFunction(`(document.body.dataset.route || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|`)})`, undefined, { timeout: 20_000 });
    expect(await watched.page.locator("#point-title").textContent()).toContain(`run ${formatTime(SAMPLES.exercise)}`);
    expect(await watched.page.locator("#route-list li").first().textContent()).toBe(`Run ${formatTime(SAMPLES.exercise)}:`);
    // The series listed is the new run's, as /point answers it for the place asked.
    const asked = watched.requests.map((url) => new URL(url)).filter((url) => url.pathname.endsWith("/point")).at(-1)!;
    expect(asked.searchParams.get("reftime")).toBe(SAMPLES.exercise);
    const answer = (await http(sample.server, `/point${asked.search}`, { headers: { "user-agent": "ashcast-test/1 viewer" } })).json() as PointAnswer;
    const band = (await choicesOf(watched.page))[await watched.page.evaluate<number>("ashcastViewer.state.choice")]!.label;
    const items = await watched.page.locator("#point-list li").allTextContents();
    expect(items.length).toBe(answer.series.filter((s) => s.label === band).flatMap((s) => s.steps).length);
    await watched.page.close();
  });
});

describe("a route on the map", () => {
  it("is drawn along the great circles the service follows, not straight lines of the map", async () => {
    const watched = await openPage(browser);
    await openRun(watched.page, SAMPLES.rehearsal);
    const from: [number, number] = [-22.6, 63.98];
    const to: [number, number] = [19, 60];
    const file = path.join(dir, "keflavik-stockholm.geojson");
    await writeFile(file, JSON.stringify({ type: "Feature", geometry: { type: "LineString", coordinates: [[...from, 10668], [...to, 10668]] }, properties: {} }));
    await watched.page.locator("#route-file").setInputFiles(file);
    await watched.page.waitForFunction(`(document.body.dataset.route || "").startsWith(${JSON.stringify(`${SAMPLES.rehearsal}|`)})`, undefined, { timeout: 20_000 });
    // The route's line (the service's blue), as Leaflet holds it.
    const drawn = await watched.page.evaluate<Array<[number, number]>>(`(() => {
      let line = [];
      ashcastViewer.map.eachLayer((layer) => { if (layer.options && layer.options.color === "#0a58ca" && layer.getLatLngs) line = layer.getLatLngs().map((p) => [p.lng, p.lat]); });
      return line;
    })()`);
    expect(drawn.length).toBeGreaterThan(2);
    // Degrees from a place to the drawn line (its segments, in a plane where a degree of longitude is cos(lat) long).
    const nearest = (p: readonly number[]) => {
      const k = Math.cos((p[1]! * Math.PI) / 180);
      const plane = ([lon, lat]: readonly number[]): [number, number] => [lon! * k, lat!];
      return Math.sqrt(Math.min(...drawn.slice(1).map((b, i) => segmentDistance2(plane(p), plane(drawn[i]!), plane(b)))));
    };
    // On the great circle at every tenth of the way (within a hundredth of a degree); its middle is ~1.3° north of the map's straight line.
    for (let f = 0.1; f < 1; f += 0.1) expect(nearest(interpolateArc(from, to, f))).toBeLessThan(0.01);
    expect(nearest([(from[0] + to[0]) / 2, (from[1] + to[1]) / 2])).toBeGreaterThan(0.5);
    await watched.page.close();
  });
});

describe("the keyboard", () => {
  it("Enter on the map asks for the values at its centre", async () => {
    const watched = await openPage(browser);
    await openRun(watched.page, SAMPLES.exercise);
    await watched.page.locator("#map").focus();
    await watched.page.keyboard.press("Enter");
    await watched.page.waitForFunction(`(document.body.dataset.point || "").startsWith(${JSON.stringify(`${SAMPLES.exercise}|`)})`, undefined, { timeout: 20_000 });
    const centre = await watched.page.evaluate<{ lat: number; lng: number }>("(() => { const c = ashcastViewer.map.getCenter(); return { lat: c.lat, lng: c.lng }; })()");
    const [, lat, lon] = (await watched.page.evaluate<string>("document.body.dataset.point")).split("|").map(Number);
    expect(lat).toBeCloseTo(centre.lat, 6);
    expect(lon).toBeCloseTo(centre.lng, 6);
    expect(await watched.page.locator("#point").isVisible()).toBe(true);
    await watched.page.close();
  });
});
