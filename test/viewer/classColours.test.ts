/**
 * One class table in every output: the colours read back out of the KML styles, the viewer's computed
 * styles and canvas pixels in Chromium, and the pixels of the PNG map's legend and panels, on the bundled
 * sample runs served by the real server, must all be the colours of src/contract/ashClasses.ts. Each
 * output is read as a client reads it (the KML text, the page, the PNG bytes), never through our code.
 */
import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ashClasses, ASH_FILL_OPACITY, rgbOf, type AshClass } from "../../src/contract/ashClasses.ts";
import type { AshModel } from "../../src/contract/ashModel.ts";
import { VOLCANO_COLOUR } from "../../src/render/draw.ts";
import { BASE_COLOURS } from "../../src/render/style.ts";
import { readPixels, type Pixels } from "../render/pixels.ts";
import { http } from "../server/serverFixtures.ts";
import { colourDistance, launchBrowser, openPage, screenshot, untilDrawn, type Browser } from "./browser.ts";
import { resourceText, runModel, SAMPLES, startSampleSite, type SampleSite } from "./sampleSite.ts";

let sample: SampleSite;
let browser: Browser;
let model: AshModel;
/** The SFC/FL200 ash-area KML of the latest run at its step with the most ash, and that step's time. */
let kmlText: string;
let kmlTime: string;
let classes: AshClass[];

const parser = new XMLParser({ ignoreAttributes: false, isArray: (name) => ["Style", "Data", "Placemark", "Folder"].includes(name) });
type Rgba = [number, number, number, number];
const overColour = (under: readonly number[], hex: string, alpha: number): Rgba => {
  const c = rgbOf(hex);
  return [0, 1, 2].map((k) => Math.round(under[k]! * (1 - alpha) + c[k]! * alpha)).concat(255) as Rgba;
};
/** `rgb(1, 2, 3)` / `rgba(1, 2, 3, 0.6)` as a browser writes computed colours. */
const cssColour = (text: string): Rgba => {
  const m = /^rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)$/.exec(text);
  if (!m) throw new Error(`not a computed colour: ${text}`);
  return [Number(m[1]), Number(m[2]), Number(m[3]), Math.round(Number(m[4] ?? 1) * 255)];
};
/** KML `aabbggrr` as [r, g, b, a]. */
const kmlRgba = (text: string): Rgba => {
  const [a, b, g, r] = [0, 2, 4, 6].map((i) => parseInt(text.slice(i, i + 2), 16));
  return [r!, g!, b!, a!];
};

/** Pixels of an image close to a colour, and their mean x. */
function find(pixels: Pixels, rect: { x: number; y: number; w: number; h: number }, colour: readonly number[], tolerance = 2): { count: number; meanX: number } {
  let count = 0;
  let sumX = 0;
  for (let y = rect.y; y < rect.y + rect.h; y++) {
    for (let x = rect.x; x < rect.x + rect.w; x++) {
      if (colourDistance(pixels.at(x, y), colour) <= tolerance) {
        count++;
        sumX += x;
      }
    }
  }
  return { count, meanX: count ? sumX / count : NaN };
}

beforeAll(async () => {
  [sample, browser] = await Promise.all([startSampleSite(), launchBrowser()]);
  model = await runModel(sample.server, SAMPLES.rehearsal);
  const layer = model.layergroups.flatMap((g) => g.layers).find((l) => l.type === "KML" && /^SFC\/FL200 ash areas/.test(l.name))!;
  // The step with the most ash: every class large enough to be seen at the viewer's first zoom.
  const steps = await Promise.all(layer.timesteps.map(async (t) => ({ time: t.time, text: await resourceText(sample.server, t.url!) })));
  const largest = steps.reduce((a, b) => (b.text.length > a.text.length ? b : a));
  kmlText = largest.text;
  kmlTime = largest.time;
  const documentData = parser.parse(kmlText).kml.Document.ExtendedData.Data as Array<{ "@_name": string; value: string }>;
  const thresholds = documentData.find((d) => d["@_name"] === "thresholds")!.value;
  classes = ashClasses(String(thresholds).split(",").map(Number));
});

afterAll(async () => {
  await browser?.close();
  await sample?.close();
});

describe("class colours agree in every output", () => {
  it("the sample runs use the usual three classes: low sky blue, medium amber, high red", () => {
    expect(classes.map((c) => [c.name, c.colour])).toEqual([
      ["low", "#56b4e9"],
      ["medium", "#e69f00"],
      ["high", "#d1232a"],
    ]);
  });

  it("KML: each class's Style has its outline as LineStyle and its fill at ASH_FILL_OPACITY as PolyStyle", () => {
    const styles = parser.parse(kmlText).kml.Document.Style as Array<{ "@_id": string; LineStyle?: { color: string }; PolyStyle?: { color: string } }>;
    const byId = new Map(styles.map((s) => [s["@_id"], s]));
    classes.forEach((c, i) => {
      const style = byId.get(`ash-${i}`)!;
      expect(kmlRgba(style.LineStyle!.color), `ash-${i} line`).toEqual([...rgbOf(c.outline), 255]);
      expect(kmlRgba(style.PolyStyle!.color), `ash-${i} fill`).toEqual([...rgbOf(c.colour), Math.round(ASH_FILL_OPACITY * 255)]);
    });
  });

  it("viewer (Chromium): legend swatches, drawn areas and the volcano marker", async () => {
    const watched = await openPage(browser);
    await watched.page.goto(`${sample.viewerUrl}?reftime=${SAMPLES.rehearsal}&band=${encodeURIComponent("SFC/FL200")}&time=${kmlTime}`);
    await untilDrawn(watched.page, SAMPLES.rehearsal, "SFC/FL200", kmlTime);
    const swatches = await watched.page.evaluate<Array<{ background: string; border: string }>>(
      `Array.from(document.querySelectorAll("#legend-list .swatch")).map((s) => ({ background: getComputedStyle(s).backgroundColor, border: getComputedStyle(s).borderTopColor }))`,
    );
    expect(swatches).toHaveLength(classes.length);
    classes.forEach((c, i) => {
      expect(cssColour(swatches[i]!.border), `${c.name} swatch border`).toEqual([...rgbOf(c.outline), 255]);
      expect(cssColour(swatches[i]!.background), `${c.name} swatch fill`).toEqual([...rgbOf(c.colour), Math.round(ASH_FILL_OPACITY * 255)]);
    });
    expect(cssColour(await watched.page.evaluate<string>(`getComputedStyle(document.querySelector(".volcano-marker")).color`))).toEqual([...rgbOf(VOLCANO_COLOUR), 255]);

    // The areas on the map's canvas: each class of this step, filled over the sea or the land.
    const sea = cssColour(await watched.page.evaluate<string>(`getComputedStyle(document.querySelector("#map")).backgroundColor`));
    const land = rgbOf("#f1efe4");
    const shot = await screenshot(watched.page, "class-colours");
    const map = await watched.page.evaluate<{ x: number; y: number; w: number; h: number }>(
      `(() => { const r = document.querySelector("#map").getBoundingClientRect(); return { x: Math.ceil(r.x), y: Math.ceil(r.y), w: Math.floor(r.width), h: Math.floor(r.height) }; })()`,
    );
    const present = new Set((parser.parse(kmlText).kml.Document.Folder[0].Placemark ?? []).map((p: { styleUrl: string }) => p.styleUrl));
    expect(present.size, "the sample's fullest step must show every class, to compare them all").toBe(classes.length);
    classes.forEach((c) => {
      const drawn = find(shot, map, overColour(sea, c.colour, ASH_FILL_OPACITY)).count + find(shot, map, overColour(land, c.colour, ASH_FILL_OPACITY)).count;
      expect(drawn, `${c.name} (${c.colour}) drawn on the viewer's map`).toBeGreaterThan(3);
    });
    await watched.page.close();
  });

  it("PNG: the legend swatches, in class order, and the areas of the panels", async () => {
    const res = await http(sample.server, `/.png?reftime=${SAMPLES.rehearsal}`);
    expect(res.status).toBe(200);
    const pixels = await readPixels(res.body);
    const footer = { x: 0, y: pixels.height - 60, w: pixels.width, h: 60 };
    const swatches = classes.map((c) => find(pixels, footer, overColour([255, 255, 255], c.colour, ASH_FILL_OPACITY)));
    swatches.forEach((s, i) => expect(s.count, `${classes[i]!.name} swatch in the PNG legend`).toBeGreaterThan(100));
    expect(swatches.map((s) => s.meanX)).toEqual([...swatches.map((s) => s.meanX)].sort((a, b) => a - b));
    for (const c of classes) expect(find(pixels, footer, rgbOf(c.outline), 1).count, `${c.name} swatch outline`).toBeGreaterThan(20);
    // The panels: the run's maximum shows every class over the sea or land of the base map.
    const panels = { x: 0, y: 0, w: pixels.width, h: pixels.height - 60 };
    for (const c of classes) {
      const drawn = find(pixels, panels, overColour(rgbOf(BASE_COLOURS.sea), c.colour, ASH_FILL_OPACITY)).count + find(pixels, panels, overColour(rgbOf(BASE_COLOURS.land), c.colour, ASH_FILL_OPACITY)).count;
      expect(drawn, `${c.name} area on the PNG map`).toBeGreaterThan(3);
    }
  });
});
