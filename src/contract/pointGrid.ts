/**
 * The point-query grid: one artefact per model output file of a run, holding the concentration of every
 * flight-level band at every step on the model's own grid, written by the build
 * (src/build/pointGrids.ts) and read by the server (src/server/pointGrids.ts). Layout, little-endian:
 *
 *   offset 0    "ASHGRID1"                      magic and format version (8 bytes)
 *   offset 8    u32 H                           byte length of the header
 *   offset 12   H bytes of JSON                 PointGridHeader (UTF-8), then zero bytes to a multiple of 4
 *   then        u32 × (bands × blocks + 1)      offsets of the blocks, from the start of the data; block k of
 *                                               band b is entry b × blocks + k, its length the next entry minus it
 *   then        the data                        the blocks, each deflate-raw compressed; a block whose codes are
 *                                               all 0 over every step has length 0
 *
 * Blocks are BLOCK × BLOCK cells (row-major over the grid, the last row and column of blocks clipped at
 * its edges). Inflated, a block holds for each of its cells (row-major within the block) the codes of
 * every step (src/formats/concentrationCodes.ts, u16), each written as its difference from the step
 * before (mod 2^16): a plume's values change slowly from hour to hour, so differences are small and
 * compress well. One point reads one block per band; a cell's steps are contiguous.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { GridGeometry } from "../geo/gridCells.ts";

export const POINT_GRID_MAGIC = "ASHGRID1";
/** Artefact key of a run's grid: `runs/<reftime>/grids/<file slug>` (the server finds a run's grids by the prefix). */
export const pointGridKey = (reftime: string, fileSlug: string): string => `runs/${reftime}/grids/${fileSlug}`;
export const pointGridKeyPrefix = (reftime: string): string => `runs/${reftime}/grids/`;
export const POINT_GRID_FORMAT = 1;
/** Cells per block side: 8 × 8 cells × 72 steps is 9 KiB inflated, about 20 µs to inflate. */
export const BLOCK = 8;

export interface PointGridBand {
  /** e.g. `fl200-350`. */
  id: string;
  /** e.g. `FL200/350`. */
  label: string;
  lowerFl: number;
  upperFl: number;
}

export interface PointGridHeader {
  format: typeof POINT_GRID_FORMAT;
  /** The model layout, `EEMEP` or `SNAP`. */
  model: string;
  /** The model output file the grid was read from. */
  source: string;
  reftime: string;
  /** Step instants, ascending; step k is valid from times[k] until times[k + 1] (the last until `end`). */
  times: string[];
  end: string;
  /** Concentration thresholds of the classes, mg/m³, ascending. */
  thresholds: number[];
  bands: PointGridBand[];
  nx: number;
  ny: number;
  block: number;
  geometry: GridGeometry;
}

/** Blocks per band. */
export const blockCount = (header: Pick<PointGridHeader, "nx" | "ny" | "block">): number => Math.ceil(header.nx / header.block) * Math.ceil(header.ny / header.block);

/**
 * One band's block from its codes, laid out `codes[(y * nx + x) * steps + t]`; an empty Buffer when all are 0.
 */
export function encodeBlock(codes: Uint16Array, nx: number, ny: number, steps: number, block: number, k: number): Buffer {
  const bx = k % Math.ceil(nx / block);
  const by = Math.floor(k / Math.ceil(nx / block));
  const x0 = bx * block;
  const y0 = by * block;
  const width = Math.min(block, nx - x0);
  const height = Math.min(block, ny - y0);
  const out = new Uint16Array(width * height * steps);
  let any = 0;
  let o = 0;
  for (let y = y0; y < y0 + height; y++) {
    for (let x = x0; x < x0 + width; x++) {
      const start = (y * nx + x) * steps;
      let previous = 0;
      for (let t = 0; t < steps; t++) {
        const code = codes[start + t]!;
        out[o++] = (code - previous) & 0xffff;
        previous = code;
        any |= code;
      }
    }
  }
  if (any === 0) return Buffer.alloc(0);
  return deflateRawSync(new Uint8Array(out.buffer, out.byteOffset, out.byteLength), { level: 6 });
}

/** A block's codes, `[(cell within the block) * steps + t]`, from its stored bytes. */
export function decodeBlock(stored: Uint8Array, cells: number, steps: number): Uint16Array {
  const inflated = inflateRawSync(stored);
  if (inflated.length !== cells * steps * 2) throw new Error(`a grid block inflates to ${inflated.length} bytes, expected ${cells * steps * 2}`);
  const codes = new Uint16Array(cells * steps);
  for (let c = 0, i = 0; c < cells; c++) {
    let value = 0;
    for (let t = 0; t < steps; t++, i += 2) {
      value = (value + (inflated[i]! | (inflated[i + 1]! << 8))) & 0xffff;
      codes[c * steps + t] = value;
    }
  }
  return codes;
}

/** The artefact's bytes from its header and its blocks (band-major, then block order). */
export function assemblePointGrid(header: PointGridHeader, blocks: readonly Buffer[]): Buffer {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const headEnd = 12 + json.length;
  const padded = Math.ceil(headEnd / 4) * 4;
  const table = Buffer.alloc((blocks.length + 1) * 4);
  let offset = 0;
  blocks.forEach((block, i) => {
    table.writeUInt32LE(offset, i * 4);
    offset += block.length;
  });
  table.writeUInt32LE(offset, blocks.length * 4);
  const head = Buffer.alloc(padded);
  head.write(POINT_GRID_MAGIC, 0, "latin1");
  head.writeUInt32LE(json.length, 8);
  json.copy(head, 12);
  return Buffer.concat([head, table, ...blocks]);
}

/** A grid artefact opened for reading: header, block offsets and the data, without copying. */
export interface OpenedPointGrid {
  header: PointGridHeader;
  offsets: Uint32Array;
  data: Uint8Array;
}

/** Opens a grid artefact's bytes; `name` goes into the error when they are not one. */
export function openPointGrid(bytes: Buffer, name: string): OpenedPointGrid {
  const fail = (why: string): never => {
    throw new Error(`${name} is not a point-query grid (format ${POINT_GRID_FORMAT}): ${why}; rebuild the run`);
  };
  if (bytes.length < 12 || bytes.toString("latin1", 0, 8) !== POINT_GRID_MAGIC) fail("wrong magic bytes");
  const length = bytes.readUInt32LE(8);
  if (12 + length > bytes.length) fail("the header runs past the end");
  let header: PointGridHeader;
  try {
    header = JSON.parse(bytes.toString("utf8", 12, 12 + length)) as PointGridHeader;
  } catch {
    return fail("the header is not JSON");
  }
  if (header.format !== POINT_GRID_FORMAT) fail(`format ${String(header.format)}`);
  const tableAt = Math.ceil((12 + length) / 4) * 4;
  const entries = header.bands.length * blockCount(header) + 1;
  const dataAt = tableAt + entries * 4;
  if (dataAt > bytes.length) fail("the block table runs past the end");
  // Copied into an aligned array (the Buffer may sit at any offset of a pooled ArrayBuffer).
  const offsets = new Uint32Array(entries);
  for (let i = 0; i < entries; i++) offsets[i] = bytes.readUInt32LE(tableAt + i * 4);
  if (dataAt + offsets[entries - 1]! !== bytes.length) fail("the blocks do not end where the file does");
  return { header, offsets, data: bytes.subarray(dataAt) };
}
