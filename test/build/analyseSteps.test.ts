/**
 * analyseSteps visits only the cells of a step that hold something (FieldCells.nonZero) once every cell of
 * the running maximum has a value: its maximum, missing counts, ash areas and point-grid codes must be what a pass over
 * every cell of every step gives, whatever the mix of zeros, values and missing cells, and wherever a
 * chunk of steps starts. Real NetCDF files written by ncgen (Debian netcdf-bin), float and packed short fields.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { analyseSteps } from "../../src/build/readers/modelOutput.ts";
import { encodeConcentration } from "../../src/formats/concentrationCodes.ts";
import { contourBands } from "../../src/geo/contourBands.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import type { ModelOutput } from "../../src/model/types.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir } from "../model/helpers.ts";

afterAll(removeTempDirs);

const STEPS = 5;
const CELLS = 12; // 3 × 4
const FLOAT = "MAX6h_ASH_fl000-200";
const PACKED = "MAX6h_ASH_fl200-350";

/**
 * The value (ug/m3) of a cell at a step, undefined for the fill value. Cell 0 is missing at step 0; cell 1
 * at steps 0 and 1; cell 2 from step 3 on (so step 2 is the only step with every value); cell 3 holds ash
 * that falls to 0; cell 4 ash that rises; cell 5 is 0 but at step 3; the others are 0 (most of a real field),
 * cell 11 but at the last step.
 */
function ugm3(step: number, cell: number): number | undefined {
  switch (cell) {
    case 0: return step === 0 ? undefined : 500 + step;
    case 1: return step <= 1 ? undefined : 300;
    case 2: return step >= 3 ? undefined : 4000;
    case 3: return step === 0 ? 9000 : 0;
    case 4: return 100 * (step + 1);
    case 5: return step === 3 ? 2500 : 0;
    case 11: return step === STEPS - 1 ? 700 : 0;
    default: return 0;
  }
}

async function openSample(): Promise<ModelOutput> {
  const dir = await tempDir("ashcast-analyse-");
  const file = path.join(dir, "eemep_hour_20190322T000000.nc");
  const data = (packed: boolean) =>
    Array.from({ length: STEPS * CELLS }, (_, k) => {
      const value = ugm3(Math.floor(k / CELLS), k % CELLS);
      return value === undefined ? "_" : String(packed ? value / 2 : value);
    }).join(", ");
  const fields = [
    { name: FLOAT, attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data: data(false) },
    // Packed: not the float reader, so its cells are found after the conversion.
    { name: PACKED, type: "short" as const, attributes: ['units = "ug/m3"', "_FillValue = -1s", "scale_factor = 2.f"], data: data(true) },
  ];
  await ncgen(eemepCdl({ times: Array.from({ length: STEPS }, (_, k) => (k + 1) / 24), fields }), file, "nc4");
  return openModelOutput(file, "eemep_hour_20190322T000000.nc", { pointGeometry: false });
}

describe.skipIf(!HAS_NETCDF_BIN)(`analyseSteps${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("gives the maximum, missing counts and codes of a pass over every cell, for every chunk of steps, float and packed fields", async () => {
    const output = await openSample();
    try {
      for (const variable of [FLOAT, PACKED]) {
        const fields = await Promise.all(Array.from({ length: STEPS }, (_, t) => output.readField(variable, t)));
        for (let from = 0; from < STEPS; from++) {
          for (let to = from + 1; to <= STEPS; to++) {
            const chunk = await analyseSteps(output, variable, from, to, [0.2, 2, 4], true);
            const what = `${variable}, steps ${from} to ${to}`;
            // The reference: every cell of every step, a value over a missing one, NaN where all are missing.
            const maximum = Array.from({ length: CELLS }, (_, cell) => {
              const values = fields.slice(from, to).map((field) => field[cell]!).filter((value) => !Number.isNaN(value));
              return values.length === 0 ? Number.NaN : Math.max(...values);
            });
            expect(Array.from(chunk.maximum), what).toEqual(maximum);
            chunk.steps.forEach((step, k) => {
              const field = fields[from + k]!;
              expect(step.missing, what).toBe(field.filter((value) => Number.isNaN(value)).length);
              const cells = [...field.keys()].filter((cell) => field[cell] !== 0);
              expect(Array.from(step.codes!.cells), what).toEqual(cells);
              expect(Array.from(step.codes!.values), what).toEqual(cells.map((cell) => encodeConcentration(field[cell]!)));
              expect(step.areas, what).toEqual(contourBands(field, output.grid.nx, output.grid.ny, [0.2, 2, 4], output.grid.toLonLat));
            });
          }
        }
        // The sample holds the cases: chunks that start with missing cells and get a value in each later (0 to 5),
        // one that starts with a value in every cell and then misses some (2 to 5), one that misses a cell throughout (3 to 5).
        expect(fields.map((field) => field.some((value) => Number.isNaN(value)))).toEqual([true, true, false, true, true]);
      }
    } finally {
      output.close();
    }
  });

  it("lists every cell that is not 0, missing ones included, in order, for a pass to visit only those", async () => {
    const output = await openSample();
    try {
      for (const variable of [FLOAT, PACKED]) {
        for (let t = 0; t < STEPS; t++) {
          const { values, nonZero, missing } = await output.readFieldCells(variable, t);
          expect(values).toEqual(await output.readField(variable, t));
          const notZero = [...values.keys()].filter((cell) => values[cell] !== 0);
          // Every cell not 0 is listed, in order (a listed cell that is 0 only costs a visit).
          expect(notZero.every((cell) => nonZero.includes(cell)), `${variable} step ${t}`).toBe(true);
          expect([...nonZero].sort((a, b) => a - b)).toEqual([...nonZero]);
          expect(missing).toBe(values.filter((value) => Number.isNaN(value)).length);
        }
      }
    } finally {
      output.close();
    }
  });
});
