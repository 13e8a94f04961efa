/**
 * Timings of the map renderers: the first call of an extent (base map drawn: Natural Earth projected)
 * against later calls (base map copied from the cache), median of N.
 *   npm run bench:render -- [N]
 */
import { performance } from "node:perf_hooks";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { renderBandImage } from "../../src/render/bandImage.ts";
import { clearBaseMapCache, getBaseMap, naturalEarth } from "../../src/render/basemap.ts";
import { bandImageLayout } from "../../src/render/bandImage.ts";
import { registerFonts } from "../../src/render/fonts.ts";
import { renderRunMap } from "../../src/render/runMap.ts";
import { DAY_OF_OUTPUTS, EYJAFJALLAJOKULL, ICELAND_BOX, QUANTITY, THRESHOLDS, samplePlumeBands } from "../../test/render/plume.ts";

const N = Number(process.argv[2] ?? 15);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const time = (f: () => unknown): number => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

const bands = samplePlumeBands();
const common = { type: "Exercise" as const, volcano: EYJAFJALLAJOKULL, reftime: "2010-04-14T06:00:00Z", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY };
const runInput = { ...common, times: DAY_OF_OUTPUTS, bands };
const bandInput = { ...common, time: "2010-04-15T06:00:00Z", band: bands[0]! };

async function timeAsync(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

// One-off costs: fonts (once per process) and Natural Earth parsing (once per base map drawn).
const fontsMs = time(() => registerFonts());
const ne50 = time(() => naturalEarth("50m"));
const ne110 = time(() => naturalEarth("110m"));

const rows: Array<[string, number, string]> = [];
const firstRun: number[] = [];
const cachedRun: number[] = [];
const firstBand: number[] = [];
const cachedBand: number[] = [];
const baseOnly: number[] = [];
const layout = bandImageLayout(bandInput);
for (let i = 0; i < N; i++) {
  clearBaseMapCache();
  firstRun.push(await timeAsync(() => renderRunMap(runInput)));
  cachedRun.push(await timeAsync(() => renderRunMap(runInput)));
  clearBaseMapCache();
  firstBand.push(await timeAsync(() => renderBandImage(bandInput)));
  cachedBand.push(await timeAsync(() => renderBandImage(bandInput)));
  clearBaseMapCache();
  baseOnly.push(time(() => getBaseMap(ICELAND_BOX, layout.panel.w, layout.panel.h)));
}
// The PNG encoding alone, on a finished band image (the floor of a cached render).
const finished = await loadImage(await renderBandImage(bandInput));
const encodeCanvas = createCanvas(finished.width, finished.height);
encodeCanvas.getContext("2d").drawImage(finished, 0, 0);
const encodeOnly: number[] = [];
for (let i = 0; i < N; i++) encodeOnly.push(time(() => encodeCanvas.toBuffer("image/png")));

// A run's worth of band images: 3 bands × 48 steps, four in flight as the pipeline renders them.
clearBaseMapCache();
const t0 = performance.now();
const pending: Array<Promise<Buffer>> = [];
for (let step = 0; step < 48; step++) {
  for (const band of bands) {
    pending.push(renderBandImage({ ...bandInput, band }));
    if (pending.length >= 4) await pending.shift();
  }
}
await Promise.all(pending);
const series = performance.now() - t0;

rows.push(["fonts: register (once per process)", fontsMs, "1 call"]);
rows.push(["Natural Earth 50m: read + decode (src/render/natural-earth-50m.bin, once)", ne50, "1 call"]);
rows.push(["Natural Earth 110m: read + decode (src/render/natural-earth-110m.bin, once)", ne110, "1 call"]);
rows.push([`base map only, ${layout.panel.w}x${layout.panel.h}, 50m`, median(baseOnly), `median of ${N}`]);
rows.push(["renderRunMap, first call (base map drawn)", median(firstRun), `median of ${N}`]);
rows.push(["renderRunMap, cached base map", median(cachedRun), `median of ${N}`]);
rows.push(["renderBandImage, first call (base map drawn)", median(firstBand), `median of ${N}`]);
rows.push(["renderBandImage, cached base map", median(cachedBand), `median of ${N}`]);
rows.push([`PNG encoding only, ${finished.width}x${finished.height}`, median(encodeOnly), `median of ${N}`]);
rows.push(["144 band images (3 bands × 48 steps), total", series, `${(series / 144).toFixed(1)} ms/image`]);

const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${"what".padEnd(w)}  ${"ms".padStart(8)}  note`);
for (const [what, ms, note] of rows) console.log(`${what.padEnd(w)}  ${ms.toFixed(1).padStart(8)}  ${note}`);
