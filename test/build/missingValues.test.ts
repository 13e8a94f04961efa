/**
 * Model output whose values are missing (the _FillValue, or NaN): a step where no cell has a value would
 * be drawn as "no ash" where nothing is known, so it is an error naming the file, the variable and the
 * steps, and a run published before keeps its last good version; cells missing here and there publish
 * with a warning that says how much; a band the file lacks is said too. Real NetCDF files written by ncgen
 * (Debian netcdf-bin).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN } from "../model/helpers.ts";
import { fixedClock, iso, makeWorkspace, PUBLIC_URL, readRelease, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-missing-");
});
afterEach(async () => {
  await ws.cleanup();
});

const FOLDER = "2019-03-22-hekla";
const FILE = "eemep_hour_20190322T000000.nc";
const STEPS = 4;
const CELLS = 12; // 3 × 4
const TIMES = Array.from({ length: STEPS }, (_, k) => (k + 1) / 24);

/** Two bands of 4 steps (and any `extraBands`); `missing(band, step, cell)` makes a cell the fill value. */
async function writeRun(missing: (band: number, step: number, cell: number) => boolean, extraBands: readonly string[] = []): Promise<void> {
  const folder = path.join(ws.runsDir, FOLDER);
  await mkdir(folder, { recursive: true });
  const data = (band: number) => Array.from({ length: STEPS * CELLS }, (_, k) => (missing(band, Math.floor(k / CELLS), k % CELLS) ? "_" : String(300 + k * 50))).join(", ");
  const fields = ["MAX6h_ASH_fl000-200", "MAX6h_ASH_fl200-350", ...extraBands].map((name, band) => ({ name, attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data: data(band) }));
  await ncgen(eemepCdl({ times: TIMES, fields }), path.join(folder, FILE), "nc4");
  await rm(path.join(folder, `${FILE}.cdl`), { force: true }); // ncgen's input, not a run file
  await writeFile(path.join(folder, "run.json"), `${JSON.stringify({ type: "Real Eruption", reftime: "2019-03-22T00:00:00Z", description: "Hekla: test run of the model chain" })}\n`);
}

const buildNow = (): Promise<BuildResult> => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
const runOf = (result: BuildResult) => result.report.runs.find((r) => r.folder === FOLDER)!;

describe.skipIf(!HAS_NETCDF_BIN)(`missing values in model output${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("a band with no value at any step: an error naming the file, the variable and the steps; the last good version stays served; other runs publish", async () => {
    await writeKmlRun(ws.runsDir, "good-kml", { reftime: "2024-04-01T00:00:00Z" });
    await writeRun(() => false);
    expect(runOf(await buildNow()).status).toBe("published");
    const before = await readRelease(ws.distDir);

    await writeRun((band) => band === 1);
    const result = await buildNow();
    const run = runOf(result);
    expect(run.status).toBe("kept-last-good");
    const errors = run.issues.filter((issue) => issue.severity === "error");
    expect(errors.map((e) => e.message)).toEqual([expect.any(String)]);
    expect(errors[0]!.file).toBe(`${FOLDER}/${FILE}`);
    expect(errors[0]!.message).toMatch(/no cell has a value .* in MAX6h_ASH_fl200-350 at all 4 time steps \(2019-03-22T01:00:00Z … 2019-03-22T04:00:00Z\): maps would show no ash where nothing is known/);
    expect(errors[0]!.fix).toMatch(/last good version stays published/);
    expect(result.report.runs.find((r) => r.folder === "good-kml")!.status).toBe("published");
    const after = await readRelease(ws.distDir);
    const served = (release: typeof before) => Object.values(release.index.runs).find((r) => r.reftime === "2019-03-22T00:00:00Z")?.contentSha256;
    expect(served(before)).toMatch(/^[0-9a-f]{64}$/);
    expect(served(after)).toBe(served(before));
  });

  it("one step without any value is named on its own", async () => {
    await writeRun((band, step) => band === 0 && step === 2);
    const run = runOf(await buildNow());
    expect(run.status).toBe("invalid");
    expect(run.issues.map((issue) => issue.message).join("\n")).toMatch(/in MAX6h_ASH_fl000-200 at 1 of 4 time steps \(2019-03-22T03:00:00Z\)/);
  });

  it("cells missing here and there: published, with a warning that says where and how much", async () => {
    await writeRun((band, step, cell) => band === 0 && step >= 1 && cell < 3);
    const run = runOf(await buildNow());
    expect(run.status).toBe("published");
    const warnings = run.issues.filter((issue) => issue.severity === "warning" && !issue.message.startsWith("no MAX6h_ASH_fl350-550"));
    expect(warnings.map((issue) => [issue.file, issue.message])).toEqual([
      [
        `${FOLDER}/${FILE}`,
        "MAX6h_ASH_fl000-200 has cells without a value (fill value or NaN) at 3 of 4 time steps, up to 25 % of the grid in one: no ash area is drawn there (maps, KML and GeoJSON say how much of the grid has no value) and /point answers them as missing",
      ],
    ]);
  });

  it("a step with cells missing says how much of the grid has no value in its KML and GeoJSON, steps with every value say nothing", async () => {
    // Band 0: 3 of 12 cells missing at steps 1 and 2, 1 of 12 at step 3; band 1 complete.
    await writeRun((band, step, cell) => band === 0 && step >= 1 && cell < (step === 3 ? 1 : 3));
    expect(runOf(await buildNow()).status).toBe("published");
    const release = await readRelease(ws.distDir);
    const resource = (band: string, step: number, extension: string) => {
      const name = Object.keys(release.resources).find((n) => n.endsWith(`-${band}/${iso(Date.parse("2019-03-22T00:00:00Z") + (step + 1) * 3_600_000)}.${extension}`));
      if (!name) throw new Error(`no ${extension} resource of ${band} at step ${step}`);
      return release.resourceKey(name);
    };
    const kml = (band: string, step: number) => release.text(resource(band, step, "kml"));
    const geoJson = async (band: string, step: number) => (await release.json(resource(band, step, "geojson"))) as { features: Array<{ geometry: unknown; properties: Record<string, unknown> }> };

    const step1 = await kml("fl000-200", 1);
    expect(step1).toContain("<description>No model value in 25 % of the grid: no ash area is drawn there.</description>");
    expect(step1).toContain('<ExtendedData><Data name="missing"><value>No model value in 25 % of the grid</value></Data><Data name="missingShare"><value>0.25</value></Data></ExtendedData>');
    expect(await kml("fl000-200", 3)).toContain('<Data name="missing"><value>No model value in 8.4 % of the grid</value></Data>'); // 1/12 = 8.33 %, rounded up
    for (const [band, step] of [["fl000-200", 0], ["fl200-350", 1]] as const) expect(await kml(band, step)).not.toMatch(/No model value|missingShare/);

    const noValue = (await geoJson("fl000-200", 2)).features.filter((f) => f.properties.kind === "no-value");
    expect(noValue).toEqual([
      { type: "Feature", geometry: null, properties: { kind: "no-value", band: "SFC/FL200", share: 0.25, text: "No model value in 25 % of the grid", time: "2019-03-22T03:00:00Z", end: "2019-03-22T04:00:00Z" } },
    ]);
    expect((await geoJson("fl000-200", 0)).features.filter((f) => f.properties.kind === "no-value")).toEqual([]);
    // The whole run's GeoJSON: one such feature per step with missing cells.
    const wholeRun = Object.keys(release.resources).find((n) => n.endsWith("-fl000-200.geojson"))!;
    const whole = (await release.json(release.resourceKey(wholeRun))) as { features: Array<{ properties: Record<string, unknown> }> };
    expect(whole.features.filter((f) => f.properties.kind === "no-value").map((f) => f.properties.time)).toEqual(["2019-03-22T02:00:00Z", "2019-03-22T03:00:00Z", "2019-03-22T04:00:00Z"]);
  });

  it("a flight-level variable the file lacks: published with the bands it has, and a warning naming the band left out", async () => {
    await writeRun(() => false); // two of the three bands
    const run = runOf(await buildNow());
    expect(run.status).toBe("published");
    const warnings = run.issues.filter((issue) => issue.severity === "warning");
    expect(warnings.map((issue) => [issue.file, issue.message, issue.fix])).toEqual([
      [
        `${FOLDER}/${FILE}`,
        "no MAX6h_ASH_fl350-550: FL350/550 has no map, no ash areas and no /point series in this run, only SFC/FL200 and FL200/350",
        expect.stringMatching(/every flight-level variable .*not a forecast of clear air/),
      ],
    ]);
  });

  it("a flight-level variable for a band the product does not have: a warning naming it, the published bands unchanged", async () => {
    await writeRun(() => false, ["MAX6h_ASH_fl550-650"]);
    const run = runOf(await buildNow());
    expect(run.status).toBe("published");
    const warnings = run.issues.filter((issue) => issue.severity === "warning" && !issue.message.startsWith("no MAX6h_ASH_fl350-550"));
    expect(warnings.map((issue) => [issue.file, issue.message])).toEqual([
      [`${FOLDER}/${FILE}`, "MAX6h_ASH_fl550-650 is not a band of this product (SFC/FL200, FL200/350, FL350/550): its ash is in no map, ash area or /point series of this run"],
    ]);
    const release = await readRelease(ws.distDir);
    expect(Object.keys(release.resources).filter((name) => /fl550|650/.test(name))).toEqual([]);
  });
});
