/**
 * /point on SNAP grids given only as 2-D latitude/longitude: SNAP's `latitude_longitude` mapping, and a
 * rotated pole whose x/y are bare cell indices, answer the file's values at its own centres (read with
 * ncdump); a grid of no two axes is published with a warning that names the file, and /point and /route say
 * so, not that the run's ash areas are forecasters' drawings (which they say for a run of drawings).
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSnapOutput, type WrittenOutput } from "../../scripts/make-model-output.ts";
import type { BuildResult } from "../../src/build/build.ts";
import type { PointAnswer } from "../../src/contract/queries.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { grid2dCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir } from "../model/helpers.ts";
import { ncdumpValues } from "./pointFixtures.ts";
import { addRun, buildSite, expectProblem, http, makeSite, serve, type Site } from "./serverFixtures.ts";

const UA = { "user-agent": "ashcast-test/1 point-grids" };
const GEOGRAPHIC = "2019-04-01T00:00:00Z";
const INDEX_AXES = "2019-04-02T00:00:00Z";
const SHEARED = "2019-04-03T00:00:00Z";
const DRAWINGS = "2019-04-04T00:00:00Z";
const SIZE = { nx: 40, ny: 30, steps: 6, res: 0.5, lat0: 55, lon0: -35 } as const;

let site: Site;
let server: RunningServer;
let result: BuildResult;
const written: Record<string, WrittenOutput> = {};

async function runFolder(name: string, reftime: string, description?: string): Promise<string> {
  const dir = path.join(site.runsDir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "run.json"), `${JSON.stringify({ type: "Exercise", reftime, ...(description ? { description } : {}) })}\n`);
  return dir;
}

/** SNAP-shaped, 2-D latitude/longitude sheared by a tenth of a cell per column: no two axes make it. */
const shearedCdl = () => grid2dCdl({ xs: [-20, -19, -18, -17], ys: [60, 61, 62], toLonLat: (x, y) => [x, y + 0.1 * (x + 20)], steps: 2, value: (k) => k * 100 });

beforeAll(async () => {
  site = await makeSite("ashcast-point-grids-");
  written.geographic = await writeSnapOutput({ outDir: await runFolder("2019-04-01-latlon", GEOGRAPHIC), reftime: GEOGRAPHIC, ...SIZE, snapGrid: "latitude_longitude" });
  written.indexAxes = await writeSnapOutput({ outDir: await runFolder("2019-04-02-index-axes", INDEX_AXES), reftime: INDEX_AXES, ...SIZE, snapGrid: "rotated-index-axes" });
  if (HAS_NETCDF_BIN) {
    const made = await ncgen(shearedCdl(), path.join(await tempDir("ashcast-sheared-"), "snap_20190403T000000.nc"));
    const dir = await runFolder("2019-04-03-sheared", SHEARED, "A grid no two axes make");
    await copyFile(made, path.join(dir, path.basename(made)));
  }
  await addRun(site, "2019-04-04-drawings", DRAWINGS);
  result = await buildSite(site);
  server = await serve(site);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await site?.cleanup();
  await removeTempDirs();
});

async function point(query: string): Promise<PointAnswer> {
  const res = await http(server, `/point?${query}`, { headers: UA });
  expect(res.status, res.text()).toBe(200);
  return res.json() as PointAnswer;
}

/** The plume's cell at the run's last step, and a corner. */
function cellsToAsk(field: Float64Array): number[] {
  const cells = SIZE.nx * SIZE.ny;
  let best = 0;
  for (let k = (SIZE.steps - 1) * cells; k < field.length; k++) if (field[k]! > field[best]!) best = k;
  return [best % cells, 0, cells - 1];
}

describe.skipIf(!HAS_NETCDF_BIN)(`SNAP grids given as 2-D arrays${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("the build publishes all four, and warns only about the grid no place can be looked up in", () => {
    expect(result.report.counts.errors, JSON.stringify(result.report.runs.flatMap((run) => run.issues))).toBe(0);
    expect(result.report.counts.published).toBe(4);
    // These files hold one flight-level band: the warnings that the other two are left out are not this test's.
    const warnings = result.report.runs.flatMap((run) => run.issues.filter((issue) => issue.severity === "warning" && !/^no MAX6h_ASH_fl/.test(issue.message)));
    expect(warnings).toEqual([
      {
        severity: "warning",
        file: "2019-04-03-sheared/snap_20190403T000000.nc",
        message: "its 2-D latitude/longitude are not a product of two axes, so /point and /route cannot look places up in its grid (its maps and ash areas are published)",
        fix: expect.stringMatching(/regular latitude\/longitude or rotated-pole grid/),
      },
    ]);
  });

  for (const [name, reftime] of [["geographic", GEOGRAPHIC], ["indexAxes", INDEX_AXES]] as const) {
    it(`${name === "geographic" ? "latitude_longitude" : "a rotated pole with x/y as bare indices"}: the file's values at its own centres`, async () => {
      const file = written[name]!.file;
      const lon = ncdumpValues(file, "longitude");
      const lat = ncdumpValues(file, "latitude");
      const field = ncdumpValues(file, "MAX6h_ASH_fl000-200");
      const cells = SIZE.nx * SIZE.ny;
      expect(Math.max(...field) / 1000).toBeGreaterThan(2); // the plume is there to be found
      for (const k of cellsToAsk(field)) {
        const answer = await point(`lat=${lat[k]}&lon=${lon[k]}&reftime=${reftime}`);
        const series = answer.series[0]!;
        expect(series.model).toBe("SNAP");
        expect((series as { cell?: unknown }).cell).toEqual({ x: k % SIZE.nx, y: Math.floor(k / SIZE.nx) });
        series.steps.forEach((step, t) => {
          const model = field[t * cells + k]! / 1000;
          expect(step.value!).toBeGreaterThanOrEqual(model * (1 - 1e-6));
          expect(step.value!).toBeLessThanOrEqual(Math.max(model * 1.0011, model + 0.001));
        });
      }
    });
  }

  it("a place outside the latitude_longitude grid is outside its domain", async () => {
    const problem = expectProblem(await http(server, `/point?lat=10&lon=-35&reftime=${GEOGRAPHIC}`, { headers: UA }), 422);
    expect(problem.detail).toMatch(/^lat 10, lon -35 is outside the domain of every model of run 2019-04-01T00:00:00Z/);
    // Where the domain is, to the cells' outer edges (centres 55 … 69.5 °N, 35 … 15.5 °W, every 0.5°).
    expect(problem.detail).toContain(": lat 54.75 to 69.75, lon -35.25 to -15.25)");
  });

  const askRoute = (reftime: string) => {
    const body = JSON.stringify({ type: "Feature", properties: {}, geometry: { type: "LineString", coordinates: [[-20, 60, 3000], [-17, 62, 3000]] } });
    return http(server, `/route?reftime=${reftime}`, { method: "POST", headers: { ...UA, "content-type": "application/geo+json", "content-length": String(Buffer.byteLength(body)) }, body });
  };

  it("on the sheared grid, /point and /route say the model's grid cannot be looked up", async () => {
    const expected = `the run ${SHEARED} has no model output to query: its model output is on a grid no place can be looked up in (the build report names the file and why); use /resources for its ash areas`;
    expect(expectProblem(await http(server, `/point?lat=61&lon=-19&reftime=${SHEARED}`, { headers: UA }), 422).detail).toBe(expected);
    expect(expectProblem(await askRoute(SHEARED), 422).detail).toBe(expected.replace("to query", "to follow a route through"));
  });

  it("on a run of forecasters' drawings, they say so", async () => {
    const expected = `the run ${DRAWINGS} has no model output to query: its ash areas are forecasters' drawings; use /resources for its ash areas`;
    expect(expectProblem(await http(server, `/point?lat=63.98&lon=-19.7&reftime=${DRAWINGS}`, { headers: UA }), 422).detail).toBe(expected);
    expect(expectProblem(await askRoute(DRAWINGS), 422).detail).toBe(expected.replace("to query", "to follow a route through"));
  });
});
