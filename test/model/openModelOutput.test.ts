/**
 * Reading model output through the one API, whatever the format and layout: generated EEMEP and SNAP
 * NetCDF-4 files, NetCDF-4 written by netCDF-C (shuffle + deflate), NetCDF-3 classic and 64-bit offset.
 */
import path from "node:path";
import h5wasm, { type Dataset } from "h5wasm/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plumeField, plumeGrid, resolveOptions, writeEemepOutput, writeSnapOutput } from "../../scripts/make-model-output.ts";
import { arcDegrees, rotatedToGeographic } from "../../src/model/gridMapping.ts";
import { h5wasmReady } from "../../src/model/netcdf4.ts";
import { isModelOutputFile, modelFileFormat, openModelOutput } from "../../src/model/openModelOutput.ts";
import { FLIGHT_LEVEL_BANDS, type ModelOutput } from "../../src/model/types.ts";
import { eemepCdl, expectUserError, grid2dCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, rotatedByVectors, SMALL_LAT, SMALL_LON, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

const HOUR = 3_600_000;
const hourly = (first: string, count: number) => Array.from({ length: count }, (_, k) => new Date(Date.parse(first) + k * HOUR).toISOString().replace(".000Z", "Z"));

describe("isModelOutputFile", () => {
  it("recognises NetCDF-4/HDF5 and NetCDF-3 by their first bytes", () => {
    expect(isModelOutputFile(Buffer.from("\x89HDF\r\n\x1a\n\0\0", "latin1"))).toBe(true);
    expect(isModelOutputFile(Buffer.from("CDF\x01\0\0\0\0", "latin1"))).toBe(true);
    expect(isModelOutputFile(Buffer.from("CDF\x02", "latin1"))).toBe(true);
    expect(isModelOutputFile(Buffer.from("CDF\x05", "latin1"))).toBe(true);
    expect(modelFileFormat(Buffer.from("CDF\x05", "latin1"))).toBe("cdf5");
    for (const text of ["", "CDF", "CDF\x03", "\x89HDF\r\n\x1a", "<?xml version", "PK\x03\x04", "\x89PNG\r\n\x1a\n"]) {
      expect(isModelOutputFile(Buffer.from(text, "latin1")), JSON.stringify(text)).toBe(false);
    }
  });
});

describe("generated EEMEP output (NetCDF-4, regular lat/lon)", () => {
  let output: ModelOutput;
  let file: string;
  const options = resolveOptions({ outDir: "unused" });

  beforeAll(async () => {
    const dir = await tempDir();
    file = (await writeEemepOutput({ outDir: path.join(dir, "2019-03-22-hekla") })).file;
    output = await openModelOutput(file, "2019-03-22-hekla/eemep_hour_20190322T120000.nc");
  });
  afterAll(() => output?.close());

  it("has the layout, times, title and simulation start", () => {
    expect(output.layout).toBe("EEMEP");
    expect(output.times).toEqual(hourly("2019-03-22T13:00:00Z", 24));
    expect(output.simulationStart).toBe("2019-03-22T12:00:00Z");
    expect(output.title).toBe("Hekla 2019-03-22T12:00:00Z");
    expect(output.variables.map((variable) => [variable.name, variable.band.id, variable.units])).toEqual(FLIGHT_LEVEL_BANDS.map((band) => [band.variable, band.id, "ug/m3"]));
  });

  it("maps grid coordinates linearly on the 1-D axes", () => {
    const { grid } = output;
    expect([grid.kind, grid.nx, grid.ny]).toEqual(["regular", 150, 70]);
    expect(grid.toLonLat(0, 0)).toEqual([-45, 40]);
    expect(grid.toLonLat(149, 69)).toEqual([29.5, 74.5]);
    expect(grid.toLonLat(51, 48)).toEqual([-19.5, 64]); // the cell nearest Hekla
    expect(grid.toLonLat(10.5, 20.25)).toEqual([-39.75, 50.125]);
    expect(grid.toLonLat(-0.5, -0.5)).toEqual([-45.25, 39.75]);
    expect(grid.toLonLat(149.5, 69.5)).toEqual([29.75, 74.75]);
    expect(grid.domain).toEqual({ north: 74.5, south: 40, east: 29.5, west: -45 });
    expect(grid.cellDegrees).toBe(0.5);
  });

  it("returns the values written, converted from µg/m³ to mg/m³ exactly", async () => {
    const grid = plumeGrid("eemep", options);
    for (const t of [0, 11, 23]) {
      for (let band = 0; band < 3; band++) {
        const written = plumeField(options, grid, band, t + 1);
        const field = await output.readField(FLIGHT_LEVEL_BANDS[band]!.variable, t);
        expect(field).toBeInstanceOf(Float32Array);
        expect(field.length).toBe(150 * 70);
        const expected = Float32Array.from(written, (value) => value * 0.001);
        expect(field).toEqual(expected);
      }
    }
    // A known cell: 1-hour plume at Hekla's nearest cell, read back in mg/m³.
    const atHekla = plumeField(options, grid, 0, 1)[48 * 150 + 51]!;
    expect(atHekla).toBeGreaterThan(4000);
    expect((await output.readField("MAX6h_ASH_fl000-200", 0))[48 * 150 + 51]).toBe(Math.fround(atHekla * 0.001));
  });

  it("crosses 0.2, 2 and 4 mg/m³ in every band at several steps", async () => {
    for (const variable of output.variables) {
      const stepsAbove = [0, 0, 0];
      for (let t = 0; t < output.times.length; t++) {
        const field = await output.readField(variable.name, t);
        let max = 0;
        for (const value of field) if (value > max) max = value;
        [0.2, 2, 4].forEach((threshold, index) => {
          if (max >= threshold) stepsAbove[index]! += 1;
        });
      }
      expect(Math.min(...stepsAbove), variable.name).toBeGreaterThanOrEqual(3);
    }
  });

  it("refuses reads that are bugs of the caller, and reads after close", async () => {
    await expect(output.readField("COLUMN_ASH_kmax", 0)).rejects.toThrow(/Internal error/);
    await expect(output.readField("MAX6h_ASH_fl000-200", 24)).rejects.toThrow(/Internal error/);
    await expect(output.readField("MAX6h_ASH_fl000-200", 0.5)).rejects.toThrow(/Internal error/);
    const again = await openModelOutput(file, "x.nc");
    again.close();
    again.close(); // twice is harmless
    await expect(again.readField("MAX6h_ASH_fl000-200", 0)).rejects.toThrow(/after close/);
  });
});

describe("generated SNAP output (NetCDF-4, rotated pole, 2-D latitude/longitude)", () => {
  let output: ModelOutput;
  let file: string;
  let latitude: Float32Array;
  let longitude: Float32Array;
  const options = resolveOptions({ outDir: "unused" });

  beforeAll(async () => {
    const dir = await tempDir();
    file = (await writeSnapOutput({ outDir: dir })).file;
    output = await openModelOutput(file, "2019-03-22-hekla/snap_20190322T120000.nc");
    await h5wasmReady();
    const raw = new h5wasm.File(file, "r");
    latitude = (raw.get("latitude") as Dataset).value as Float32Array;
    longitude = (raw.get("longitude") as Dataset).value as Float32Array;
    raw.close();
  });
  afterAll(() => output?.close());

  it("is read as SNAP on a curvilinear grid", () => {
    expect(output.layout).toBe("SNAP");
    expect([output.grid.kind, output.grid.nx, output.grid.ny]).toEqual(["curvilinear", 150, 70]);
    expect(output.times).toEqual(hourly("2019-03-22T13:00:00Z", 24));
    expect(output.simulationStart).toBe("2019-03-22T12:00:00Z");
    expect(output.grid.cellDegrees).toBeGreaterThan(0.49);
    expect(output.grid.cellDegrees).toBeLessThan(0.51);
  });

  it("maps cell centres to the file's 2-D latitude/longitude exactly", () => {
    for (const [i, j] of [[0, 0], [149, 0], [0, 69], [149, 69], [75, 35], [51, 12]] as const) {
      const k = j * 150 + i;
      expect(output.grid.toLonLat(i, j)).toEqual([longitude[k], latitude[k]]);
    }
  });

  it("agrees with the analytic rotated pole (grid_north_pole 22, 140) at centres and in between", () => {
    const grid = plumeGrid("snap", options);
    for (const [x, y] of [[0, 0], [149, 69], [75, 35], [20.5, 10.5], [100.25, 60.75], [-0.5, -0.5], [149.5, 69.5]] as const) {
      const rlon = grid.axisX[0]! + x * options.res;
      const rlat = grid.axisY[0]! + y * options.res;
      const analytic = rotatedByVectors(rlon, rlat, 22, 140);
      expect(arcDegrees(output.grid.toLonLat(x, y), analytic), `${x}, ${y}`).toBeLessThan(5e-3); // float32 arrays, bilinear between centres
      expect(arcDegrees(rotatedToGeographic(rlon, rlat, 22, 140), analytic)).toBeLessThan(1e-9);
    }
  });

  it("puts Hekla's plume at Hekla", async () => {
    const field = await output.readField("MAX6h_ASH_fl000-200", 0);
    let best = 0;
    for (let k = 1; k < field.length; k++) if (field[k]! > field[best]!) best = k;
    const where = output.grid.toLonLat(best % 150, Math.floor(best / 150));
    expect(arcDegrees(where, [-19.7, 63.98])).toBeLessThan(0.5);
    expect(field[best]).toBeGreaterThan(4);
  });

  it("has a domain around the rotated grid", () => {
    const { domain } = output.grid;
    let north = -90;
    let south = 90;
    for (const value of latitude) {
      north = Math.max(north, value);
      south = Math.min(south, value);
    }
    expect(domain.north).toBe(north);
    expect(domain.south).toBe(south);
    expect(domain.west).toBeLessThan(-60);
    expect(domain.east).toBeGreaterThan(40);
  });
});

/**
 * A SNAP-shaped CDL with a rotated pole (22°N, 140°E) and only 1-D x/y axes (no 2-D latitude/longitude), one
 * field MAX6h_ASH_fl350-550 in ug m-3; `axisAttributes` and `extra` are attribute lines (`x:units = "degrees"`).
 */
function rotatedAxesCdl(spec: { rx: number[]; ry: number[]; axisAttributes: string[]; times: number[]; values: number[]; extra?: string[] }): string {
  const lines = [
    "netcdf snap {",
    "dimensions:",
    "  time = UNLIMITED ;",
    `  x = ${spec.rx.length} ;`,
    `  y = ${spec.ry.length} ;`,
    "variables:",
    "  double time(time) ;",
    '    time:units = "hours since 2016-11-03 00:00:00" ;',
    "  float x(x) ;",
    "  float y(y) ;",
    ...spec.axisAttributes.map((line) => `    ${line} ;`),
    "  int projection ;",
    '    projection:grid_mapping_name = "rotated_latitude_longitude" ;',
    "    projection:grid_north_pole_latitude = 22. ;",
    "    projection:grid_north_pole_longitude = 140. ;",
    "  float MAX6h_ASH_fl350-550(time, y, x) ;",
    '    MAX6h_ASH_fl350-550:units = "ug m-3" ;',
    '    MAX6h_ASH_fl350-550:grid_mapping = "projection" ;',
    ...(spec.extra ?? []).map((line) => `  ${line} ;`),
    "data:",
    `  time = ${spec.times.join(", ")} ;`,
    `  x = ${spec.rx.join(", ")} ;`,
    `  y = ${spec.ry.join(", ")} ;`,
    `  MAX6h_ASH_fl350-550 = ${spec.values.join(", ")} ;`,
    "}",
  ];
  return `${lines.join("\n")}\n`;
}

describe.skipIf(!HAS_NETCDF_BIN)(`files written by netCDF-C (ncgen)${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  // Three bands in three encodings: float in ug/m3 with _FillValue; packed short in mg m-3 with
  // scale_factor, add_offset, _FillValue and missing_value; double in µg/m³.
  const cells = SMALL_LAT.length * SMALL_LON.length;
  const floatData = [0, 200, 2000, 4000, 250.5, "_", 1, 2, 3, 4, 5, 6, 10, 20, "NaN", 40, 50, 60, 70, 80, 90, 100, 110, 120];
  const shortData = [0, 150, -32767, -9999, 1, 2, 3, 4, 5, 6, 7, 8, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200];
  const doubleData = Array.from({ length: 2 * cells }, (_, k) => 1234.5 + k);
  const fields = (nc4: boolean) => [
    {
      name: "MAX6h_ASH_fl000-200",
      attributes: ['units = "ug/m3"', "_FillValue = -1.f", ...(nc4 ? ['_Shuffle = "true"', "_DeflateLevel = 5", "_ChunkSizes = 1, 3, 4"] : [])],
      data: floatData.join(", "),
    },
    {
      name: "MAX6h_ASH_fl200-350",
      type: "short" as const,
      attributes: ['units = "mg m-3"', "scale_factor = 0.01f", "add_offset = 0.5f", "_FillValue = -32767s", "missing_value = -9999s", ...(nc4 ? ["_DeflateLevel = 1"] : [])],
      data: shortData.join(", "),
    },
    { name: "MAX6h_ASH_fl350-550", type: "double" as const, attributes: ['units = "\u00b5g/m\u00b3"'], data: doubleData.join(", ") },
  ];

  async function expectSmallFile(file: string, display: string) {
    const output = await openModelOutput(file, display);
    try {
      expect(output.layout).toBe("EEMEP");
      expect(output.grid.kind).toBe("regular");
      expect(output.times).toEqual(["2019-03-22T00:30:00Z", "2019-03-22T01:30:00Z"]); // half-hour means kept as they are
      expect(output.title).toBe("small EEMEP-shaped test file");
      expect(output.simulationStart).toBe("2019-03-22T00:00:00Z");
      expect(output.grid.toLonLat(0, 0)).toEqual([-20, 60]);
      expect(output.grid.toLonLat(3, 2)).toEqual([-17, 62]);
      expect(output.variables.map((variable) => variable.units)).toEqual(["ug/m3", "mg m-3", "\u00b5g/m\u00b3"]);

      const low = await output.readField("MAX6h_ASH_fl000-200", 0);
      expect([...low.slice(0, 5)]).toEqual([0, Math.fround(0.2), Math.fround(2), Math.fround(4), Math.fround(250.5 * 0.001)]);
      expect(low[5]).toBeNaN(); // _FillValue
      const lowLater = await output.readField("MAX6h_ASH_fl000-200", 1);
      expect(lowLater[2]).toBeNaN(); // NaN in the data is missing, not an error
      expect(lowLater[0]).toBe(Math.fround(0.01));

      const middle = await output.readField("MAX6h_ASH_fl200-350", 0);
      const unpack = (raw: number) => Math.fround(raw * Math.fround(0.01) + Math.fround(0.5));
      expect(middle[0]).toBe(unpack(0));
      expect(middle[1]).toBe(unpack(150));
      expect(middle[1]).toBeCloseTo(2, 6);
      expect(middle[2]).toBeNaN(); // _FillValue
      expect(middle[3]).toBeNaN(); // missing_value
      expect((await output.readField("MAX6h_ASH_fl200-350", 1))[11]).toBe(unpack(1200));

      const high = await output.readField("MAX6h_ASH_fl350-550", 1);
      expect(high[0]).toBe(Math.fround((1234.5 + cells) * 0.001));
    } finally {
      output.close();
    }
  }

  it("adds a float field's add_offset to its zero cells too (they are not skipped as 0 → 0)", async () => {
    const data = Array.from({ length: 2 * cells }, (_, k) => (k % 3 === 0 ? 0 : 500)).join(", ");
    const file = await ncgen(
      eemepCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', "add_offset = 1000.f", "_FillValue = -1.f"], data }] }),
      path.join(await tempDir(), "offset.nc"),
      "nc4",
    );
    const output = await openModelOutput(file, "run/offset.nc");
    try {
      const field = await output.readField("MAX6h_ASH_fl000-200", 0);
      expect([...field.slice(0, 3)]).toEqual([1, 1.5, 1.5]);
    } finally {
      output.close();
    }
  });

  it("reads NetCDF-3 classic", async () => {
    const file = await ncgen(eemepCdl({ fields: fields(false) }), path.join(await tempDir(), "classic.nc"), "classic");
    await expectSmallFile(file, "run/classic.nc");
  });

  it("reads NetCDF-3 64-bit offset", async () => {
    const file = await ncgen(eemepCdl({ fields: fields(false) }), path.join(await tempDir(), "offset64.nc"), "64-bit-offset");
    await expectSmallFile(file, "run/offset64.nc");
  });

  it("reads NetCDF-4 with shuffle and deflate as netCDF-C writes it", async () => {
    const file = await ncgen(eemepCdl({ fields: fields(true) }), path.join(await tempDir(), "nc4.nc"), "nc4");
    await expectSmallFile(file, "run/nc4.nc");
  });

  it("reads a SNAP rotated grid given only by its pole and rotated axes (NetCDF-3)", async () => {
    const rx = [-12, -11.5, -11, -10.5, -10];
    const ry = [-4, -3.5, -3];
    const cdl = rotatedAxesCdl({
      rx,
      ry,
      axisAttributes: ['x:standard_name = "grid_longitude"', 'x:units = "degrees"', 'y:standard_name = "grid_latitude"', 'y:units = "degrees"'],
      times: [3, 6],
      values: Array.from({ length: 2 * rx.length * ry.length }, (_, k) => k * 10),
      extra: ['time:calendar = "gregorian"', ':title = "Askja 2016-11-03"'],
    });
    const file = await ncgen(cdl, path.join(await tempDir(), "snap.nc"), "classic");
    const output = await openModelOutput(file, "askja/snap.nc");
    try {
      expect(output.layout).toBe("SNAP");
      expect(output.grid.kind).toBe("curvilinear");
      expect(output.times).toEqual(["2016-11-03T03:00:00Z", "2016-11-03T06:00:00Z"]);
      expect(output.simulationStart).toBeUndefined();
      expect(output.variables.map((variable) => variable.band.id)).toEqual(["fl350-550"]);
      for (const [x, y] of [[0, 0], [4, 2], [2.5, 1.25]] as const) {
        const analytic = rotatedByVectors(-12 + 0.5 * x, -4 + 0.5 * y, 22, 140);
        expect(arcDegrees(output.grid.toLonLat(x, y), analytic)).toBeLessThan(x % 1 === 0 && y % 1 === 0 ? 1e-9 : 5e-3); // bilinear between centres 0.5° apart
      }
      expect((await output.readField("MAX6h_ASH_fl350-550", 1))[14]).toBe(Math.fround(290 * 0.001));
    } finally {
      output.close();
    }
  });

  it("refuses a rotated grid placed only by x/y that are not in degrees (bare indices would put the ash thousands of km away)", async () => {
    const cdl = rotatedAxesCdl({ rx: [0, 1, 2], ry: [0, 1], axisAttributes: ['x:units = "1"', 'y:units = "1"'], times: [3], values: [0, 1, 2, 3, 4, 5] });
    const file = await ncgen(cdl, path.join(await tempDir(), "indices.nc"), "classic");
    const error = await expectUserError(openModelOutput(file, "run/indices.nc"), "run/indices.nc", /variable x has units "1", not degrees, and the file has no 2-D latitude\/longitude: the rotated grid cannot be placed/);
    expect(error.fix).toMatch(/standard_name = "grid_longitude", units = "degrees"/);
    // Degrees as UDUNITS spells them, or no units where the standard_name says what the axis is: placed.
    for (const [xUnits, yUnits] of [['x:units = "deg"', 'y:units = "degree_N"'], ['x:units = "arc_degree"', 'y:units = "°"'], ['x:standard_name = "grid_longitude"', 'y:standard_name = "grid_latitude"']]) {
      const spelled = await ncgen(cdl.replace('x:units = "1"', xUnits!).replace('y:units = "1"', yUnits!), path.join(await tempDir(), "degrees.nc"), "classic");
      const output = await openModelOutput(spelled, "run/degrees.nc");
      expect(output.grid.kind, `${xUnits} ${yUnits}`).toBe("curvilinear");
      output.close();
    }
  });

  describe("integers as netCDF-C writes them", () => {
    const read = async (field: { type?: "short" | "byte" | "float"; attributes: string[]; data: string }, name = "packed.nc") => {
      const file = await ncgen(eemepCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", ...field }] }), path.join(await tempDir(), name), "classic");
      const output = await openModelOutput(file, `run/${name}`);
      try {
        return await output.readField("MAX6h_ASH_fl000-200", 0);
      } finally {
        output.close();
      }
    };
    const data = (first: string[]) => [...first, ...Array.from({ length: 24 - first.length }, () => "0")].join(", ");

    it("a packed short without _FillValue: an unwritten cell (netCDF's default fill -32767) is missing, not a value", async () => {
      // Unpacked, -32767 would be 6553.6 - 6553.4 = 0.2 ug/m3: clear air where the model wrote nothing.
      const field = await read({ type: "short", attributes: ['units = "ug/m3"', "scale_factor = 0.2", "add_offset = 6553.6"], data: data(["-32768", "_", "-32000"]) });
      expect(field[0]).toBe(Math.fround((-32768 * 0.2 + 6553.6) * 0.001));
      expect(field[1]).toBeNaN();
      expect(field[2]).toBe(Math.fround((-32000 * 0.2 + 6553.6) * 0.001));
    });

    it("zero packed with an offset (-9e-13 after unpacking) is 0, not a negative concentration", async () => {
      const field = await read({ type: "short", attributes: ['units = "ug/m3"', "scale_factor = 0.2", "add_offset = 6553.2", "_FillValue = -32767s"], data: data(["-32766", "-31766"]) });
      expect(field[0]).toBe(0);
      expect(field[1]).toBeCloseTo(0.2, 6);
      // A value a whole packing step below 0 is still refused, quoted unpacked and as stored.
      await expectUserError(
        read({ type: "short", attributes: ['units = "ug/m3"', "scale_factor = 0.2", "add_offset = 6553.2", "_FillValue = -32767s"], data: data(["-32768"]) }, "below.nc"),
        "run/below.nc",
        /negative concentration \(-0\.4\d* ug\/m3; stored as -32768\) at time index 0/,
      );
    });

    it('_Unsigned = "true": a classic byte of -56 is 200', async () => {
      const field = await read({ type: "byte", attributes: ['units = "ug/m3"', "scale_factor = 25.f", '_Unsigned = "true"', "_FillValue = -1b"], data: data(["-56", "100", "-1"]) });
      expect(field[0]).toBe(5);
      expect(field[1]).toBe(2.5);
      expect(field[2]).toBeNaN(); // the fill value as stored (255 unsigned)
    });

    it("a value below valid_min is refused naming it, with the missing_value to set", async () => {
      const error = await expectUserError(read({ attributes: ['units = "ug/m3"', "valid_min = 0.f"], data: data(["-999"]) }, "valid.nc"), "run/valid.nc", /negative concentration \(-999 ug\/m3\) at time index 0 \(.*\), row 0, column 0, below its valid_min 0/);
      expect(error.fix).toMatch(/ncatted -a missing_value,MAX6h_ASH_fl000-200,o,f,-999 in\.nc/);
    });
  });

  describe("a SNAP grid given as 2-D latitude/longitude: its axes for point queries, or why it has none", () => {
    const xs = [10, 10.5, 11, 11.5];
    const ys = [60, 60.5, 61];
    async function gridOf(text: string) {
      const file = await ncgen(text, path.join(await tempDir(), "grid2d.nc"), "classic");
      const output = await openModelOutput(file, "run/grid2d.nc");
      output.close();
      return output.grid;
    }
    const rotated = (x: number, y: number) => rotatedToGeographic(x, y, 22, 140);
    const POLE_MAPPING = ['grid_mapping_name = "rotated_latitude_longitude"', "grid_north_pole_latitude = 22.", "grid_north_pole_longitude = 140."];

    it("latitude_longitude: the file's own x/y as the axes", async () => {
      const grid = await gridOf(grid2dCdl({ xs, ys, mapping: ['grid_mapping_name = "latitude_longitude"'], toLonLat: (x, y) => [x, y], axes: { x: xs, y: ys, attributes: ['x:standard_name = "longitude"', 'y:standard_name = "latitude"'] } }));
      expect(grid.geometry).toEqual({ kind: "regular", x: xs, y: ys });
      expect(grid.noGeometry).toBeUndefined();
    });

    it("rotated, with x/y as bare indices: the rotated axes from the arrays", async () => {
      const grid = await gridOf(grid2dCdl({ xs, ys, mapping: POLE_MAPPING, toLonLat: rotated, axes: { x: [0, 1, 2, 3], y: [0, 1, 2], attributes: [] } }));
      expect(grid.geometry?.kind).toBe("rotated");
      grid.geometry!.x.forEach((value, i) => expect(value).toBeCloseTo(xs[i]!, 6));
      grid.geometry!.y.forEach((value, j) => expect(value).toBeCloseTo(ys[j]!, 6));
    });

    it("says why there is none: a rotated mapping without its pole, or arrays of no two axes", async () => {
      const noPole = await gridOf(grid2dCdl({ xs, ys, mapping: ['grid_mapping_name = "rotated_latitude_longitude"'], toLonLat: rotated }));
      expect(noPole.geometry).toBeUndefined();
      expect(noPole.noGeometry).toEqual({
        message: "its grid mapping projection is rotated_latitude_longitude without grid_north_pole_latitude and grid_north_pole_longitude, so /point and /route cannot look places up in its grid (its maps and ash areas are published)",
        fix: "add grid_north_pole_latitude and grid_north_pole_longitude to projection as the model defines its pole",
      });
      const sheared = await gridOf(grid2dCdl({ xs, ys, mapping: POLE_MAPPING, toLonLat: (x, y) => rotated(x, y + 0.05 * (x - 10)) }));
      expect(sheared.geometry).toBeUndefined();
      expect(sheared.noGeometry?.message).toBe("its 2-D latitude/longitude are not a product of two axes in its rotated pole's coordinates, so /point and /route cannot look places up in its grid (its maps and ash areas are published)");
    });
  });
});
