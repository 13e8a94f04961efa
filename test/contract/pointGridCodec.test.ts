import { describe, expect, it } from "vitest";
import { decodeCellSeries, encodeBlock } from "../../src/contract/pointGrid.ts";
import { MISSING_CODE } from "../../src/formats/concentrationCodes.ts";

/** Codes laid out as the build has them, `codes[(y * nx + x) * steps + t]`, from one series per cell. */
function gridOf(nx: number, ny: number, steps: number, seriesAt: (x: number, y: number) => number[]): Uint16Array {
  const codes = new Uint16Array(nx * ny * steps);
  for (let y = 0; y < ny; y++) for (let x = 0; x < nx; x++) codes.set(seriesAt(x, y), (y * nx + x) * steps);
  return codes;
}

function decodeAll(block: Uint8Array, cells: number, steps: number): number[][] {
  const out = new Uint16Array(steps);
  return Array.from({ length: cells }, (_, cell) => {
    decodeCellSeries(block, cells, cell, steps, out);
    return [...out];
  });
}

describe("point grid blocks (format 2)", () => {
  it("give back every code of every cell, whatever the jumps, runs and missing values", () => {
    const steps = 300;
    const shapes: Array<(t: number) => number> = [
      () => 0,
      (t) => (t % 2 ? 65534 : 0), // the largest jumps both ways
      (t) => (t < 250 ? 0 : 40000), // a run of 250 unchanged codes (a two-byte run length)
      (t) => (t === 7 ? MISSING_CODE : t === 8 ? 1 : 3000 + t), // missing, then the scale's smallest code
      (t) => Math.round(5000 + 3000 * Math.sin(t / 9)), // a plume passing, slowly changing
      (t) => (t < 5 ? 100 : 100), // constant from the first step: one token, then nothing
    ];
    const nx = 8;
    const ny = 8;
    const series = (x: number, y: number) => Array.from({ length: steps }, (_, t) => shapes[(x + y * nx) % shapes.length]!(t));
    const codes = gridOf(nx, ny, steps, series);
    const block = encodeBlock(codes, nx, ny, steps, 8, 0);
    const decoded = decodeAll(block, nx * ny, steps);
    for (let y = 0; y < ny; y++) for (let x = 0; x < nx; x++) expect(decoded[y * nx + x], `cell ${x},${y}`).toEqual(series(x, y));
  });

  it("clip the blocks at the grid's last row and column, and store a block without ash as 0 bytes", () => {
    const nx = 11;
    const ny = 9;
    const steps = 4;
    const series = (x: number, y: number) => (x >= 8 && y >= 8 ? [0, x, y, x * y] : [0, 0, 0, 0]);
    const codes = gridOf(nx, ny, steps, series);
    expect(encodeBlock(codes, nx, ny, steps, 8, 0).length).toBe(0);
    expect(encodeBlock(codes, nx, ny, steps, 8, 1).length).toBe(0);
    expect(encodeBlock(codes, nx, ny, steps, 8, 2).length).toBe(0);
    // Block 3: x 8..10, y 8 (3 × 1 cells).
    const corner = encodeBlock(codes, nx, ny, steps, 8, 3);
    expect(decodeAll(corner, 3, steps)).toEqual([series(8, 8), series(9, 8), series(10, 8)]);
  });

  it("take one or two bytes a step for a plume's codes (the size the format is chosen for)", () => {
    const steps = 72;
    const codes = gridOf(8, 8, steps, (x, y) => Array.from({ length: steps }, (_, t) => (t < 10 ? 0 : 4000 + 40 * x + 30 * y + Math.round(200 * Math.sin(t / 5)))));
    const block = encodeBlock(codes, 8, 8, steps, 8, 0);
    expect(block.length).toBeLessThan(64 * 62 * 2 + 64 * 3);
    expect(block.length).toBeGreaterThan(64 * 62);
  });

  it("refuse bytes that do not decode to the steps asked for, instead of reading past the block", () => {
    const steps = 6;
    const codes = gridOf(2, 1, steps, (x) => [1, 2, 3, 4, 5, 6].map((v) => v * (x + 1)));
    const block = encodeBlock(codes, 2, 1, steps, 8, 0);
    const out = new Uint16Array(steps);
    expect(() => decodeCellSeries(block, 2, 1, 3, out)).toThrow(/cell 1 holds more than 3 steps/);
    expect(() => decodeCellSeries(block.subarray(0, block.length - 2), 2, 1, steps, out)).toThrow(/cell 1 runs past the block/);
  });
});
