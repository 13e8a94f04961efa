/**
 * What a field is, read from the model output: exact labels from cell_methods, long_name and the model
 * chain's MAX<n>h naming, "unknown" when the file does not say (or says it in words ashcast does not read),
 * and the same read end to end from generated NetCDF files.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeEemepOutput, writeSnapOutput } from "../../scripts/make-model-output.ts";
import { describeField, labelFromCellMethods, UNKNOWN_FIELD_LABEL } from "../../src/model/fieldMeaning.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

describe("describeField", () => {
  it("reads CF cell_methods: time mean with its interval, maximum over the vertical", () => {
    expect(labelFromCellMethods("time: mean (interval: 6 hours) lev: maximum")).toBe("maximum of 6-hour mean ash concentration");
    expect(labelFromCellMethods("time: maximum (interval: 3 h)")).toBe("3-hour maximum ash concentration");
    expect(labelFromCellMethods("time: point")).toBe("instantaneous ash concentration");
    expect(labelFromCellMethods("time: mean")).toBe("mean ash concentration");
    expect(labelFromCellMethods("height: maximum")).toBe("maximum of ash concentration");
  });

  it("says unknown for cell_methods it does not read, never falling back to a guess from the name", () => {
    expect(labelFromCellMethods("time: median")).toBeUndefined();
    expect(labelFromCellMethods("area: mean")).toBeUndefined();
    expect(labelFromCellMethods("not cell methods at all")).toBeUndefined();
    expect(describeField("MAX6h_ASH_fl000-200", { cell_methods: "time: median" })).toEqual({ label: UNKNOWN_FIELD_LABEL, source: "unknown" });
  });

  it("takes long_name as written, without the trailing flight-level band, before the name", () => {
    expect(describeField("MAX6h_ASH_fl000-200", { long_name: "Maximum of 6-hour mean ash concentration, SFC/FL200" }, "SFC/FL200")).toEqual({
      label: "maximum of 6-hour mean ash concentration",
      source: "long_name",
    });
    expect(describeField("x", { long_name: "ash concentration (FL200/350)" }, "FL200/350").label).toBe("ash concentration");
  });

  it("reads the model chain's MAX<n>h naming when the file has no attributes", () => {
    expect(describeField("MAX6h_ASH_fl000-200", {})).toEqual({ label: "maximum of 6-hour mean ash concentration", source: "name" });
    expect(describeField("MAX3h_ASH_fl350-550", {})).toEqual({ label: "maximum of 3-hour mean ash concentration", source: "name" });
  });

  it("says unknown when nothing tells", () => {
    expect(describeField("ASH_fl000-200", {})).toEqual({ label: UNKNOWN_FIELD_LABEL, source: "unknown" });
    expect(describeField("ASH_fl000-200", { long_name: "  " })).toEqual({ label: UNKNOWN_FIELD_LABEL, source: "unknown" });
    expect(UNKNOWN_FIELD_LABEL).toMatch(/does not say/);
  });
});

describe.skipIf(!HAS_NETCDF_BIN)(`openModelOutput: field meanings from the file${NO_NETCDF_BIN}`, () => {
  const open = async (attributes: string[]) => {
    const file = await ncgen(eemepCdl({ fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', ...attributes] }] }), path.join(await tempDir(), "f.nc"));
    const output = await openModelOutput(file, "f.nc");
    try {
      return output.variables[0]!.meaning;
    } finally {
      output.close();
    }
  };

  it("reads cell_methods, then long_name, then the name", async () => {
    expect(await open(['cell_methods = "time: mean (interval: 6 hours) lev: maximum"', 'long_name = "something else"'])).toEqual({ label: "maximum of 6-hour mean ash concentration", source: "cell_methods" });
    expect(await open(['long_name = "hourly mean ash concentration, SFC/FL200"'])).toEqual({ label: "hourly mean ash concentration", source: "long_name" });
    expect(await open([])).toEqual({ label: "maximum of 6-hour mean ash concentration", source: "name" });
  });

  it("says unknown for a file whose cell_methods ashcast does not read", async () => {
    expect(await open(['cell_methods = "time: median (interval: 6 hours)"', 'long_name = "maximum of 6-hour mean ash concentration"'])).toEqual({ label: UNKNOWN_FIELD_LABEL, source: "unknown" });
  });

  it("reads the generated EEMEP and SNAP files' long_name", async () => {
    for (const write of [writeEemepOutput, writeSnapOutput]) {
      const written = await write({ outDir: await tempDir(), nx: 40, ny: 30, steps: 3 });
      const output = await openModelOutput(written.file, path.basename(written.file));
      try {
        expect(output.variables).toHaveLength(3);
        expect(output.variables.map((v) => v.meaning)).toEqual(output.variables.map(() => ({ label: "maximum of 6-hour mean ash concentration", source: "long_name" })));
      } finally {
        output.close();
      }
    }
  });
});
