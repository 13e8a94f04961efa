/**
 * For the point and route tests: runs with generated model output (EEMEP regular grid, SNAP rotated pole,
 * and an EEMEP grid across the antimeridian), built and served for real, and the model's values read
 * independently of ashcast with netCDF-C's ncdump.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeEemepOutput, writeSnapOutput, type WrittenOutput } from "../../scripts/make-model-output.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { documentAjv } from "./documentAjv.ts";
import { buildSite, makeSite, serve, type Site } from "./serverFixtures.ts";

export const EEMEP_REFTIME = "2019-03-22T12:00:00Z";
export const SNAP_REFTIME = "2019-03-23T00:00:00Z";
export const DATELINE_REFTIME = "2019-03-24T00:00:00Z";
/** The generator's defaults for EEMEP: cell centres at 40 + 0.5 j °N, -45 + 0.5 i °E, 150 × 70 cells, 24 hourly steps. */
export const EEMEP_GRID = { lat0: 40, lon0: -45, res: 0.5, nx: 150, ny: 70, steps: 24 } as const;
/**
 * Across the antimeridian: centres at 45 + 0.5 j °N, 160 + 0.5 i °E (160 … 189.5, i.e. -170.5). The volcano
 * is at 165°E and the run short, so that the ash stays west of 180° (a run whose ash crosses it is built in
 * test/build/antimeridian.test.ts). Routes through ash across the antimeridian are tested on a grid made in
 * memory (route.test.ts).
 */
export const DATELINE_GRID = { lat0: 45, lon0: 160, res: 0.5, nx: 60, ny: 30, steps: 6 } as const;

export interface ModelSite {
  site: Site;
  server: RunningServer;
  eemep: WrittenOutput;
  snap: WrittenOutput;
  dateline: WrittenOutput;
}

async function runFolder(site: Site, name: string): Promise<string> {
  const dir = path.join(site.runsDir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "run.json"), `${JSON.stringify({ type: "Exercise" })}\n`);
  return dir;
}

export async function modelSite(): Promise<ModelSite> {
  const site = await makeSite("ashcast-point-");
  const eemep = await writeEemepOutput({ outDir: await runFolder(site, "2019-03-22-hekla-eemep"), reftime: EEMEP_REFTIME });
  const snap = await writeSnapOutput({ outDir: await runFolder(site, "2019-03-23-hekla-snap"), reftime: SNAP_REFTIME, volcanoXml: true });
  const dateline = await writeEemepOutput({
    outDir: await runFolder(site, "2019-03-24-kiska-eemep"),
    reftime: DATELINE_REFTIME,
    ...DATELINE_GRID,
    volcano: { name: "Kiska", lat: 52.1, lon: 165, altitude: 1220 },
  });
  const result = await buildSite(site);
  if (result.report.counts.errors !== 0 || result.report.counts.published !== 3) throw new Error(`the model runs did not build: ${JSON.stringify(result.report.runs).slice(0, 2000)}`);
  return { site, server: await serve(site), eemep, snap, dateline };
}

/** Every value of a variable as ncdump prints it (full float precision), row-major; NaN for fill values. */
export function ncdumpValues(file: string, variable: string): Float64Array {
  const text = execFileSync("ncdump", ["-p", "9,17", "-v", variable, file], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const start = text.indexOf(`${variable} =`, text.indexOf("data:"));
  const body = text.slice(start + variable.length + 2, text.indexOf(";", start));
  return Float64Array.from(body.split(",").map((item) => (item.trim() === "_" ? Number.NaN : Number(item.trim()))));
}

/**
 * A validator of a body against a component schema of the served OpenAPI document, by ajv (an independent
 * JSON Schema 2020-12 validator, not the zod that made the schema).
 */
export async function documentValidator(server: RunningServer, component: string): Promise<(body: unknown) => string | undefined> {
  const res = await fetch(`${server.url.replace(/\/$/, "")}/openapi.json`, { headers: { "user-agent": "ashcast-test/1" } });
  const doc = (await res.json()) as { components: { schemas: Record<string, unknown> } };
  const id = "https://ashcast.test/openapi.json";
  const ajv = documentAjv(doc, id);
  const validate = ajv.compile({ $ref: `${id}#/components/schemas/${component}` });
  return (body) => (validate(body) ? undefined : ajv.errorsText(validate.errors));
}
