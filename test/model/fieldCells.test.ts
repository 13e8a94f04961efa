/**
 * readFieldCells passes over blocks of +0 cells with one comparison each (src/model/openModelOutput.ts):
 * on a field of several blocks, with ash at the blocks' first and last cells, -0, missing cells in
 * otherwise empty blocks and a short last block, it must list and convert exactly the cells a pass over
 * every cell finds.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

const LAT = Array.from({ length: 30 }, (_, k) => 50 + k * 0.5);
const LON = Array.from({ length: 85 }, (_, k) => -30 + k * 0.5);
const CELLS = LAT.length * LON.length; // 2550: two blocks of 1024 cells and a short one
const FILL = -1;

/** µg/m³ by cell at step 0 and 1; undefined is the fill value; every other cell is 0. */
const STEP_VALUES: Array<Map<number, number | undefined>> = [
  new Map<number, number | undefined>([
    [0, 250],
    [1023, 4000],
    [1024, 2100],
    [1500, -0],
    [1600, undefined],
    [2047, 900],
    [CELLS - 1, 12_000],
  ]),
  new Map<number, number | undefined>([
    [700, undefined],
    [2048, 300],
  ]),
];

describe.skipIf(!HAS_NETCDF_BIN)(`readFieldCells over blocks of zeros${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("lists and converts every cell that is not +0, at the edges of every block", async () => {
    const data = STEP_VALUES.flatMap((values) =>
      Array.from({ length: CELLS }, (_, cell) => {
        if (!values.has(cell)) return "0";
        const value = values.get(cell);
        return value === undefined ? "_" : Object.is(value, -0) ? "-0.0" : String(value);
      }),
    ).join(", ");
    const file = path.join(await tempDir(), "eemep_hour_20190322T000000.nc");
    await ncgen(eemepCdl({ lat: LAT, lon: LON, times: [1 / 24, 2 / 24], fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', `_FillValue = ${FILL}.f`, "_DeflateLevel = 4"], data }] }), file, "nc4");
    const output = await openModelOutput(file, "run/eemep_hour_20190322T000000.nc", { pointGeometry: false });
    try {
      for (const [step, values] of STEP_VALUES.entries()) {
        const cells = await output.readFieldCells("MAX6h_ASH_fl000-200", step);
        const expectedCells = [...values.keys()].filter((cell) => !Object.is(values.get(cell), -0)).sort((a, b) => a - b);
        expect([...cells.nonZero], `step ${step}`).toEqual(expectedCells);
        expect(cells.missing).toBe([...values.values()].filter((value) => value === undefined).length);
        for (let cell = 0; cell < CELLS; cell++) {
          const value = values.has(cell) ? values.get(cell) : 0;
          const expected = value === undefined ? Number.NaN : Math.fround(value * 0.001) + 0;
          expect(Object.is(cells.values[cell], expected), `step ${step} cell ${cell}: ${cells.values[cell]} against ${expected}`).toBe(true);
        }
      }
    } finally {
      output.close();
    }
  });
});
