/**
 * scripts/make-model-output.ts: deterministic, realistic files that netCDF-C (ncdump) reads, small by
 * default, and a volcano.xml the project's own reader accepts.
 */
import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mastinRate, writeEemepOutput, writeSnapOutput, type WrittenOutput } from "../../scripts/make-model-output.ts";
import { Issues } from "../../src/build/issues.ts";
import { volcanoXmlReader } from "../../src/build/readers/volcanoXml.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import { HAS_NETCDF_BIN, ncdump, NO_NETCDF_BIN, removeTempDirs, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

let eemep: WrittenOutput;
let snap: WrittenOutput;

beforeAll(async () => {
  const dir = await tempDir();
  eemep = await writeEemepOutput({ outDir: path.join(dir, "a", "2019-03-22-hekla") });
  snap = await writeSnapOutput({ outDir: path.join(dir, "a", "2019-03-22-hekla-snap"), volcanoXml: true });
});

describe("make-model-output", () => {
  it("names files as the models do and writes volcano.xml beside them", async () => {
    expect(path.basename(eemep.file)).toBe("eemep_hour_20190322T120000.nc");
    expect(path.basename(snap.file)).toBe("snap_20190322T120000.nc");
    expect((await readdir(path.dirname(eemep.file))).sort()).toEqual(["eemep_hour_20190322T120000.nc", "volcano.xml"]);
    expect(eemep.times[0]).toBe("2019-03-22T13:00:00Z");
    expect(eemep.times).toHaveLength(24);
  });

  it("is deterministic: the same arguments give the same bytes", async () => {
    const dir = await tempDir();
    const again = await writeEemepOutput({ outDir: path.join(dir, "b", "2019-03-22-hekla") });
    expect((await readFile(again.file)).equals(await readFile(eemep.file))).toBe(true);
    expect((await readFile(again.volcanoXml!)).equals(await readFile(eemep.volcanoXml!))).toBe(true);
    const snapAgain = await writeSnapOutput({ outDir: path.join(dir, "b", "2019-03-22-hekla-snap"), volcanoXml: true });
    expect((await readFile(snapAgain.file)).equals(await readFile(snap.file))).toBe(true);
    // ... and different arguments give different bytes.
    const other = await writeEemepOutput({ outDir: path.join(dir, "c"), volcano: { name: "Katla", lat: 63.63, lon: -19.05, altitude: 1512 } });
    expect((await readFile(other.file)).equals(await readFile(eemep.file))).toBe(false);
  });

  it("keeps the default files small enough to bundle with sample runs", async () => {
    expect((await stat(eemep.file)).size).toBeLessThan(400_000);
    expect((await stat(snap.file)).size).toBeLessThan(400_000);
  });

  it("writes a volcano.xml the volcano.xml reader accepts", async () => {
    const file = eemep.volcanoXml!;
    const issues = new Issues();
    const reading = await volcanoXmlReader.read(
      { name: "volcano.xml", displayPath: "2019-03-22-hekla/volcano.xml", absolutePath: file, size: (await stat(file)).size, bytes: () => readFile(file) },
      issues,
    );
    expect(issues.list).toEqual([]);
    expect(reading).toMatchObject({
      kind: "volcano",
      volcano: {
        name: "Hekla",
        lat: 63.98,
        lon: -19.7,
        altitudeM: 1491,
        modelStartTime: "2019-03-22T12:00:00Z",
        runTimeHours: 24,
        eruptions: [{ start: "2019-03-22T12:00:00Z", end: "2019-03-23T12:00:00Z", bottomM: 0, topM: 12000, rateKgPerS: mastinRate(12000), m63: 0.05 }],
      },
    });
    expect(mastinRate(12000)).toBe(Math.round(2500 * 6 ** (1 / 0.241)));
  });

  it("runs from the command line, and refuses bad arguments", async () => {
    const dir = await tempDir();
    const script = path.join(ROOT, "scripts/make-model-output.ts");
    const { stdout } = await run(process.execPath, [script, "--layout", "snap", "--out", dir, "--nx", "12", "--ny", "10", "--steps", "3", "--res", "1", "--lat0", "55", "--lon0", "-30", "--reftime", "2024-05-01T06:00:00Z", "--volcano", "Askja", "--vlat", "65.03", "--vlon", "-16.75"], { cwd: ROOT });
    expect(stdout.trim()).toBe(path.join(dir, "snap_20240501T060000.nc"));
    const output = await openModelOutput(stdout.trim(), "cli/snap.nc");
    expect([output.layout, output.grid.nx, output.grid.ny, output.times.length, output.title]).toEqual(["SNAP", 12, 10, 3, "Askja 2024-05-01T06:00:00Z"]);
    output.close();
    const failed = await run(process.execPath, [script, "--layout", "wrf", "--out", dir], { cwd: ROOT }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain("--layout must be eemep or snap");
  });
});

describe.skipIf(!HAS_NETCDF_BIN)(`netCDF-C reads the generated files${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("ncdump -h shows the EEMEP dimensions, variables and attributes", () => {
    const header = ncdump(["-h", eemep.file]);
    for (const line of [
      "time = UNLIMITED ; // (24 currently)",
      "lat = 70 ;",
      "lon = 150 ;",
      "double time(time) ;",
      'time:units = "days since 2019-03-22 00:00:00" ;',
      "float lat(lat) ;",
      'lat:units = "degrees_north" ;',
      "float MAX6h_ASH_fl000-200(time, lat, lon) ;",
      'MAX6h_ASH_fl000-200:units = "ug/m3" ;',
      "MAX6h_ASH_fl000-200:_FillValue = 9.96921e+36f ;",
      "float MAX6h_ASH_fl200-350(time, lat, lon) ;",
      "float MAX6h_ASH_fl350-550(time, lat, lon) ;",
      "float COLUMN_ASH_kmax(time, lat, lon) ;",
      ':SIMULATION_START_DATE = "2019-03-22_12:00:00" ;',
      ':title = "Hekla 2019-03-22T12:00:00Z" ;',
    ]) {
      expect(header).toContain(line);
    }
  });

  it("ncdump -h shows the SNAP rotated grid", () => {
    const header = ncdump(["-h", snap.file]);
    for (const line of [
      "x = 150 ;",
      "y = 70 ;",
      'time:units = "hours since 2019-03-22 12:00:00" ;',
      "int projection ;",
      'projection:grid_mapping_name = "rotated_latitude_longitude" ;',
      "projection:grid_north_pole_latitude = 22. ;",
      "projection:grid_north_pole_longitude = 140. ;",
      "float latitude(y, x) ;",
      "float longitude(y, x) ;",
      "float MAX6h_ASH_fl000-200(time, y, x) ;",
      'MAX6h_ASH_fl000-200:grid_mapping = "projection" ;',
    ]) {
      expect(header).toContain(line);
    }
  });

  it("ncdump -s shows deflate compression, and the data netCDF-C reads is the data ashcast reads", async () => {
    expect(ncdump(["-hs", eemep.file])).toContain("MAX6h_ASH_fl000-200:_DeflateLevel = 4 ;");
    const dir = await tempDir();
    const small = await writeEemepOutput({ outDir: dir, nx: 6, ny: 5, steps: 2, res: 0.25, lat0: 63.5, lon0: -20.5 });
    const dump = ncdump(["-p", "9,17", "-v", "time,MAX6h_ASH_fl200-350", small.file]);
    const values = (name: string) =>
      new RegExp(`${name} =([^;]*);`)
        .exec(dump.slice(dump.indexOf("data:")))![1]!
        .split(",")
        .map((text) => Number(text.trim()));
    expect(values("time")).toEqual([13 / 24, 14 / 24].map((day) => Number(day.toPrecision(17))));
    const output = await openModelOutput(small.file, "small.nc");
    const fromAshcast = [...(await output.readField("MAX6h_ASH_fl200-350", 0)), ...(await output.readField("MAX6h_ASH_fl200-350", 1))];
    output.close();
    const fromNetcdfC = values("MAX6h_ASH_fl200-350");
    expect(fromNetcdfC).toHaveLength(2 * 30);
    expect(fromNetcdfC.some((value) => value > 2000)).toBe(true);
    expect(fromAshcast).toEqual(fromNetcdfC.map((value) => Math.fround(Math.fround(value) * 0.001)));
  });
});
