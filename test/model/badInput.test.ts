/**
 * Bad model output: every problem is a UserError naming the file (its display path), the variable when
 * there is one, and a fix; nothing else is thrown, and nothing absurd is allocated.
 */
import { copyFile, readFile, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import h5wasm from "h5wasm/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { formatError, UserError, UserErrors } from "../../src/errors.ts";
import { h5wasmReady } from "../../src/model/netcdf4.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import { MAX_CODED_MG_M3 } from "../../src/formats/concentrationCodes.ts";
import { eemepCdl, expectUserError, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir, type CdlSpec, type NcgenKind } from "./helpers.ts";

afterAll(removeTempDirs);

const WHERE = "2019-03-22-hekla/eemep_hour_20190322T000000.nc";
let dir: string;
let generated: string;

beforeAll(async () => {
  dir = await tempDir();
  generated = (await writeEemepOutput({ outDir: path.join(dir, "generated"), nx: 40, ny: 30, steps: 6, lat0: 55, lon0: -30 })).file;
});

/** Opens the file and reads every step of every variable: the pipeline's whole use of it. */
async function readAll(file: string, where = WHERE): Promise<void> {
  const output = await openModelOutput(file, where);
  try {
    for (const variable of output.variables) {
      for (let t = 0; t < output.times.length; t++) await output.readField(variable.name, t);
    }
  } finally {
    output.close();
  }
}

async function fromCdl(spec: CdlSpec, kind: NcgenKind = "classic", name = `bad-${Math.random().toString(36).slice(2)}.nc`): Promise<string> {
  return ncgen(eemepCdl(spec), path.join(dir, name), kind);
}

describe("files that are not NetCDF, or not whole", () => {
  it("a missing file", async () => {
    await expectUserError(openModelOutput(path.join(dir, "nowhere.nc"), WHERE), WHERE, /cannot be opened \(ENOENT\)/);
  });

  it("an empty file, a text file, wrong magic bytes", async () => {
    const cases: Array<[string, Buffer, RegExp]> = [
      ["empty.nc", Buffer.alloc(0), /not a NetCDF file: it starts with nothing \(the file is empty\)/],
      ["text.nc", Buffer.from("time,lat,lon,value\n0,60,-20,1\n"), /not a NetCDF file: it starts with "time,lat"/],
      ["magic.nc", Buffer.from("XDF\x01\0\0\0\0\0\0\0\0", "latin1"), /not a NetCDF file: it starts with "XDF\\x01/],
      ["short.nc", Buffer.from("\x89HDF", "latin1"), /not a NetCDF file/],
    ];
    for (const [name, bytes, message] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      await expectUserError(openModelOutput(file, WHERE), WHERE, message);
    }
  });

  it("a truncated NetCDF-4 file", async () => {
    const size = (await stat(generated)).size;
    for (const keep of [0.9, 0.5, 0.1, 2000 / size]) {
      const file = path.join(dir, `truncated-${keep}.nc`);
      await copyFile(generated, file);
      await truncate(file, Math.floor(size * keep));
      await expectUserError(readAll(file), WHERE, /cannot be read as NetCDF: HDF5 could not open it \(truncated file/);
    }
  });

  it("an HDF5 magic followed by garbage", async () => {
    const file = path.join(dir, "garbage.nc");
    await writeFile(file, Buffer.concat([Buffer.from("\x89HDF\r\n\x1a\n", "latin1"), Buffer.alloc(5000, 0x5a)]));
    await expectUserError(openModelOutput(file, WHERE), WHERE, /cannot be read as NetCDF: HDF5 could not open it/);
  });

  it("flipped bytes anywhere in a NetCDF-4 file: a UserError or readable data, never anything else", async () => {
    const original = await readFile(generated);
    let refused = 0;
    const positions = [9, 20, 40, 100, 300, 700, 1200, 2000, 3000, 5000, 8000];
    for (let p = 10_000; p < original.length; p += Math.floor(original.length / 25)) positions.push(p);
    for (const position of positions) {
      const bytes = Buffer.from(original);
      for (let k = position; k < Math.min(bytes.length, position + 8); k++) bytes[k] = bytes[k]! ^ 0xa5;
      const file = path.join(dir, `flipped-${position}.nc`);
      await writeFile(file, bytes);
      try {
        await readAll(file);
      } catch (error) {
        // Anything but a UserError would be reported by the pipeline as a bug of ashcast.
        expect(error, `flip at ${position}: ${String(error)}`).toBeInstanceOf(UserError);
        expect((error as UserError).where).toBe(WHERE);
        expect((error as UserError).fix).toBeTruthy();
        refused += 1;
      }
    }
    // The superblock and object headers carry checksums; much of an h5wasm file is unused space.
    expect(refused).toBeGreaterThanOrEqual(3);
  });

  it("a corrupt compressed chunk is refused when its step is read", async () => {
    const original = await readFile(generated);
    // Deflate level 4 streams start with 0x78 0x5e: damage the inside of each one.
    const streams: number[] = [];
    for (let k = 0; k + 1 < original.length; k++) if (original[k] === 0x78 && original[k + 1] === 0x5e) streams.push(k);
    expect(streams.length).toBeGreaterThanOrEqual(4 * 6); // 3 bands and the column load, 6 steps
    let refused = 0;
    for (const start of streams) {
      const bytes = Buffer.from(original);
      for (let k = start + 6; k < start + 14; k++) bytes[k] = bytes[k]! ^ 0xff;
      const file = path.join(dir, `chunk-${start}.nc`);
      await writeFile(file, bytes);
      try {
        await readAll(file);
      } catch (error) {
        expect(error, String(error)).toBeInstanceOf(UserError);
        expect((error as UserError).message).toMatch(/cannot be read as NetCDF: variable MAX6h_ASH_fl\S+ cannot be read at index \d of its first dimension/);
        refused += 1;
      }
    }
    // Every chunk of the three bands (the column load is not read).
    expect(refused).toBeGreaterThanOrEqual(3 * 6);
  });

  it("a NetCDF-4 variable shorter than the time axis (a file written half-way)", async () => {
    await h5wasmReady();
    const file = path.join(dir, "incomplete.nc");
    const out = new h5wasm.File(file, "w");
    const time = out.create_dataset({ name: "time", data: Float64Array.of(1, 2, 3), maxshape: [null], chunks: [16] });
    time.create_attribute("units", "hours since 2019-03-22 00:00:00", null, "S31");
    time.make_scale("time");
    out.create_dataset({ name: "lat", data: Float32Array.of(60, 61) }).make_scale("lat");
    out.create_dataset({ name: "lon", data: Float32Array.of(-20, -19, -18) }).make_scale("lon");
    const field = out.create_dataset({ name: "MAX6h_ASH_fl000-200", data: new Float32Array(12), shape: [2, 2, 3], maxshape: [null, 2, 3], chunks: [1, 2, 3] });
    ["time", "lat", "lon"].forEach((name, index) => field.attach_scale(index, `/${name}`));
    field.create_attribute("units", "ug/m3", null, "S5");
    out.close();
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 holds 2 × 2 × 3 values, but its dimensions are 3 × 2 × 3: the file is incomplete/);
  });

  it("plain HDF5 without netCDF dimensions (no dimension scales)", async () => {
    await h5wasmReady();
    const file = path.join(dir, "plain.h5");
    const out = new h5wasm.File(file, "w");
    out.create_dataset({ name: "time", data: Float64Array.of(1, 2) }).create_attribute("units", "hours since 2019-03-22 00:00:00", null, "S31");
    out.create_dataset({ name: "MAX6h_ASH_fl000-200", data: new Float32Array(12), shape: [2, 2, 3] }).create_attribute("units", "ug/m3", null, "S5");
    out.close();
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200's first dimension "phony_dim_2" has no time coordinate/);
  });

  it("a NetCDF-4 grid declared absurdly large is refused before anything is allocated", async () => {
    await h5wasmReady();
    const file = path.join(dir, "huge4.nc");
    const out = new h5wasm.File(file, "w");
    const time = out.create_dataset({ name: "time", data: Float64Array.of(1), maxshape: [null], chunks: [16] });
    time.create_attribute("units", "hours since 2019-03-22 00:00:00", null, "S31");
    time.make_scale("time");
    const lat = out.create_dataset({ name: "lat", data: new Float32Array(0), shape: [0], maxshape: [null], chunks: [1024] });
    lat.resize([100_000]);
    lat.make_scale("lat");
    const lon = out.create_dataset({ name: "lon", data: new Float32Array(0), shape: [0], maxshape: [null], chunks: [1024] });
    lon.resize([100_000]);
    lon.make_scale("lon");
    const field = out.create_dataset({ name: "MAX6h_ASH_fl000-200", data: new Float32Array(0), shape: [0, 0, 0], maxshape: [null, null, null], chunks: [1, 512, 512] });
    field.resize([1, 100_000, 100_000]);
    ["time", "lat", "lon"].forEach((name, index) => field.attach_scale(index, `/${name}`));
    field.create_attribute("units", "ug/m3", null, "S5");
    out.close();
    expect((await stat(file)).size).toBeLessThan(100_000);
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 is declared on a grid of 100000 × 100000 = 10000000000 cells, more than the 50000000/);
  });
});

describe.skipIf(!HAS_NETCDF_BIN)(`bad NetCDF-3 files made with ncgen${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("a truncated classic file", async () => {
    const file = await fromCdl({}, "classic", "truncated3.nc");
    const size = (await stat(file)).size;
    await truncate(file, size - 10);
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 needs \d+: it is truncated/);
    await truncate(file, 60);
    await expectUserError(openModelOutput(file, WHERE), WHERE, /ends inside its header: it is truncated/);
  });

  it("a corrupt classic header", async () => {
    const file = await fromCdl({}, "classic", "corrupt3.nc");
    const bytes = await readFile(file);
    bytes.writeUInt32BE(0x0b0b0b0b, 8); // the dimension list tag
    await writeFile(file, bytes);
    await expectUserError(openModelOutput(file, WHERE), WHERE, /NetCDF-3 header is corrupt/);
  });

  it("CDF-5 is recognised and refused with a conversion", async () => {
    const file = await fromCdl({}, "cdf5", "cdf5.nc");
    const error = await expectUserError(openModelOutput(file, WHERE), WHERE, /CDF-5/);
    expect(error.fix).toContain("nccopy -k nc4");
  });

  it("flight-level variable with longitude before latitude", async () => {
    const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", dims: "time, lon, lat", attributes: ['units = "ug/m3"'] }] });
    const error = await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 has dimensions \(time, lon, lat\): longitude before latitude, expected \(time, lat, lon\)/);
    expect(error.fix).toContain("ncpdq -a time,lat,lon");
  });

  it("flight-level variable with time last", async () => {
    const file = await fromCdl({ timeSize: 2, fields: [{ name: "MAX6h_ASH_fl000-200", dims: "lat, lon, time", attributes: ['units = "ug/m3"'] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 has dimensions \(lat, lon, time\): time must come first/);
  });

  it("flight-level variable of the wrong rank", async () => {
    const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl200-350", dims: "lat, lon", attributes: ['units = "ug/m3"'] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl200-350 has 2 dimensions \(lat, lon\), expected 3/);
    const four = await fromCdl({ dimensions: "lev = 2 ;", fields: [{ name: "MAX6h_ASH_fl350-550", dims: "time, lev, lat, lon", attributes: ['units = "ug/m3"'] }] });
    const error = await expectUserError(openModelOutput(four, WHERE), WHERE, /variable MAX6h_ASH_fl350-550 has 4 dimensions \(time, lev, lat, lon\), expected 3/);
    expect(error.fix).toMatch(/drop a dimension of length 1 \(e\.g\. `ncwa -O -a lev in\.nc out\.nc`\)/);
  });

  it("flight-level variables on different dimensions", async () => {
    const file = await fromCdl({
      dimensions: "lon2 = 4 ;",
      fields: [
        { name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"'] },
        { name: "MAX6h_ASH_fl200-350", dims: "time, lat, lon2", attributes: ['units = "ug/m3"'] },
      ],
    });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl200-350 has dimensions \(time, lat, lon2\) but MAX6h_ASH_fl000-200 has \(time, lat, lon\)/);
  });

  it("a grid dimension without coordinates", async () => {
    const file = await fromCdl({ dimensions: "cell = 4 ;", fields: [{ name: "MAX6h_ASH_fl000-200", dims: "time, lat, cell", attributes: ['units = "ug/m3"'] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /cannot find where the grid of MAX6h_ASH_fl000-200 lies/);
    const none = await fromCdl({ noCoordinates: true });
    await expectUserError(openModelOutput(none, WHERE), WHERE, /cannot find where the grid of MAX6h_ASH_fl000-200 lies/);
  });

  it("no time coordinate", async () => {
    const file = await fromCdl({ noTimeVariable: true });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /first dimension "time" has no time coordinate/);
  });

  it("a grid of one row", async () => {
    const file = await fromCdl({ lat: [60], fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"'] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /grid of 4 × 1 cells; at least 2 × 2 are needed/);
  });

  it("latitude axis that is not monotonic", async () => {
    const file = await fromCdl({ lat: [60, 62, 61] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable lat is not a latitude axis/);
  });

  it("no flight-level variable at all", async () => {
    const file = await fromCdl({ fields: [{ name: "D3_ug_ASH", attributes: ['units = "ug/m3"'] }] });
    const error = await expectUserError(openModelOutput(file, WHERE), WHERE, /no flight-level variable: expected at least one of MAX6h_ASH_fl000-200, MAX6h_ASH_fl200-350, MAX6h_ASH_fl350-550 \(its variables: time, lat, lon, D3_ug_ASH\)/);
    expect(error.fix).toContain("MAX6h_ASH_fl");
  });

  it("unknown or missing units", async () => {
    for (const units of ["ppm", "ug/m2", "Bq/m3"]) {
      const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl200-350", attributes: [`units = "${units}"`] }] });
      const error = await expectUserError(openModelOutput(file, WHERE), WHERE, new RegExp(`variable MAX6h_ASH_fl200-350 has units "${units.replace("/", "\\/")}", which ashcast cannot convert to mg/m³`));
      expect(error.fix).toContain("ug/m3");
    }
    const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl200-350", attributes: ["_FillValue = -1.f"] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl200-350 has no units attribute/);
  });

  it("every variable's problems together, each with its own fix, not only the first", async () => {
    const data = Array.from({ length: 2 * 3 * 4 }, () => "100").join(", ");
    const file = await fromCdl({
      fields: [
        { name: "MAX6h_ASH_fl000-200", attributes: ["_FillValue = -1.f"], data },
        { name: "MAX6h_ASH_fl200-350", dims: "time, lon, lat", attributes: ['units = "ppm"'] },
        { name: "MAX6h_ASH_fl350-550", dims: "time, lat", attributes: ['units = "ug/m3"'] },
      ],
    });
    const error = await expectUserError(openModelOutput(file, WHERE), WHERE, /variable MAX6h_ASH_fl200-350 has dimensions \(time, lon, lat\) but MAX6h_ASH_fl000-200 has \(time, lat, lon\)/);
    expect(error).toBeInstanceOf(UserErrors);
    // The structure is checked before the attributes: the units come once the dimensions are mended.
    expect((error as UserErrors).problems.map((p) => p.message)).toEqual([
      "variable MAX6h_ASH_fl200-350 has dimensions (time, lon, lat) but MAX6h_ASH_fl000-200 has (time, lat, lon)",
      "variable MAX6h_ASH_fl350-550 has 2 dimensions (time, lat), expected 3: (time, lat, lon) or (time, y, x)",
    ]);
    const mended = await fromCdl({
      fields: [
        { name: "MAX6h_ASH_fl000-200", attributes: ["_FillValue = -1.f"], data },
        { name: "MAX6h_ASH_fl200-350", attributes: ['units = "ppm"'], data },
        { name: "MAX6h_ASH_fl350-550", attributes: ['units = "Bq/m3"'], data },
      ],
    });
    const both = (await expectUserError(openModelOutput(mended, WHERE), WHERE, /MAX6h_ASH_fl000-200 has no units attribute/)) as UserErrors;
    expect(both.problems.map((p) => p.message)).toEqual([
      "variable MAX6h_ASH_fl000-200 has no units attribute",
      'variable MAX6h_ASH_fl200-350 has units "ppm", which ashcast cannot convert to mg/m³',
      'variable MAX6h_ASH_fl350-550 has units "Bq/m3", which ashcast cannot convert to mg/m³',
    ]);
    expect(both.problems.map((p) => p.fix)).toEqual([expect.stringMatching(/give MAX6h_ASH_fl000-200 its units/), expect.stringMatching(/mass concentration/), expect.stringMatching(/mass concentration/)]);
    expect(formatError(both).split("\n").filter((line) => line.startsWith(WHERE))).toHaveLength(3);
  });

  it("an unsupported calendar, naming time:calendar", async () => {
    for (const calendar of ["noleap", "360_day", "julian"]) {
      const file = await fromCdl({ timeAttributes: ['time:units = "days since 2019-03-22 00:00:00"', `time:calendar = "${calendar}"`] });
      const error = await expectUserError(openModelOutput(file, WHERE), WHERE, new RegExp(`time:calendar is "${calendar}"`));
      expect(error.fix).toMatch(/Gregorian/);
    }
  });

  it("time units that are not a CF time, or missing", async () => {
    const file = await fromCdl({ timeAttributes: ['time:units = "hours"'] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /time:units is "hours", not a CF time/);
    const none = await fromCdl({ timeAttributes: ['time:long_name = "time"'] });
    await expectUserError(openModelOutput(none, WHERE), WHERE, /time has no units attribute/);
  });

  it("times out of order, or missing", async () => {
    const file = await fromCdl({ times: [0.5, 0.25] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /variable time is not increasing: index 1 \(2019-03-22T06:00:00Z\) is not after index 0 \(2019-03-22T12:00:00Z\)/);
    const missing = await fromCdl({ times: [0.5, 9.969209968386869e36] });
    await expectUserError(openModelOutput(missing, WHERE), WHERE, /variable time has no valid value at index 1/);
  });

  it("negative values, naming the variable and time index", async () => {
    const data = Array.from({ length: 24 }, (_, k) => (k === 17 ? -5 : k)).join(", ");
    const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"'], data }] });
    const output = await openModelOutput(file, WHERE);
    await output.readField("MAX6h_ASH_fl000-200", 0); // step 0 is fine
    await expectUserError(output.readField("MAX6h_ASH_fl000-200", 1), WHERE, /variable MAX6h_ASH_fl000-200 has a negative concentration \(-5 ug\/m3\) at time index 1 \(2019-03-22T01:30:00Z\), row 1, column 1/);
    output.close();
    // Negative after add_offset, too.
    const packed = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", type: "short", attributes: ['units = "mg/m3"', "scale_factor = 1.f", "add_offset = -10.f"], data: Array.from({ length: 24 }, () => 5).join(", ") }] });
    await expectUserError(readAll(packed), WHERE, /variable MAX6h_ASH_fl000-200 has a negative concentration \(-5 mg\/m3; stored as 5\) at time index 0/);
  });

  it("infinite values, naming the variable and time index", async () => {
    const data = Array.from({ length: 24 }, (_, k) => (k === 3 ? "Infinity" : k === 5 ? "NaN" : String(k))).join(", ");
    const file = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl350-550", type: "double", attributes: ['units = "ug/m3"'], data }] });
    await expectUserError(readAll(file), WHERE, /variable MAX6h_ASH_fl350-550 has an infinite or unrepresentable concentration \(Infinity ug\/m3\) at time index 0 \(2019-03-22T00:30:00Z\), row 0, column 3/);
    // Finite in the file but beyond float32 once in mg/m3.
    const huge = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl350-550", type: "double", attributes: ['units = "kg/m3"'], data: Array.from({ length: 24 }, () => "1e35").join(", ") }] });
    await expectUserError(readAll(huge), WHERE, /infinite or unrepresentable concentration \(1e\+35 kg\/m3\) at time index 0/);
    // Finite in float32 but above the point-query grid's scale, which would read it lower: refused too, in
    // floats (read by the fast path) as in doubles; 1e25 mg/m³, below the scale's top, is read.
    const top = MAX_CODED_MG_M3;
    const above = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl350-550", type: "float", attributes: ['units = "mg/m3"'], data: Array.from({ length: 24 }, (_, k) => (k === 7 ? "1e26" : "1")).join(", ") }] });
    await expectUserError(readAll(above), WHERE, /infinite or unrepresentable concentration \(1\.\d+e\+26 mg\/m3\) at time index 0 \(2019-03-22T00:30:00Z\), row 1, column 3: ashcast reads up to 2\.79512e\+25 mg\/m³/);
    const doubleAbove = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl350-550", type: "double", attributes: ['units = "mg/m3"'], data: Array.from({ length: 24 }, () => String(top * 1.01)).join(", ") }] });
    await expectUserError(readAll(doubleAbove), WHERE, /infinite or unrepresentable concentration/);
    const atTop = await fromCdl({ fields: [{ name: "MAX6h_ASH_fl350-550", type: "double", attributes: ['units = "mg/m3"'], data: Array.from({ length: 24 }, () => "1e25").join(", ") }] });
    await readAll(atTop);
  });

  it("a huge declared grid (classic, no data written) is refused before anything is allocated", async () => {
    // Zero records: ncgen writes only the header, which declares 10^10 cells per step.
    const cdl = `netcdf huge {
dimensions:
  time = UNLIMITED ;
  lat = 100000 ;
  lon = 100000 ;
variables:
  double time(time) ;
    time:units = "hours since 2019-03-22 00:00:00" ;
  float MAX6h_ASH_fl000-200(time, lat, lon) ;
    MAX6h_ASH_fl000-200:units = "ug/m3" ;
}
`;
    const huge = await ncgen(cdl, path.join(dir, "huge3.nc"), "64-bit-offset");
    expect((await stat(huge)).size).toBeLessThan(10_000);
    await expectUserError(openModelOutput(huge, WHERE), WHERE, /variable MAX6h_ASH_fl000-200 is declared on a grid of 100000 × 100000 = 10000000000 cells/);
  });

  it("more than 10,000 time steps", async () => {
    const times = Array.from({ length: 10_001 }, (_, k) => k);
    const file = await fromCdl({ times, timeAttributes: ['time:units = "hours since 2019-03-22 00:00:00"'], lat: [60, 61], lon: [0, 1], fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"'] }] });
    await expectUserError(openModelOutput(file, WHERE), WHERE, /dimension time has 10001 time steps, more than the 10000 ashcast reads/);
  });
});
