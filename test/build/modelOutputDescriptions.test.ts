/**
 * A one-off build has a worker open model output for its own thread (src/build/modelOutputDescriptions.ts):
 * the file opened with that description is the file opened directly (variables, times, grid, fields); a file
 * changed after it was described, one a worker cannot open, and one nobody asked about are left to the build's
 * thread, whose error names what is wrong. Real NetCDF-4 files written by ncgen (Debian netcdf-bin), real
 * worker threads.
 */
import { utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askForDescription, describedByWorker } from "../../src/build/modelOutputDescriptions.ts";
import { closeStepPool } from "../../src/build/stepPool.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import type { ModelOutput } from "../../src/model/types.ts";
import { eemepCdl, expectUserError, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir } from "../model/helpers.ts";

const savedWorkers = process.env["ASHCAST_WORKERS"];
beforeAll(() => {
  process.env["ASHCAST_WORKERS"] = "1";
});
afterAll(async () => {
  if (savedWorkers === undefined) delete process.env["ASHCAST_WORKERS"];
  else process.env["ASHCAST_WORKERS"] = savedWorkers;
  await closeStepPool();
  await removeTempDirs();
});

async function sampleFile(): Promise<string> {
  const file = path.join(await tempDir("ashcast-described-"), "eemep_hour_20190322T000000.nc");
  const fields = [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data: Array.from({ length: 2 * 12 }, (_, k) => String(k * 100)).join(", ") }];
  await ncgen(eemepCdl({ times: [1 / 24, 2 / 24], fields }), file, "nc4");
  return file;
}

/** What the pipeline takes from an opened file, fields included. */
async function seen(output: ModelOutput) {
  const fields = await Promise.all(output.variables.flatMap((variable) => output.times.map((_, step) => output.readFieldCells(variable.name, step).then((cells) => [...cells.values]))));
  const { nx, ny, domain } = output.grid;
  return { layout: output.layout, variables: output.variables.map((variable) => variable.name), times: output.times, grid: { nx, ny, domain, corner: output.grid.toLonLat(0, 0) }, fields };
}

describe.skipIf(!HAS_NETCDF_BIN)(`describedByWorker${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("gives what opens the file as opening it directly does", async () => {
    const file = await sampleFile();
    void askForDescription(file, "run/eemep.nc");
    const described = await describedByWorker(file);
    expect(described, "a description from the worker").toBeDefined();
    const direct = await openModelOutput(file, "run/eemep.nc");
    const viaWorker = await openModelOutput(file, "run/eemep.nc", { described: described! });
    try {
      expect(await seen(viaWorker)).toEqual(await seen(direct));
    } finally {
      direct.close();
      viaWorker.close();
    }
  });

  it("gives no description of a file that changed after it was described, or that nobody asked about", async () => {
    const file = await sampleFile();
    expect(await askForDescription(file, "run/eemep.nc"), "described early").toBeDefined();
    await utimes(file, new Date(2020, 0, 1), new Date(2020, 0, 1));
    expect(await describedByWorker(file), "that description is for the file before it changed").toBeUndefined();
    expect(await describedByWorker(await sampleFile()), "not asked about").toBeUndefined();
  });

  it("leaves a file the worker cannot open to this thread, whose error names it", async () => {
    const file = path.join(await tempDir("ashcast-described-"), "eemep_hour_20190322T000000.nc");
    await writeFile(file, "<html>502 Bad Gateway</html>");
    void askForDescription(file, "run/eemep.nc");
    expect(await describedByWorker(file)).toBeUndefined();
    await expectUserError(openModelOutput(file, "run/eemep.nc"), "run/eemep.nc", /not a NetCDF file/);
  });

  it("asks no worker when the build has none", async () => {
    process.env["ASHCAST_WORKERS"] = "0";
    try {
      const file = await sampleFile();
      expect(await askForDescription(file, "run/eemep.nc")).toBeUndefined();
      expect(await describedByWorker(file)).toBeUndefined();
    } finally {
      process.env["ASHCAST_WORKERS"] = "1";
    }
  });
});
