/**
 * A model output file with several problems: each is its own error of the run, naming the file, with its
 * own fix, so that a forecaster mends the file once; the other runs publish. A real NetCDF file (ncgen).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN } from "../model/helpers.ts";
import { fixedClock, makeWorkspace, PUBLIC_URL, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-problems-");
});
afterEach(async () => {
  await ws.cleanup();
});

describe.skipIf(!HAS_NETCDF_BIN)(`several problems in one model output${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("are reported together, one error each with its fix", async () => {
    const folder = path.join(ws.runsDir, "2019-03-22-hekla");
    const file = "eemep_hour_20190322T000000.nc";
    await mkdir(folder, { recursive: true });
    const data = Array.from({ length: 2 * 3 * 4 }, () => "300").join(", ");
    const fields = [
      { name: "MAX6h_ASH_fl000-200", attributes: ["_FillValue = -1.f"], data },
      { name: "MAX6h_ASH_fl200-350", attributes: ['units = "ppm"'], data },
      { name: "MAX6h_ASH_fl350-550", attributes: ['units = "ug/m3"'], data },
    ];
    await ncgen(eemepCdl({ fields }), path.join(folder, file), "nc4");
    await rm(path.join(folder, `${file}.cdl`), { force: true });
    await writeFile(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: "2019-03-22T00:00:00Z", description: "Hekla: test run" })}\n`);
    await writeKmlRun(ws.runsDir, "good-kml", { reftime: "2024-04-01T00:00:00Z" });

    const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
    const run = result.report.runs.find((r) => r.folder === "2019-03-22-hekla")!;
    expect(run.status).toBe("invalid");
    const errors = run.issues.filter((issue) => issue.severity === "error");
    expect(errors.map((e) => [e.file, e.message])).toEqual([
      [`2019-03-22-hekla/${file}`, "variable MAX6h_ASH_fl000-200 has no units attribute"],
      [`2019-03-22-hekla/${file}`, 'variable MAX6h_ASH_fl200-350 has units "ppm", which ashcast cannot convert to mg/m³'],
    ]);
    expect(errors.map((e) => e.fix)).toEqual([expect.stringMatching(/give MAX6h_ASH_fl000-200 its units/), expect.stringMatching(/mass concentration ashcast knows/)]);
    expect(result.report.runs.find((r) => r.folder === "good-kml")!.status).toBe("published");
  });

  it("a .nc file that is not NetCDF (an error page, an empty copy) is an error naming it: the run keeps its last good version with the model output", async () => {
    const folder = path.join(ws.runsDir, "2019-03-22-hekla");
    const file = path.join(folder, "eemep_hour_20190322T000000.nc");
    await mkdir(folder, { recursive: true });
    const data = Array.from({ length: 2 * 3 * 4 }, () => "300").join(", ");
    const fields = ["MAX6h_ASH_fl000-200", "MAX6h_ASH_fl200-350", "MAX6h_ASH_fl350-550"].map((name) => ({ name, attributes: ['units = "ug/m3"'], data }));
    await ncgen(eemepCdl({ fields }), file, "nc4");
    await rm(`${file}.cdl`, { force: true });
    await writeFile(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: "2019-03-22T00:00:00Z", description: "Hekla: test run" })}\n`);
    const buildNow = () => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
    expect((await buildNow()).report.runs[0]!.status).toBe("published");

    for (const [bytes, start] of [["<html>404 Not Found</html>", /it starts with .*<html>/], ["", /it starts with nothing|empty/]] as const) {
      await writeFile(file, bytes);
      const run = (await buildNow()).report.runs.find((r) => r.folder === "2019-03-22-hekla")!;
      expect(run.status).toBe("kept-last-good");
      const errors = run.issues.filter((issue) => issue.severity === "error");
      expect(errors.map((e) => e.file)).toEqual(["2019-03-22-hekla/eemep_hour_20190322T000000.nc"]);
      expect(errors[0]!.message).toMatch(/^not a NetCDF file/);
      expect(errors[0]!.message).toMatch(start);
    }
  });
});
