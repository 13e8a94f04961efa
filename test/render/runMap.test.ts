import { describe, expect, it } from "vitest";
import type { LatLonBoxModel } from "../../src/contract/ashModel.ts";
import type { ThresholdBand } from "../../src/geo/types.ts";
import { clearBaseMapCache, getBaseMap } from "../../src/render/basemap.ts";
import { drawRunMap, runMapLayout, renderRunMap, type RunMapInput } from "../../src/render/runMap.ts";
import { packedPixels } from "../../src/render/palette.ts";
import type { Rgb } from "../../src/render/style.ts";
import { ashClasses, ASH_FILL_OPACITY, rgbOf } from "../../src/contract/ashClasses.ts";
import { EXERCISE_COLOUR, REAL_ERUPTION_COLOUR, REHEARSAL_COLOUR } from "../../src/render/style.ts";
import { DAY_OF_OUTPUTS, EYJAFJALLAJOKULL, ICELAND_BOX, QUANTITY, THRESHOLDS, lonLatRect, samplePlumeBands } from "./plume.ts";
import { basePixels, closeTo, imagePoint, over, pngSize, readPixels } from "./pixels.ts";

const base: Omit<RunMapInput, "type" | "bands"> = {
  volcano: EYJAFJALLAJOKULL,
  reftime: "2010-04-14T06:00:00Z",
  times: DAY_OF_OUTPUTS,
  box: ICELAND_BOX,
  thresholds: THRESHOLDS,
  quantity: QUANTITY,
};
const [ASH_LOW, ASH_MEDIUM, ASH_HIGH] = ashClasses(THRESHOLDS).map((c) => rgbOf(c.colour)) as unknown as [Rgb, Rgb, Rgb];
const ASH_VERY_HIGH = rgbOf(ashClasses([0.2, 2, 5, 10])[3]!.colour);
const ASH_FILL_ALPHA = ASH_FILL_OPACITY;

/** Low 0.2–2 in a 4°×3° rectangle south-east of Iceland, with medium 2–4 in a hole in its middle. */
function squareBands(ccw = true): ThresholdBand[] {
  const outer = lonLatRect(-14, 58, -8, 61, ccw);
  const inner = lonLatRect(-12, 59, -10, 60, ccw);
  return [
    { lower: 0.2, upper: 2, polygons: [{ outer, holes: [[...inner].reverse()] }] },
    { lower: 2, upper: 4, polygons: [{ outer: inner, holes: [] }] },
  ];
}

const threeBands = (areas: ThresholdBand[]): RunMapInput["bands"] => [
  { label: "SFC/FL200", areas },
  { label: "FL200/350", areas: [] },
  { label: "FL350/550", areas: [] },
];

describe("renderRunMap", () => {
  it("is a PNG of the layout's size", async () => {
    const png = await renderRunMap({ ...base, type: "Exercise", bands: samplePlumeBands() });
    const layout = runMapLayout({ type: "Exercise", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
    expect(layout.width).toBe(1200);
    expect(layout.height).toBeGreaterThan(400);
    expect(layout.height).toBeLessThan(700);
  });

  it("gives the same bytes for the same input, with or without the cached base map", async () => {
    const input: RunMapInput = { ...base, type: "Rehearsal", bands: samplePlumeBands() };
    const a = await renderRunMap(input);
    const b = await renderRunMap(input);
    clearBaseMapCache();
    const c = await renderRunMap(structuredClone(input));
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(true);
  });

  it("fills each class where its polygon is, in its colour, and nothing far away", async () => {
    // A Real Eruption has no watermark: away from labels, a pixel is the base map's, or the ash over it.
    const type = "Real Eruption";
    const filled = await readPixels(await renderRunMap({ ...base, type, bands: threeBands(squareBands()) }));
    const layout = runMapLayout({ type, box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    const panel = layout.panels[0]!;
    const { projection, canvas } = getBaseMap(ICELAND_BOX, panel.w, panel.h);
    const empty = await basePixels(canvas, panel);

    const [lx, ly] = imagePoint(projection, panel, -13.2, 58.6); // in low, outside the hole
    expect(closeTo(filled.at(lx, ly), over(empty.at(lx, ly), ASH_LOW, ASH_FILL_ALPHA))).toBe(true);
    const [mx, my] = imagePoint(projection, panel, -11.2, 59.4); // in the hole: medium only
    expect(closeTo(filled.at(mx, my), over(empty.at(mx, my), ASH_MEDIUM, ASH_FILL_ALPHA))).toBe(true);
    for (const [lon, lat] of [[-28, 69], [5, 56], [-4, 66]] as const) {
      const [x, y] = imagePoint(projection, panel, lon, lat);
      expect(filled.at(x, y)).toEqual(empty.at(x, y));
    }
    // The other panels had no ash: the base map at the same place.
    const other = layout.panels[1]!;
    const [ox, oy] = imagePoint(projection, other, -4, 66);
    expect(filled.at(ox, oy)).toEqual(empty.at(ox - other.x + panel.x, oy - other.y + panel.y));
  });

  it("draws polygons whatever their winding order", async () => {
    const ccw = await renderRunMap({ ...base, type: "Exercise", bands: threeBands(squareBands(true)) });
    const cw = await renderRunMap({ ...base, type: "Exercise", bands: threeBands(squareBands(false)) });
    expect(cw.equals(ccw)).toBe(true);
  });

  it("uses the high colour for the top class, and a fourth colour with four thresholds", async () => {
    const thresholds = [0.2, 2, 5, 10];
    const areas: ThresholdBand[] = [
      { lower: 5, upper: 10, polygons: [{ outer: lonLatRect(-14, 58, -12, 59), holes: [] }] },
      { lower: 10, upper: null, polygons: [{ outer: lonLatRect(-10, 58, -8, 59), holes: [] }] },
    ];
    const type = "Real Eruption";
    const filled = await readPixels(await renderRunMap({ ...base, thresholds, type, bands: threeBands(areas) }));
    const panel = runMapLayout({ type, box: ICELAND_BOX, thresholds, quantity: QUANTITY, bandCount: 3 }).panels[0]!;
    const { projection, canvas } = getBaseMap(ICELAND_BOX, panel.w, panel.h);
    const empty = await basePixels(canvas, panel);
    const [hx, hy] = imagePoint(projection, panel, -13, 58.5);
    expect(closeTo(filled.at(hx, hy), over(empty.at(hx, hy), ASH_HIGH, ASH_FILL_ALPHA))).toBe(true);
    const [vx, vy] = imagePoint(projection, panel, -9, 58.5);
    expect(closeTo(filled.at(vx, vy), over(empty.at(vx, vy), ASH_VERY_HIGH, ASH_FILL_ALPHA))).toBe(true);
  });

  it("marks an Exercise and a Rehearsal with a banner, and a Real Eruption with a red label but no banner", async () => {
    const bands = samplePlumeBands();
    const exercise = await readPixels(await renderRunMap({ ...base, type: "Exercise", bands }));
    const rehearsal = await readPixels(await renderRunMap({ ...base, type: "Rehearsal", bands }));
    const real = await readPixels(await renderRunMap({ ...base, type: "Real Eruption", bands }));
    const layout = runMapLayout({ type: "Exercise", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    // The banner spans the width at the top.
    expect(exercise.count(EXERCISE_COLOUR, { x: 0, y: 0, w: exercise.width, h: layout.metrics.bannerHeight })).toBeGreaterThan(exercise.width * 10);
    expect(rehearsal.count(REHEARSAL_COLOUR)).toBeGreaterThan(rehearsal.width * 10);
    expect(real.count(EXERCISE_COLOUR)).toBe(0);
    expect(real.count(REHEARSAL_COLOUR)).toBe(0);
    expect(real.count(REAL_ERUPTION_COLOUR)).toBeGreaterThan(500);
    expect(exercise.count(REAL_ERUPTION_COLOUR)).toBe(0);
    // No banner above the title: the Real Eruption image starts with its title.
    expect(runMapLayout({ type: "Real Eruption", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 }).metrics.bannerHeight).toBe(0);
  });

  it("renders a run without ash, saying so in every panel", async () => {
    const png = await renderRunMap({ ...base, type: "Real Eruption", bands: [] });
    const layout = runMapLayout({ type: "Real Eruption", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
    const pixels = await readPixels(png);
    const withAsh = await readPixels(await renderRunMap({ ...base, type: "Real Eruption", bands: threeBands(squareBands()) }));
    // The message box is white (the sea and land are not): the volcano is in the upper half, so it sits low.
    const white = (p: number[]) => p[0]! >= 250 && p[1]! >= 250 && p[2]! >= 250;
    for (const panel of layout.panels) {
      const row = { x: panel.x + Math.round(panel.w * 0.2), y: panel.y + Math.round(panel.h * 0.72) - 3, w: Math.round(panel.w * 0.6), h: 6 };
      expect(pixels.countWhere(row, white)).toBeGreaterThan(100);
    }
    const first = layout.panels[0]!;
    const row = { x: first.x + Math.round(first.w * 0.2), y: first.y + Math.round(first.h * 0.72) - 3, w: Math.round(first.w * 0.6), h: 6 };
    expect(withAsh.countWhere(row, white)).toBeLessThan(20);
  });

  it("says in a panel, and only in it, that the model had cells without a value at some times", () => {
    const input: RunMapInput = { ...base, type: "Exercise", bands: threeBands(squareBands()) };
    const layout = runMapLayout({ type: "Exercise", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    const pixelsOf = (bands: RunMapInput["bands"]) => {
      const drawn = drawRunMap({ ...input, bands });
      return packedPixels(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
    };
    const plain = pixelsOf(input.bands);
    // With ash (panel 0, text under its label) and without (panel 1, a second line under "No ash above 0.2 mg/m³").
    const missing = pixelsOf(input.bands.map((band, i) => (i < 2 ? { ...band, worstMissingShare: 0.25 } : band)));
    const differing = (rect: { x: number; y: number; w: number; h: number }) => {
      let n = 0;
      for (let y = rect.y; y < rect.y + rect.h; y++) for (let x = rect.x; x < rect.x + rect.w; x++) if (plain[y * layout.width + x] !== missing[y * layout.width + x]) n++;
      return n;
    };
    const [first, second, third] = layout.panels as [typeof layout.panels[0], typeof layout.panels[0], typeof layout.panels[0]];
    expect(differing(first)).toBeGreaterThan(300);
    expect(differing(second)).toBeGreaterThan(300);
    expect(differing(third)).toBe(0);
    expect(differing({ x: 0, y: 0, w: layout.width, h: layout.height })).toBe(differing(first) + differing(second));
  });

  it("on a map of the whole world, draws an area across 180° at both edges and nothing across the map", async () => {
    const box: LatLonBoxModel = { north: 80, south: -60, east: 180, west: -180 };
    // As model polygons come on a grid across 180°: longitudes running past it.
    const areas: ThresholdBand[] = [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(170, 40, 190, 56).map(([lon, lat]) => [lon < 0 ? lon + 360 : lon, lat] as [number, number]), holes: [] }] }];
    const input = { ...base, box, type: "Real Eruption" as const };
    const filled = await readPixels(await renderRunMap({ ...input, bands: threeBands(areas) }));
    const panel = runMapLayout({ type: "Real Eruption", box, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 }).panels[0]!;
    const { projection, canvas } = getBaseMap(box, panel.w, panel.h);
    const empty = await basePixels(canvas, panel);
    for (const lon of [174, 178, -178, -174]) {
      const [x, y] = imagePoint(projection, panel, lon, 48);
      expect(closeTo(filled.at(x, y), over(empty.at(x, y), ASH_LOW, ASH_FILL_ALPHA)), `lon ${lon}`).toBe(true);
    }
    for (const lon of [-150, -40, -30, 150]) {
      const [x, y] = imagePoint(projection, panel, lon, 48);
      expect(filled.at(x, y), `lon ${lon}`).toEqual(empty.at(x, y));
    }
  });

  it("renders a box across the antimeridian, with ash on both sides of 180°", async () => {
    const box: LatLonBoxModel = { north: 62, south: 44, east: -160, west: 150 };
    const shiveluch = { name: "Shiveluch", lat: 56.65, lon: 161.36 };
    const areas: ThresholdBand[] = [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(174, 50, -174, 54), holes: [] }] }];
    const input = { ...base, box, volcano: shiveluch, type: "Real Eruption" as const };
    const png = await renderRunMap({ ...input, bands: threeBands(areas) });
    const filled = await readPixels(png);
    const layout = runMapLayout({ type: "Real Eruption", box, thresholds: THRESHOLDS, quantity: QUANTITY, bandCount: 3 });
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
    const panel = layout.panels[0]!;
    const { projection, canvas } = getBaseMap(box, panel.w, panel.h);
    const empty = await basePixels(canvas, panel);
    // Both sides of 180° are inside the panel, and filled.
    for (const lon of [175.3, 178.7, -178.6, -175.2]) {
      const [x, y] = imagePoint(projection, panel, lon, 52.3);
      expect(x).toBeGreaterThan(panel.x);
      expect(x).toBeLessThan(panel.x + panel.w);
      expect(closeTo(filled.at(x, y), over(empty.at(x, y), ASH_LOW, ASH_FILL_ALPHA)), `lon ${lon}`).toBe(true);
    }
    // The central meridian is the middle of the box (150°E + 50°/2 = 175°E): in the middle of the panel.
    const [cx] = imagePoint(projection, panel, 175, 53);
    expect(Math.abs(cx - (panel.x + panel.w / 2))).toBeLessThan(panel.w * 0.05);
    for (const [lon, lat] of [[160, 46], [-165, 60]] as const) {
      const [x, y] = imagePoint(projection, panel, lon, lat);
      expect(filled.at(x, y)).toEqual(empty.at(x, y));
    }
  });
});
