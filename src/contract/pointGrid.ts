/**
 * The point-query grid: one artefact per model output file of a run, holding the concentration of every
 * flight-level band at every step on the model's own grid, written by the build
 * (src/build/pointGrids.ts) and read by the server (src/server/pointGrids.ts). Layout, little-endian:
 *
 *   offset 0    "ASHGRID2"                      magic and format version (8 bytes)
 *   offset 8    u32 H                           byte length of the header
 *   offset 12   H bytes of JSON                 PointGridHeader (UTF-8), then zero bytes to a multiple of 4
 *   then        u32 × (bands × blocks + 1)      offsets of the blocks, from the start of the data; block k of
 *                                               band b is entry b × blocks + k, its length the next entry minus it
 *   then        the data                        the blocks; a block whose codes are all 0 over every step has
 *                                               length 0
 *
 * Blocks are BLOCK × BLOCK cells (row-major over the grid, the last row and column of blocks clipped at
 * its edges). A block is, for each of its cells (row-major within the block), the byte length of that
 * cell's series as an unsigned LEB128 varint, then the series one after the other. A series holds the
 * codes of every step (src/formats/concentrationCodes.ts, u16) as differences from the step before
 * (mod 2^16, read as signed 16-bit), each a token:
 *
 *   varint z > 0                                 a difference, zigzag-coded (1 → −1, 2 → +1, 3 → −2, …)
 *   varint 0, varint n                           n + 1 differences of 0 (the code stays)
 *
 * and the steps after the last token keep the last code (a cell without ash is an empty series). A point
 * decodes only the cells it needs (a few hundred bytes) straight from the artefact: no block is inflated,
 * nothing is cached, and a plume's codes, changing slowly from hour to hour, take one or two bytes a step.
 */
import type { GridGeometry } from "../geo/gridCells.ts";

export const POINT_GRID_MAGIC = "ASHGRID2";
/** Artefact key of a run's grid: `runs/<reftime>/grids/<file slug>` (the server finds a run's grids by the prefix). */
export const pointGridKey = (reftime: string, fileSlug: string): string => `runs/${reftime}/grids/${fileSlug}`;
export const pointGridKeyPrefix = (reftime: string): string => `runs/${reftime}/grids/`;
export const POINT_GRID_FORMAT = 2;
/** Cells per block side: blocks without ash cost 4 bytes, and a cell is found by skipping at most 63 lengths. */
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
  const lengths = new ByteWriter(width * height);
  const series = new ByteWriter(width * height * 4);
  let any = 0;
  for (let y = y0; y < y0 + height; y++) {
    for (let x = x0; x < x0 + width; x++) {
      const start = (y * nx + x) * steps;
      const before = series.length;
      let previous = 0;
      let zeros = 0;
      for (let t = 0; t < steps; t++) {
        const code = codes[start + t]!;
        any |= code;
        const difference = (((code - previous) & 0xffff) << 16) >> 16;
        previous = code;
        if (difference === 0) {
          zeros++;
          continue;
        }
        if (zeros > 0) {
          series.varint(0);
          series.varint(zeros - 1);
          zeros = 0;
        }
        series.varint(difference > 0 ? 2 * difference : -2 * difference - 1);
      }
      lengths.varint(series.length - before);
    }
  }
  if (any === 0) return Buffer.alloc(0);
  // Its own memory, not a slice of Buffer's shared pool: blocks are posted between threads.
  const bytes = Buffer.allocUnsafeSlow(lengths.length + series.length);
  bytes.set(lengths.bytes());
  bytes.set(series.bytes(), lengths.length);
  return bytes;
}

/**
 * The codes of every step of one cell of a block (`cell`: row-major within the block of `cells`) into
 * `out` (length `steps`), from the block's stored bytes. Throws on bytes that do not decode to `steps`.
 * Varints are read inline (no reader object, no call per varint), and the lengths after the cell's own are
 * stepped over by their last bytes alone: the table of 64 lengths is most of what a point reads.
 */
export function decodeCellSeries(stored: Uint8Array, cells: number, cell: number, steps: number, out: Uint16Array): void {
  const size = stored.length;
  let at = 0;
  let skip = 0;
  let length = 0;
  for (let c = 0; c <= cell; c++) {
    let value = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = at < size ? stored[at++]! : 0;
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    if (c < cell) skip += value;
    else length = value;
  }
  for (let rest = cells - cell - 1; rest > 0 && at < size; at++) if ((stored[at]! & 0x80) === 0) rest--;
  at += skip;
  const end = at + length;
  if (end > size) throw new Error(`a grid block's cell ${cell} runs past the block`);
  let code = 0;
  let t = 0;
  while (at < end) {
    let z = 0;
    let scale = 1;
    let byte: number;
    do {
      byte = stored[at++]!;
      z += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    if (z === 0) {
      let run = 0;
      scale = 1;
      do {
        byte = stored[at++]!;
        run += (byte & 0x7f) * scale;
        scale *= 128;
      } while (byte & 0x80);
      const last = t + run + 1;
      if (last > steps) throw new Error(`a grid block's cell ${cell} holds more than ${steps} steps`);
      while (t < last) out[t++] = code;
      continue;
    }
    if (t >= steps) throw new Error(`a grid block's cell ${cell} holds more than ${steps} steps`);
    code = (code + (z & 1 ? -(z + 1) / 2 : z / 2)) & 0xffff;
    out[t++] = code;
  }
  while (t < steps) out[t++] = code;
}

/** Bytes appended one varint at a time (a block is at most a few tens of KiB). */
class ByteWriter {
  #bytes: Uint8Array;
  length = 0;

  constructor(capacity: number) {
    this.#bytes = new Uint8Array(Math.max(16, capacity));
  }

  varint(value: number): void {
    if (this.length + 5 > this.#bytes.length) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    while (value >= 0x80) {
      this.#bytes[this.length++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.#bytes[this.length++] = value;
  }

  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.length);
  }
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
