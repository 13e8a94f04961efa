/**
 * Published ash areas judged by GDAL: for each field, gdal_contour (GDAL's own marching squares) draws
 * the areas at or above each threshold, ashcast's contourBands (as published: default simplification)
 * draws ours in the same raster frame, and GDAL's SQLite dialect (SpatiaLite on GEOS) measures
 * area(GDAL − ours), area(ours − GDAL) and the intersection. Nothing of ashcast's geometry code does the
 * judging. Test helper: needs gdal_contour and ogr2ogr (Debian gdal-bin, installed by
 * scripts/setup-test-env.sh).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { plumeField, plumeGrid, resolveOptions } from "../../scripts/make-model-output.ts";
import { contourBands } from "../../src/geo/contourBands.ts";
import type { Position } from "../../src/geo/types.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";

export interface Field {
  /** What it is, e.g. `MAX6h_ASH_fl000-200 2026-05-02T13:00:00Z`. */
  name: string;
  values: Float32Array;
  nx: number;
  ny: number;
}

export interface Comparison {
  field: string;
  threshold: number;
  /** Areas in grid cells². */
  gdal: number;
  ours: number;
  /** Ash GDAL draws and ours leaves out. */
  missed: number;
  /** Area ours draws beyond GDAL's. */
  extra: number;
  iou: number;
  /**
   * Saddle cells (two diagonal centres at or above the threshold, the other two valid and below) that
   * gdal_contour cuts apart: the lower-left and upper-right centres high, rows as written. Ours joins
   * them; each adds at most half a cell² to ours.
   */
  apartSaddles: number;
}

/** Saddle cells GDAL cuts apart at threshold t (see Comparison.apartSaddles). */
export function countApartSaddles(field: Field, t: number): number {
  const { values, nx, ny } = field;
  let count = 0;
  for (let y = 0; y + 1 < ny; y++) {
    for (let x = 0; x + 1 < nx; x++) {
      const tl = values[y * nx + x]!;
      const tr = values[y * nx + x + 1]!;
      const bl = values[(y + 1) * nx + x]!;
      const br = values[(y + 1) * nx + x + 1]!;
      if (tr >= t && bl >= t && tl < t && br < t) count++;
    }
  }
  return count;
}

export const tool = (name: string): boolean => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
export const HAS_GDAL = tool("gdal_contour") && tool("ogr2ogr");

/** ESRI .hdr of a float32 raster, 1 unit per cell; GDAL's centre of cell (i, j) is at (i + 0.5, ny − j − 0.5). */
const header = (nx: number, ny: number): string => `ncols ${nx}\nnrows ${ny}\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\nbyteorder LSBFIRST\n`;

type Feature = { type: "Feature"; properties: { field: number; src: "gdal" | "ours"; lower: number }; geometry: unknown };

/** Every field at every threshold, compared; `dir` is a scratch directory. */
export function compareWithGdal(fields: readonly Field[], thresholds: readonly number[], dir: string, simplifyCells?: number): Comparison[] {
  const features: Feature[] = [];
  fields.forEach((field, k) => {
    const { nx, ny } = field;
    const raster = path.join(dir, `f${k}`);
    writeFileSync(`${raster}.flt`, Buffer.from(Float32Array.from(field.values, (v) => (Number.isNaN(v) ? -9999 : v)).buffer));
    writeFileSync(`${raster}.hdr`, header(nx, ny));
    const out = `${raster}.geojson`;
    const r = spawnSync("gdal_contour", ["-q", "-p", "-amin", "amin", "-amax", "amax", "-fl", ...thresholds.map(String), "-f", "GeoJSON", `${raster}.flt`, out], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`gdal_contour failed on ${field.name}: ${r.stderr}`);
    const gdal = JSON.parse(readFileSync(out, "utf8")) as { features: Array<{ properties: { amin: number }; geometry: unknown }> };
    for (const f of gdal.features) if (f.geometry) features.push({ type: "Feature", properties: { field: k, src: "gdal", lower: f.properties.amin }, geometry: f.geometry });
    // Ours, as published (default simplification), mapped into GDAL's raster frame.
    const toRaster = (x: number, y: number): Position => [x + 0.5, ny - 0.5 - y];
    for (const band of contourBands(field.values, nx, ny, thresholds, toRaster, simplifyCells === undefined ? {} : { simplifyCells })) {
      if (band.polygons.length === 0) continue;
      const coordinates = band.polygons.map((p) => [p.outer, ...p.holes]);
      features.push({ type: "Feature", properties: { field: k, src: "ours", lower: band.lower }, geometry: { type: "MultiPolygon", coordinates } });
    }
  });
  const all = path.join(dir, "areas.geojson");
  writeFileSync(all, JSON.stringify({ type: "FeatureCollection", name: "areas", features }));
  // Thresholds compared with a relative margin: GDAL writes amin as a double of the float level.
  const ts = thresholds.map((t) => `(${t})`).join(", ");
  const union = (src: string): string =>
    `SELECT a.field AS field, ts.t AS t, ST_Union(a.geometry) AS geom FROM areas a JOIN ts ON a.lower >= ts.t * 0.999999 WHERE a.src = '${src}' GROUP BY a.field, ts.t`;
  const sql = [
    `WITH ts(t) AS (VALUES ${ts}), g AS (${union("gdal")}), o AS (${union("ours")}), keys AS (SELECT field, t FROM g UNION SELECT field, t FROM o)`,
    // SpatiaLite answers NULL for an empty result: a difference is the whole area only when the other side has none.
    // Zeros are written 0.0: OGR types a column from its first row, and an integer 0 would truncate the rest.
    "SELECT keys.field AS field, keys.t AS t, COALESCE(ST_Area(g.geom), 0.0) AS gdal, COALESCE(ST_Area(o.geom), 0.0) AS ours,",
    "CASE WHEN o.geom IS NULL THEN COALESCE(ST_Area(g.geom), 0.0) ELSE COALESCE(ST_Area(ST_Difference(g.geom, o.geom)), 0.0) END AS missed,",
    "CASE WHEN g.geom IS NULL THEN COALESCE(ST_Area(o.geom), 0.0) ELSE COALESCE(ST_Area(ST_Difference(o.geom, g.geom)), 0.0) END AS extra,",
    "COALESCE(ST_Area(ST_Intersection(g.geom, o.geom)), 0.0) AS inter",
    "FROM keys LEFT JOIN g ON g.field = keys.field AND g.t = keys.t LEFT JOIN o ON o.field = keys.field AND o.t = keys.t ORDER BY keys.field, keys.t",
  ].join(" ");
  const r = spawnSync("ogr2ogr", ["-f", "CSV", "/vsistdout/", all, "-dialect", "SQLite", "-sql", sql], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0 || /ERROR/.test(r.stderr)) throw new Error(`ogr2ogr could not measure the areas: ${r.stderr}`);
  const rows = r.stdout.trim().split("\n").slice(1);
  return rows.map((row) => {
    const [field, t, gdal, ours, missed, extra, inter] = row.split(",").map((cell) => Number(cell.replace(/"/g, ""))) as [number, number, number, number, number, number, number];
    const united = gdal + ours - inter;
    return { field: fields[field]!.name, threshold: t, gdal, ours, missed, extra, iou: united > 0 ? inter / united : 1, apartSaddles: countApartSaddles(fields[field]!, t) };
  });
}

/** Every band at every step of a model output file, in mg/m³. */
export async function modelFields(file: string): Promise<Field[]> {
  const output = await openModelOutput(file, path.basename(file));
  try {
    const fields: Field[] = [];
    for (const variable of output.variables) {
      for (let t = 0; t < output.times.length; t++) {
        fields.push({ name: `${variable.name} ${output.times[t]}`, values: await output.readField(variable.name, t), nx: output.grid.nx, ny: output.grid.ny });
      }
    }
    return fields;
  } finally {
    output.close();
  }
}

/**
 * The generated full-size run of bench/build (800 × 500 cells at 0.1°, 3 bands × 72 hourly steps), as
 * the generator computes it before writing NetCDF, in mg/m³.
 */
export function fullSizeFields(layout: "eemep" | "snap"): Field[] {
  const options = resolveOptions({ outDir: "unused", nx: 800, ny: 500, steps: 72, res: 0.1, lat0: 25, lon0: -45, reftime: "2026-06-01T00:00:00Z" });
  const grid = plumeGrid(layout, options);
  const fields: Field[] = [];
  for (let band = 0; band < 3; band++) {
    for (let hours = 1; hours <= options.steps; hours++) {
      const values = plumeField(options, grid, band, hours).map((ug) => ug / 1000);
      fields.push({ name: `${layout} band ${band} +${hours} h`, values, nx: options.nx, ny: options.ny });
    }
  }
  return fields;
}

/** A run's comparisons summed up: the figures docs/benchmarks.md gives per run. */
export interface Summary {
  comparisons: number;
  /** Worst area(GDAL − ours) / area(GDAL) over the comparisons where GDAL draws something. */
  worstMissed: number;
  worstIou: number;
  /** Intersection over union of all comparisons together. */
  overallIou: number;
  /** Comparisons under IoU 0.99, the largest GDAL area (cells²) among them, and how many of them have no saddle GDAL cuts apart. */
  under099: number;
  largestUnder099: number;
  under099WithoutSaddles: number;
  /** Largest area(ours − GDAL) per saddle GDAL cuts apart, over the comparisons that have any (cells²). */
  extraPerSaddle: number;
  /** Total area ours / GDAL's. */
  areaRatio: number;
}

export function summarise(rows: readonly Comparison[]): Summary {
  let inter = 0;
  let union = 0;
  let gdal = 0;
  let ours = 0;
  for (const r of rows) {
    const u = (r.gdal + r.ours) / (1 + r.iou);
    inter += r.iou * u;
    union += u;
    gdal += r.gdal;
    ours += r.ours;
  }
  const under = rows.filter((r) => r.iou < 0.99);
  return {
    comparisons: rows.length,
    worstMissed: Math.max(0, ...rows.filter((r) => r.gdal > 0).map((r) => r.missed / r.gdal)),
    worstIou: Math.min(1, ...rows.map((r) => r.iou)),
    overallIou: union > 0 ? inter / union : 1,
    under099: under.length,
    largestUnder099: Math.max(0, ...under.map((r) => r.gdal)),
    under099WithoutSaddles: under.filter((r) => r.apartSaddles === 0).length,
    extraPerSaddle: Math.max(0, ...rows.filter((r) => r.apartSaddles > 0).map((r) => r.extra / r.apartSaddles)),
    areaRatio: gdal > 0 ? ours / gdal : 1,
  };
}
