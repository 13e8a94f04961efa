/**
 * A model output file opened on one thread and described for another (ModelOutput.description, openModelOutput's
 * `described`, src/model/describedSource.ts): the other thread reads the same fields without opening the file
 * with its format's library (a build worker loads no h5wasm), falls back to that library for what the
 * description cannot read, and names damage as the library does. Files written by netCDF-C (ncgen).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.ts";
import { describedSource } from "../../src/model/describedSource.ts";
import { openNetcdf3 } from "../../src/model/netcdf3.ts";
import { openNetcdf4 } from "../../src/model/netcdf4.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import type { NetcdfSource } from "../../src/model/source.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir, type NcgenKind } from "./helpers.ts";

afterAll(removeTempDirs);

const LAT = [60, 60.5, 61, 61.5, 62];
const LON = [-20, -19.5, -19, -18.5, -18, -17.5];
const TIMES = [1 / 24, 2 / 24, 3 / 24];
const FIELD = "MAX6h_ASH_fl000-200";

async function sample(kind: NcgenKind, attributes: string[] = []): Promise<string> {
  const cells = LAT.length * LON.length;
  const data = Array.from({ length: TIMES.length * cells }, (_, k) => (k % 7 === 0 ? "_" : k % 3 === 0 ? "0" : String(k * 137.5))).join(", ");
  const file = path.join(await tempDir(), "eemep_hour_20190322T000000.nc");
  return ncgen(eemepCdl({ lat: LAT, lon: LON, times: TIMES, fields: [{ name: FIELD, attributes: ['units = "ug/m3"', "_FillValue = -1.f", ...attributes], data }] }), file, kind);
}

/** Opens with the format's library, counting how often. */
function counted(file: string, format: "netcdf4" | "netcdf3"): { open: () => Promise<NetcdfSource>; count: () => number } {
  let opened = 0;
  return {
    open: () => {
      opened++;
      return format === "netcdf4" ? openNetcdf4(file, "run/file.nc") : openNetcdf3(file, "run/file.nc");
    },
    count: () => opened,
  };
}

describe.skipIf(!HAS_NETCDF_BIN)(`a model output file described on one thread, read on another${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("NetCDF-4 with deflate and shuffle: the same fields, the file never opened with h5wasm, through a structured clone", async () => {
    const file = await sample("nc4", ["_DeflateLevel = 4", '_Shuffle = "true"']);
    const here = await openModelOutput(file, "run/file.nc");
    const description = structuredClone(here.description());
    expect([...description.stepPlans.keys()]).toEqual([FIELD]);
    // Sent with every task: its arrays are shared between threads, not copied into each message.
    for (const values of description.wholes.values()) expect(values.buffer).toBeInstanceOf(SharedArrayBuffer);
    const library = counted(file, "netcdf4");
    const source = describedSource(description, file, library.open);
    const reference = await openNetcdf4(file, "run/file.nc");
    try {
      for (let step = 0; step < TIMES.length; step++) {
        const raw = await source.readStep(FIELD, step);
        const expected = await reference.readStep(FIELD, step);
        expect(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).equals(Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength))).toBe(true);
      }
      expect([...description.wholes.keys()].sort()).toEqual(["lat", "lon", "time"]);
      for (const name of description.wholes.keys()) expect([...(await source.readWhole(name))]).toEqual([...(await reference.readWhole(name))]);
      expect(library.count(), "h5wasm never opened the file").toBe(0);
      // As a build worker opens it: the same model, the same converted fields.
      const there = await openModelOutput(file, "run/file.nc", { pointGeometry: false, described: description });
      expect(there.times).toEqual(here.times);
      for (let step = 0; step < TIMES.length; step++) {
        const a = await here.readFieldCells(FIELD, step);
        const b = await there.readFieldCells(FIELD, step);
        expect([...b.nonZero]).toEqual([...a.nonZero]);
        expect(Buffer.from(b.values.buffer).equals(Buffer.from(a.values.buffer))).toBe(true);
      }
      there.close();
    } finally {
      reference.close();
      source.close();
      here.close();
    }
  });

  it("NetCDF-3: no step plans, so steps are read by opening the file once with its library", async () => {
    const file = await sample("classic");
    const here = await openModelOutput(file, "run/file.nc");
    const description = here.description();
    expect(description.stepPlans.size).toBe(0);
    const library = counted(file, "netcdf3");
    const source = describedSource(description, file, library.open);
    const reference = await openNetcdf3(file, "run/file.nc");
    try {
      for (let step = 0; step < TIMES.length; step++) expect([...(await source.readStep(FIELD, step))]).toEqual([...(await reference.readStep(FIELD, step))]);
      expect(library.count()).toBe(1);
    } finally {
      reference.close();
      source.close();
      here.close();
    }
  });

  it("a chunk damaged since the file was described is named as h5wasm names it", async () => {
    const file = await sample("nc4", ["_DeflateLevel = 4"]);
    const here = await openModelOutput(file, "run/file.nc");
    const description = here.description();
    here.close();
    // Break the stored bytes of every chunk: each step's plan still points at them.
    const bytes = await readFile(file);
    for (const chunk of description.stepPlans.get(FIELD)!.chunks) for (let at = chunk.address + 2; at < chunk.address + chunk.size - 4; at++) bytes[at] = bytes[at]! ^ 0xa5;
    await writeFile(file, bytes);
    const there = await openModelOutput(file, "run/file.nc", { pointGeometry: false, described: description });
    try {
      const error = await there.readFieldCells(FIELD, 1).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).where).toBe("run/file.nc");
      expect((error as UserError).message).toMatch(/variable MAX6h_ASH_fl000-200 cannot be read at index 1/);
    } finally {
      there.close();
    }
  });
});
