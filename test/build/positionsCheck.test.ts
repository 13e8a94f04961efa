/**
 * Positions that cannot be right (latitude and longitude swapped): a drawing a continent from the volcano of
 * its run, or the volcano outside every model file's domain, are warnings naming the file; a run drawn where
 * its volcano is gets none. The real volcano.xml of SnapPy (Askja) and KML as forecasters draw it.
 */
import { copyFile, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN } from "../model/helpers.ts";
import { fixedClock, makeWorkspace, PUBLIC_URL, REAL_VOLCANO_XML, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-positions-");
});
afterEach(async () => {
  await ws.cleanup();
});

const warnings = async (folder: string) => {
  const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
  const run = result.report.runs.find((r) => r.folder === folder)!;
  return run.issues.filter((issue) => issue.severity === "warning").map(({ file, message }) => ({ file, message }));
};

describe("positions that cannot be right", () => {
  it("a drawing around its volcano: no warning; the same drawing in lat,lon order: a warning on the KML", async () => {
    const near = await writeKmlRun(ws.runsDir, "near");
    await copyFile(REAL_VOLCANO_XML, path.join(near.dir, "volcano.xml"));
    expect(await warnings("near")).toEqual([]);

    const swapped = await writeKmlRun(ws.runsDir, "swapped", { reftime: "2024-05-02T00:00:00Z" });
    await copyFile(REAL_VOLCANO_XML, path.join(swapped.dir, "volcano.xml"));
    const kml = path.join(swapped.dir, "advisory.kml");
    await writeFile(kml, (await readFile(kml, "utf8")).replace(/(-?\d+\.\d+),(-?\d+\.\d+)/g, "$2,$1"));
    expect(await warnings("swapped")).toEqual([{ file: "swapped/advisory.kml", message: expect.stringMatching(/^its ash areas are [\d,]+ km from the volcano Askja \(65\.03, -16\.75\)$/) }]);
  });

  it.skipIf(!HAS_NETCDF_BIN)(`a volcano outside the domain of every model file: a warning on volcano.xml${HAS_NETCDF_BIN ? "" : ` (${NO_NETCDF_BIN})`}`, async () => {
    const run = await writeKmlRun(ws.runsDir, "askja-model");
    const file = path.join(run.dir, "eemep_hour_20240501T120000.nc");
    // 63–67°N, 20–13°W around Askja; the volcano.xml with its latitude and longitude swapped.
    await ncgen(eemepCdl({ lat: [63, 65, 67], lon: [-20, -17, -15, -13], globals: ['title = "Askja"', 'SIMULATION_START_DATE = "2024-05-01_12:00:00"'] }), file, "nc4");
    await rm(`${file}.cdl`, { force: true });
    const volcano = (await readFile(REAL_VOLCANO_XML, "utf8")).replace('lat="65.03" lon="-16.75"', 'lat="-16.75" lon="65.03"');
    await writeFile(path.join(run.dir, "volcano.xml"), volcano);
    const found = await warnings("askja-model");
    expect(found).toContainEqual({ file: "askja-model/volcano.xml", message: "the volcano Askja (-16.75, 65.03) is outside the domain of every model file (eemep_hour_20240501T120000.nc)" });
  });
});
