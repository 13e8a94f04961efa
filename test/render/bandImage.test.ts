import { describe, expect, it } from "vitest";
import { contourBands } from "../../src/geo/contourBands.ts";
import type { ThresholdBand } from "../../src/geo/types.ts";
import { baseMapCacheSize, clearBaseMapCache, getBaseMap, offerBaseMaps } from "../../src/render/basemap.ts";
import { bandImageLayout, bandImagePalette, drawBandImage, renderBandImage, type BandImageInput } from "../../src/render/bandImage.ts";
import { noAshNoteLines } from "../../src/render/draw.ts";
import { packedPixels, PaletteIndexer } from "../../src/render/palette.ts";
import { encodeIndexedPng, unfilteredRows } from "../../src/render/png.ts";
import { ashClasses, ASH_FILL_OPACITY as ASH_FILL_ALPHA, rgbOf } from "../../src/contract/ashClasses.ts";
import { EXERCISE_COLOUR, REAL_ERUPTION_COLOUR, REHEARSAL_COLOUR } from "../../src/render/style.ts";
import { EYJAFJALLAJOKULL, ICELAND_BOX, QUANTITY, THRESHOLDS, lonLatRect, samplePlumeBands } from "./plume.ts";
import { basePixels, closeTo, imagePoint, over, plte, pngRows, pngSize, readPixels } from "./pixels.ts";

const input = (type: BandImageInput["type"], areas: ThresholdBand[], extra: Partial<BandImageInput> = {}): BandImageInput => ({
  type,
  volcano: EYJAFJALLAJOKULL,
  reftime: "2010-04-14T06:00:00Z",
  time: "2010-04-14T12:00:00Z",
  box: ICELAND_BOX,
  thresholds: THRESHOLDS,
  quantity: QUANTITY,
  band: { label: "SFC/FL200", areas },
  ...extra,
});

const classes = ashClasses(THRESHOLDS);
const ASH_LOW = rgbOf(classes[0]!.colour);
const ASH_HIGH = rgbOf(classes[2]!.colour);

describe("renderBandImage", () => {
  it("is a PNG, 800 px wide by default, or the size asked for", async () => {
    const png = await renderBandImage(input("Exercise", samplePlumeBands(6)[0]!.areas));
    const layout = bandImageLayout(input("Exercise", []));
    expect(layout.width).toBe(800);
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
    expect(pngSize(await renderBandImage(input("Rehearsal", [], { width: 640, height: 480 })))).toEqual({ width: 640, height: 480 });
  });

  it("gives the same bytes for the same input", async () => {
    const i = input("Exercise", samplePlumeBands(12)[0]!.areas);
    const a = await renderBandImage(i);
    clearBaseMapCache();
    expect((await renderBandImage(structuredClone(i))).equals(a)).toBe(true);
    expect((await renderBandImage(i)).equals(a)).toBe(true);
    // The canvas is reused from image to image: nothing of one (state, pixels) reaches the next.
    await renderBandImage(input("Real Eruption", [], { time: "2010-04-15T00:00:00Z" }));
    await renderBandImage(input("Rehearsal", samplePlumeBands(24)[0]!.areas, { width: 640, height: 480 }));
    expect((await renderBandImage(i)).equals(a)).toBe(true);
  });

  it("is an indexed-colour PNG that keeps the class colours and the base map's exactly where they were drawn", async () => {
    const i = input("Exercise", samplePlumeBands(18)[0]!.areas);
    const drawn = drawBandImage(i);
    const png = await renderBandImage(i);
    expect(png[25], "IHDR colour type").toBe(3);
    const before = packedPixels(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
    const after = await readPixels(png);
    const keep = new Set(drawn.keep);
    const { panel } = bandImageLayout(i);
    const baseColours = new Set(getBaseMap(ICELAND_BOX, panel.w, panel.h).colours);
    let kept = 0;
    let ash = 0;
    let changed = 0;
    for (let p = 0; p < before.length; p++) {
      const c = before[p]!;
      const [r, g, b, a] = after.at(p % drawn.width, Math.floor(p / drawn.width));
      const same = c === ((r | (g << 8) | (b << 16) | (a << 24)) >>> 0);
      if (keep.has(c)) {
        kept++;
        if (!baseColours.has(c)) ash++;
        if (!same) expect.fail(`pixel ${p % drawn.width},${Math.floor(p / drawn.width)}: ${c.toString(16)} drawn, ${[r, g, b, a]} written`);
      } else if (!same) changed++;
    }
    // Every class over some base map colour, and most of the image; what changes is a few anti-aliased edges.
    expect(kept).toBeGreaterThan(before.length / 2);
    expect(ash, "pixels of ash classes (over the base map, in the legend) and their outlines").toBeGreaterThan(2000);
    expect(changed / before.length).toBeLessThan(0.15);
  });

  it("with the run's palette, keeps every class colour exact though the samples it came from had no ash, and maps the edges they lacked to near colours", async () => {
    const { palette } = bandImagePalette([input("Exercise", [])]);
    const i = input("Exercise", samplePlumeBands(18)[0]!.areas);
    const drawn = drawBandImage(i);
    const before = packedPixels(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
    const png = await renderBandImage({ ...i, palette });
    expect(png[25], "IHDR colour type").toBe(3);
    const after = await readPixels(png);
    const keep = new Set(drawn.keep);
    const { panel } = bandImageLayout(i);
    const baseColours = new Set(getBaseMap(ICELAND_BOX, panel.w, panel.h).colours);
    let ash = 0;
    let error = 0;
    for (let p = 0; p < before.length; p++) {
      const c = before[p]!;
      const written = after.at(p % drawn.width, Math.floor(p / drawn.width));
      const same = c === ((written[0] | (written[1] << 8) | (written[2] << 16) | (written[3] << 24)) >>> 0);
      if (keep.has(c)) {
        if (!same) expect.fail(`pixel ${p % drawn.width},${Math.floor(p / drawn.width)}: ${c.toString(16)} drawn, ${written} written`);
        if (!baseColours.has(c)) ash++;
      }
      for (let k = 0; k < 4; k++) error += Math.abs(((c >>> (8 * k)) & 255) - written[k]!);
    }
    expect(ash, "pixels of ash classes (over the base map, in the legend) and their outlines, none of them in the samples").toBeGreaterThan(2000);
    // Ash over the watermark's letters (the samples had neither ash nor any other image's colours there) is exact too.
    const pixelsOf = (type: BandImageInput["type"]) => {
      const image = drawBandImage(input(type, []));
      return packedPixels(image.ctx.getImageData(0, 0, image.width, image.height).data);
    };
    const plainExercise = pixelsOf("Exercise");
    const plainReal = pixelsOf("Real Eruption");
    const w = drawn.width;
    const flat = (pixels: Uint32Array, p: number) => pixels[p - 1] === pixels[p] && pixels[p + 1] === pixels[p] && pixels[p - w] === pixels[p] && pixels[p + w] === pixels[p];
    let ashOverWatermark = 0;
    for (let y = panel.y + 1; y < panel.y + panel.h - 1; y++) {
      for (let x = panel.x + 1; x < panel.x + panel.w - 1; x++) {
        const p = y * w + x;
        // Inside a letter of the watermark (where the Exercise's map differs from the Real Eruption's), under ash, away from any edge.
        if (plainExercise[p] === plainReal[p] || before[p] === plainExercise[p] || !flat(plainExercise, p) || !flat(before, p)) continue;
        ashOverWatermark++;
        const [r, g, b, a] = after.at(x, y);
        if (before[p] !== ((r | (g << 8) | (b << 16) | (a << 24)) >>> 0)) expect.fail(`ash over the watermark at ${x},${y}: ${before[p]!.toString(16)} drawn, ${[r, g, b, a]} written`);
      }
    }
    expect(ashOverWatermark, "pixels of ash inside the watermark's letters").toBeGreaterThan(200);
    // Edges the samples did not have go to their nearest entry: on average well under one level of 255 per channel.
    expect(error / (before.length * 4)).toBeLessThan(1);
    // The same palette in the PNG whatever the image: PLTE is the palette given.
    const other = await renderBandImage({ ...input("Exercise", samplePlumeBands(6)[0]!.areas), palette });
    expect(plte(other)).toEqual(plte(png));
    expect(plte(png)).toHaveLength(palette.length * 3);
  });

  it("with the run's palette, draws and reads only what differs from the band's background, and gives the bytes of the whole image drawn and indexed", async () => {
    // Ash over the volcano's name, the graticule labels and the Exercise watermark; at the panel's edges; in a
    // hole; missing values with ash (a note under the band label) and without (a note of its own); no ash at all;
    // a box across the antimeridian; the whole world. Each drawn whole and indexed with the same palette is the reference.
    const plume = samplePlumeBands(18)[0]!.areas;
    const everywhere: ThresholdBand[] = [{ lower: 2, upper: 4, polygons: [{ outer: lonLatRect(-40, 50, 20, 75), holes: [lonLatRect(-20, 60, -10, 64, false)] }] }];
    const corner: ThresholdBand[] = [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(5, 53.5, 11.5, 56), holes: [] }] }];
    const cases: BandImageInput[] = [
      input("Exercise", plume),
      input("Exercise", plume, { time: "2010-04-14T13:00:00Z" }),
      input("Real Eruption", plume, { band: { label: "SFC/FL200", areas: plume, missingShare: 0.25 } }),
      input("Rehearsal", everywhere),
      input("Exercise", corner, { band: { label: "FL200/FL350", areas: corner } }),
      input("Exercise", [], { band: { label: "SFC/FL200", areas: [], missingShare: 0.4 } }),
      input("Exercise", []),
      input("Rehearsal", [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(176, 50, -176, 54), holes: [] }] }], {
        box: { north: 62, south: 44, east: -160, west: 150 },
        volcano: { name: "Shiveluch", lat: 56.65, lon: 161.36 },
      }),
      // The whole world: this area crosses the projection's cut, and d3-geo draws it.
      input("Rehearsal", [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(170, 10, -170, 20), holes: [] }] }], { box: { north: 80, south: -80, east: 180, west: -180 } }),
    ];
    for (const type of ["Exercise", "Real Eruption", "Rehearsal"] as const) {
      const ofType = cases.filter((c) => c.type === type);
      const { palette } = bandImagePalette(ofType.slice(0, 1));
      // Twice over, so that the second round composes on backgrounds made for other images.
      for (const i of [...ofType, ...ofType]) {
        const drawn = drawBandImage(i);
        const indices = new PaletteIndexer(palette).index(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
        const composed = await renderBandImage({ ...i, palette });
        expect(plte(composed).equals(plte(await encodeIndexedPng({ width: drawn.width, height: drawn.height, colours: palette, indices, exact: false })))).toBe(true);
        const written = pngRows(composed);
        const expected = unfilteredRows(indices, drawn.width, drawn.height);
        if (!written.equals(expected)) {
          const wrong = Array.from(expected.keys()).filter((b) => written[b] !== expected[b]);
          const [x, y] = [(wrong[0]! % (drawn.width + 1)) - 1, Math.floor(wrong[0]! / (drawn.width + 1))];
          expect.fail(`${i.type} ${i.band.label} ${i.time}: ${wrong.length} pixels differ from the whole image drawn, the first at ${x},${y}`);
        }
      }
    }
  });

  it("reuses one base map for every step of a run", async () => {
    clearBaseMapCache();
    for (const hours of [6, 12, 18, 24]) await renderBandImage(input("Exercise", samplePlumeBands(hours)[0]!.areas, { time: `2010-04-14T${String(6 + hours).padStart(2, "0")}:00:00Z` }));
    expect(baseMapCacheSize()).toBe(1);
  });

  it("fills the areas where they are, and nothing far away", async () => {
    const areas: ThresholdBand[] = [
      { lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(-14, 57, -10, 60), holes: [] }] },
      { lower: 4, upper: null, polygons: [{ outer: lonLatRect(-6, 64, -2, 66), holes: [] }] },
    ];
    const i = input("Real Eruption", areas);
    const filled = await readPixels(await renderBandImage(i));
    const { panel } = bandImageLayout(i);
    const { projection, canvas } = getBaseMap(ICELAND_BOX, panel.w, panel.h);
    const base = await basePixels(canvas, panel);
    const [lx, ly] = imagePoint(projection, panel, -12.3, 58.2);
    expect(closeTo(filled.at(lx, ly), over(base.at(lx, ly), ASH_LOW, ASH_FILL_ALPHA))).toBe(true);
    const [hx, hy] = imagePoint(projection, panel, -3.7, 64.7);
    expect(closeTo(filled.at(hx, hy), over(base.at(hx, hy), ASH_HIGH, ASH_FILL_ALPHA))).toBe(true);
    for (const [lon, lat] of [[-28, 69], [6, 57], [-22, 56]] as const) {
      const [x, y] = imagePoint(projection, panel, lon, lat);
      expect(filled.at(x, y)).toEqual(base.at(x, y));
    }
  });

  it("draws a long straight side of an area where the field has it, not bowed into the ash along a great circle", async () => {
    // A 30° × 3° block of 5 mg/m³ on a 0.1° grid: simplified, each side is one straight run along a parallel.
    const nx = 400;
    const field = new Float32Array(nx * 100);
    for (let y = 30; y < 60; y++) for (let x = 50; x < 350; x++) field[y * nx + x] = 5;
    const areas = contourBands(field, nx, 100, THRESHOLDS, (x, y) => [-30 + x * 0.1, 45 + y * 0.1]);
    const box = { north: 58, south: 42, east: 15, west: -35 };
    const i = input("Real Eruption", areas, { box });
    const pixels = await readPixels(await renderBandImage(i));
    const { panel } = bandImageLayout(i);
    const { projection, canvas } = getBaseMap(box, panel.w, panel.h);
    const base = await basePixels(canvas, panel);
    // Just inside the south side (at 47.98°N) and the north side (50.92°N), along the whole block.
    for (const lat of [48.1, 48.4, 50.5, 50.8]) {
      for (const lon of [-24, -15, -5, 3]) {
        const [x, y] = imagePoint(projection, panel, lon, lat);
        if (!closeTo(pixels.at(x, y), over(base.at(x, y), ASH_HIGH, ASH_FILL_ALPHA))) expect.fail(`(${lon}, ${lat}): ${pixels.at(x, y)}, not the high class over the base map`);
      }
    }
  });

  it("marks the run type: banner and badge for Exercise and Rehearsal, a red badge for a Real Eruption", async () => {
    const areas = samplePlumeBands(12)[0]!.areas;
    const exercise = await readPixels(await renderBandImage(input("Exercise", areas)));
    const rehearsal = await readPixels(await renderBandImage(input("Rehearsal", areas)));
    const real = await readPixels(await renderBandImage(input("Real Eruption", areas)));
    const layout = bandImageLayout(input("Exercise", areas));
    expect(exercise.count(EXERCISE_COLOUR, { x: 0, y: 0, w: layout.width, h: layout.metrics.bannerHeight })).toBeGreaterThan(layout.width * 10);
    // The badge beside the title, below the banner.
    expect(exercise.count(EXERCISE_COLOUR, { x: 0, y: layout.metrics.bannerHeight, w: 200, h: layout.metrics.titleHeight })).toBeGreaterThan(500);
    expect(rehearsal.count(REHEARSAL_COLOUR)).toBeGreaterThan(layout.width * 10);
    expect(real.count(EXERCISE_COLOUR) + real.count(REHEARSAL_COLOUR)).toBe(0);
    expect(real.count(REAL_ERUPTION_COLOUR)).toBeGreaterThan(500);
  });

  it("renders a step without ash", async () => {
    const i = input("Exercise", []);
    const png = await renderBandImage(i);
    const layout = bandImageLayout(i);
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
    const pixels = await readPixels(png);
    const { panel } = layout;
    const row = { x: panel.x + Math.round(panel.w * 0.3), y: panel.y + Math.round(panel.h * 0.72) - 3, w: Math.round(panel.w * 0.4), h: 6 };
    expect(pixels.countWhere(row, (p) => p[0] >= 250 && p[1] >= 250 && p[2] >= 250)).toBeGreaterThan(100);
  });

  it("says how much of the grid has no value where the model has missing cells, in the panel only", async () => {
    expect(noAshNoteLines(THRESHOLDS, undefined)).toEqual([{ text: "No ash above 0.2 mg/m³", bold: true }]);
    expect(noAshNoteLines(THRESHOLDS, "No model value in 25 % of the grid")).toEqual([
      { text: "No ash above 0.2 mg/m³", bold: true },
      { text: "No model value in 25 % of the grid", bold: false },
    ]);
    for (const areas of [[], samplePlumeBands()[0]!.areas]) {
      const plain = input("Exercise", areas);
      const withMissing = input("Exercise", areas, { band: { label: "SFC/FL200", areas, missingShare: 0.25 } });
      // As drawn, before the PNG's palette (chosen per image, so edges elsewhere may map to other entries).
      const [a, b] = [plain, withMissing].map((i) => {
        const drawn = drawBandImage(i);
        return packedPixels(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
      });
      const { panel, width } = bandImageLayout(plain);
      const differs = (x: number, y: number) => a![y * width + x] !== b![y * width + x];
      const inPanel = countDiffering(differs, panel);
      const everywhere = countDiffering(differs, { x: 0, y: 0, w: width, h: a!.length / width });
      expect(inPanel).toBeGreaterThan(500); // the note's box and text
      expect(everywhere).toBe(inPanel); // banner, title, legend and attribution unchanged
    }
  });

  it("installs the base map the palette's thread offers instead of drawing it: the same pixels, the same bytes", async () => {
    const image = input("Exercise", samplePlumeBands(18)[0]!.areas);
    clearBaseMapCache();
    const { palette, baseMaps } = bandImagePalette([image]);
    const { panel } = bandImageLayout(image);
    expect(baseMaps.map((base) => [base.width, base.height])).toEqual([[panel.w, panel.h]]);
    expect(baseMaps[0]!.pixels.buffer, "shared with other threads, not copied to each").toBeInstanceOf(SharedArrayBuffer);
    const drawnHere = drawBandImage(image);
    const pixelsHere = drawnHere.ctx.getImageData(0, 0, drawnHere.width, drawnHere.height).data.slice();
    const pngHere = await renderBandImage({ ...image, palette });

    clearBaseMapCache();
    offerBaseMaps(baseMaps);
    const installed = drawBandImage(image);
    expect(Buffer.from(installed.ctx.getImageData(0, 0, installed.width, installed.height).data).equals(Buffer.from(pixelsHere))).toBe(true);
    clearBaseMapCache();
    expect((await renderBandImage({ ...image, palette, baseMaps })).equals(pngHere)).toBe(true);

    // It is the offered pixels that are drawn: a base map offered with its top rows painted black shows them.
    clearBaseMapCache();
    const blackened = baseMaps.map((base) => {
      const pixels = base.pixels.slice();
      pixels.fill(0, 0, base.width * 4 * 20);
      for (let i = 3; i < base.width * 4 * 20; i += 4) pixels[i] = 255;
      return { ...base, pixels };
    });
    offerBaseMaps(blackened);
    const altered = drawBandImage(image);
    expect(Buffer.from(altered.ctx.getImageData(0, 0, altered.width, altered.height).data).equals(Buffer.from(pixelsHere))).toBe(false);
    clearBaseMapCache();
  });

  it("renders a box across the antimeridian", async () => {
    const areas: ThresholdBand[] = [{ lower: 0.2, upper: 2, polygons: [{ outer: lonLatRect(176, 50, -176, 54), holes: [] }] }];
    const i = input("Rehearsal", areas, { box: { north: 62, south: 44, east: -160, west: 150 }, volcano: { name: "Shiveluch", lat: 56.65, lon: 161.36 } });
    const png = await renderBandImage(i);
    const layout = bandImageLayout(i);
    expect(pngSize(png)).toEqual({ width: layout.width, height: layout.height });
  });
});

function countDiffering(differs: (x: number, y: number) => boolean, rect: { x: number; y: number; w: number; h: number }): number {
  let n = 0;
  for (let y = rect.y; y < rect.y + rect.h; y++) for (let x = rect.x; x < rect.x + rect.w; x++) if (differs(x, y)) n++;
  return n;
}
