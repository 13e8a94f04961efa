/**
 * Memory: reading every step of a larger file one at a time holds one step, not the file. A whole
 * flight-level variable of this file is 300 × 200 × 48 × 4 bytes = 11.5 MB (and h5wasm's heap would
 * keep that much for good); one step is 240 kB. The bound below is half a variable: generous for one
 * step and its garbage, too small for a whole variable read. No timing assertions.
 */
import path from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEemepOutput, writeSnapOutput } from "../../scripts/make-model-output.ts";
import { openModelOutput } from "../../src/model/openModelOutput.ts";
import { removeTempDirs, tempDir } from "./helpers.ts";

afterAll(removeTempDirs);

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const NX = 300;
const NY = 200;
const STEPS = 48;
const WHOLE_VARIABLE = NX * NY * STEPS * 4;
const BOUND = WHOLE_VARIABLE / 2;

function used(): number {
  gc();
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.external;
}

async function measure(file: string): Promise<{ growth: number; rss: number; steps: number }> {
  const output = await openModelOutput(file, path.basename(file));
  try {
    await output.readField(output.variables[0]!.name, 0); // let h5wasm's heap reach one step
    const before = used();
    let peak = before;
    let steps = 0;
    for (const variable of output.variables) {
      for (let t = 0; t < output.times.length; t++) {
        const field = await output.readField(variable.name, t);
        expect(field.length).toBe(NX * NY);
        steps += 1;
        peak = Math.max(peak, used());
      }
    }
    return { growth: peak - before, rss: process.memoryUsage().rss, steps };
  } finally {
    output.close();
  }
}

describe("memory while reading a larger file step by step", () => {
  let eemep: string;
  let snap: string;
  beforeAll(async () => {
    const dir = await tempDir();
    const options = { outDir: dir, nx: NX, ny: NY, steps: STEPS, res: 0.1, lat0: 55, lon0: -35 };
    eemep = (await writeEemepOutput(options)).file;
    snap = (await writeSnapOutput(options)).file;
  });

  it("EEMEP: heap and external memory stay within half a variable over 3 × 48 steps", async () => {
    const { growth, rss, steps } = await measure(eemep);
    console.log(`EEMEP ${NX}×${NY}×${STEPS}: ${steps} steps read, heap+external growth ${(growth / 1e6).toFixed(2)} MB (bound ${(BOUND / 1e6).toFixed(1)} MB), rss ${(rss / 1e6).toFixed(0)} MB`);
    expect(steps).toBe(3 * STEPS);
    expect(growth).toBeLessThan(BOUND);
  });

  it("SNAP: the same, with the 2-D coordinates held", async () => {
    const { growth, rss, steps } = await measure(snap);
    console.log(`SNAP ${NX}×${NY}×${STEPS}: ${steps} steps read, heap+external growth ${(growth / 1e6).toFixed(2)} MB (bound ${(BOUND / 1e6).toFixed(1)} MB), rss ${(rss / 1e6).toFixed(0)} MB`);
    expect(growth).toBeLessThan(BOUND);
  });
});
