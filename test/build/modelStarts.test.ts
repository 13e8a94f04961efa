/**
 * The run's reftime against the model run's start its files state (the file name's stamp, else
 * SIMULATION_START_DATE): a run.json reftime that is not it, or files of two model runs in one folder, are
 * warnings naming both times. Real NetCDF files written by ncgen (Debian netcdf-bin).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN } from "../model/helpers.ts";
import { fixedClock, makeWorkspace, PUBLIC_URL, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-model-starts-");
});
afterEach(async () => {
  await ws.cleanup();
});

const FOLDER = "2019-03-22-hekla";

/** A model file whose name and SIMULATION_START_DATE say `start` (yyyymmddThhmmss). */
async function modelFile(start: string): Promise<void> {
  const folder = path.join(ws.runsDir, FOLDER);
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `eemep_hour_${start}.nc`);
  const [, y, mo, d, h] = /^(\d{4})(\d{2})(\d{2})T(\d{2})/.exec(start)!;
  // All three flight-level bands, as the model writes them (a band left out is warned about).
  const fields = ["fl000-200", "fl200-350", "fl350-550"].map((band) => ({ name: `MAX6h_ASH_${band}`, attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data: Array.from({ length: 2 * 3 * 4 }, (_, k) => k * 100).join(", ") }));
  await ncgen(eemepCdl({ fields, globals: ['title = "Hekla"', `SIMULATION_START_DATE = "${y}-${mo}-${d}_${h}:00:00"`] }), file, "nc4");
  await rm(`${file}.cdl`, { force: true });
}

async function manifest(fields: Record<string, string>): Promise<void> {
  await writeFile(path.join(ws.runsDir, FOLDER, "run.json"), `${JSON.stringify({ type: "Exercise", description: "Hekla: test", ...fields })}\n`);
}

const warningsOf = async () => {
  const result: BuildResult = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
  const run = result.report.runs.find((r) => r.folder === FOLDER)!;
  expect(run.status).toBe("published");
  return run.issues.filter((issue) => issue.severity === "warning").map(({ file, field, message }) => ({ file, field, message }));
};

describe.skipIf(!HAS_NETCDF_BIN)(`the model run's start${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("a reftime in run.json that is the model's start: no warning", async () => {
    await modelFile("20190322T000000");
    await manifest({ reftime: "2019-03-22T00:00:00Z" });
    expect(await warningsOf()).toEqual([]);
  });

  it("a reftime in run.json that is not: a warning on run.json's reftime naming both times", async () => {
    await modelFile("20190322T000000");
    await manifest({ reftime: "2019-04-22T00:00:00Z" });
    expect(await warningsOf()).toEqual([
      { file: `${FOLDER}/run.json`, field: "reftime", message: "reftime 2019-04-22T00:00:00Z is not the start of the model run in eemep_hour_20190322T000000.nc (2019-03-22T00:00:00Z)" },
    ]);
  });

  it("files of two model runs and no reftime: a warning naming both and the one the run is taken from", async () => {
    await modelFile("20190321T000000");
    await modelFile("20190322T000000");
    await manifest({});
    expect(await warningsOf()).toEqual([
      {
        file: `${FOLDER}/eemep_hour_20190321T000000.nc`,
        field: undefined,
        message: "the folder holds model files of different model runs (eemep_hour_20190321T000000.nc: 2019-03-21T00:00:00Z, eemep_hour_20190322T000000.nc: 2019-03-22T00:00:00Z); the run's reftime and map are from eemep_hour_20190321T000000.nc",
      },
    ]);
  });
});
