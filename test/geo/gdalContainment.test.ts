/**
 * Conservative ash areas, judged by GDAL: on every band, step and threshold of the bundled sample runs and
 * of the generated full-size run (regular and rotated-pole), the published areas leave out at most 0.2 %
 * of what gdal_contour draws, and agree with it (IoU ≥ 0.99) wherever GDAL cuts no saddle apart. Where it
 * does, ours joins the saddle (src/geo/isorings.ts) and is larger by at most half a cell² per saddle.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Comparison, compareWithGdal, type Field, fullSizeFields, HAS_GDAL, modelFields, summarise } from "./gdalContainment.ts";
import { DEFAULT_THRESHOLDS_MG_M3 } from "../../src/model/types.ts";

const RUNS = path.join(import.meta.dirname, "../../runs");
const scratch = mkdtempSync(path.join(tmpdir(), "ashcast-gdal-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sampleFiles = readdirSync(RUNS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => readdirSync(path.join(RUNS, entry.name)).filter((name) => name.endsWith(".nc")).map((name) => path.join(RUNS, entry.name, name)));

function judge(fields: Field[]): Comparison[] {
  const dir = mkdtempSync(path.join(scratch, "run-"));
  const rows = compareWithGdal(fields, DEFAULT_THRESHOLDS_MG_M3, dir);
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

function expectConservative(rows: Comparison[]): void {
  expect(rows.length).toBeGreaterThan(0);
  // GDAL writes float coordinates: its areas carry a few millionths of a cell² of rounding.
  const missing = rows.filter((r) => r.missed > 0.002 * r.gdal + 1e-4);
  expect(missing, "areas leaving out more than 0.2 % of GDAL's").toEqual([]);
  // Where GDAL cuts no saddle apart, the only difference left is the outward simplification.
  const disagreeing = rows.filter((r) => r.apartSaddles === 0 && r.iou < 0.99);
  expect(disagreeing, "areas with IoU under 0.99 that no saddle explains").toEqual([]);
  // A joined saddle adds at most half a cell² (the part of the cell between GDAL's two cuts).
  const beyond = rows.filter((r) => r.extra > 0.5 * r.apartSaddles + 0.01 * r.gdal + 1e-4);
  expect(beyond, "areas larger than GDAL's by more than the saddles ours joins").toEqual([]);
  expect(summarise(rows).overallIou).toBeGreaterThan(0.999);
}

describe.skipIf(!HAS_GDAL)("ash areas against gdal_contour", () => {
  it("finds the sample runs' model output", () => {
    expect(sampleFiles.length).toBeGreaterThanOrEqual(3);
  });

  for (const file of sampleFiles) {
    it(`contain GDAL's on every band, step and threshold of ${path.basename(path.dirname(file))}`, async () => {
      expectConservative(judge(await modelFields(file)));
    }, 600_000);
  }

  for (const layout of ["eemep", "snap"] as const) {
    it(`contain GDAL's on every band and step of the full-size ${layout} run (800 × 500 cells, 72 steps)`, () => {
      expectConservative(judge(fullSizeFields(layout)));
    }, 1_800_000);
  }

  it("keep both diagonals of a saddle, which GDAL cuts apart on one of them", () => {
    const saddle = (values: number[]): Field => ({ name: values.join(" "), values: Float32Array.from(values), nx: 4, ny: 4 });
    const fields = [saddle([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]), saddle([0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
    const [joined, apart] = compareWithGdal(fields, [0.5], mkdtempSync(path.join(scratch, "saddle-")));
    // GDAL writes float coordinates: its areas carry a few millionths of a cell² of rounding.
    // Where GDAL joins the high corners, ours is the same area; where it cuts them apart, ours holds both
    // pieces and the saddle cell's middle between them.
    expect(joined!.missed).toBeLessThan(1e-5);
    expect(joined!.iou).toBeGreaterThan(0.99999);
    expect(apart!.missed).toBeLessThan(1e-5);
    expect(apart!.ours - apart!.gdal).toBeCloseTo(0.5, 4);
  });
});
