/**
 * One index of the first dimension of a chunked NetCDF-4 variable (one time step), read from the file
 * and inflated by Node's zlib (src/model/hdf5Chunks.ts) instead of h5wasm's WebAssembly build: about
 * three times faster for the deflated fields model output holds.
 *
 * `stepPlan` answers with a plan only for what it reads exactly as h5wasm would: numbers of 1, 2, 4
 * or 8 bytes (no 8-byte integers) in the machine's byte order, chunked with a version-1 B-tree, deflate
 * and shuffle. For anything else, and for a step that has a chunk never written (its cells are the
 * fill value, which h5wasm knows), it answers why not, and netcdf4.ts reads through h5wasm.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { checkSuperblock, decodeChunk, listChunks, NotDescribed, readChunkedLayout, type ByteSource, type ChunkedLayout, type StoredChunk } from "./hdf5Chunks.ts";
import type { NumericArray } from "./source.ts";

export interface ElementType {
  /** h5wasm's class: 0 integer, 1 float. */
  type: number;
  size: number;
  signed: boolean;
  littleEndian: boolean;
}

export interface StepReader {
  /**
   * The step's values, or undefined when this reader cannot give them: one of its chunks was never written (its
   * cells are the fill value) or does not decode. The file's own library then reads the step, or names the damage.
   */
  read(index: number): NumericArray | undefined;
}

/** Where a variable's chunks are and how to decode them: what another thread needs to read its steps (structured-cloneable). */
export interface StepPlan {
  layout: ChunkedLayout;
  chunks: StoredChunk[];
  shape: number[];
  element: ElementType;
}

type ArrayMaker = (buffer: ArrayBuffer, byteOffset: number, length: number) => NumericArray;

const MACHINE_LITTLE_ENDIAN = endianness() === "LE";

/** An open model-output file whose chunked variables can be read without h5wasm. */
export class ChunkFile {
  readonly #fd: number;
  readonly #source: ByteSource;
  readonly #fileSize: number;
  #superblockChecked = false;

  constructor(filePath: string) {
    this.#fd = openSync(filePath, "r");
    this.#fileSize = fstatSync(this.#fd).size;
    this.#source = {
      read: (offset, length) => {
        const bytes = new Uint8Array(Math.max(0, Math.min(length, this.#fileSize - offset)));
        let done = 0;
        while (done < bytes.length) {
          const got = readSync(this.#fd, bytes, done, bytes.length - done, offset + done);
          if (got === 0) break;
          done += got;
        }
        return bytes.subarray(0, done);
      },
    };
  }

  /**
   * How to read the steps of the dataset whose object header is at `headerAddress` (shape and element type
   * as h5wasm describes them), on this thread or another (stepsOf), or the reason it must be read through h5wasm.
   */
  stepPlan(headerAddress: number, shape: readonly number[], element: ElementType): StepPlan | string {
    try {
      const maker = arrayMaker(element);
      if (typeof maker === "string") return maker;
      if (shape.length === 0) return "a scalar";
      if (!this.#superblockChecked) checkSuperblock(this.#source);
      this.#superblockChecked = true;
      const layout = readChunkedLayout(this.#source, headerAddress);
      if (layout.chunkShape.length !== shape.length) return `chunks of rank ${layout.chunkShape.length} for a variable of rank ${shape.length}`;
      if (layout.elementSize !== element.size) return `chunks of ${layout.elementSize}-byte elements for ${element.size}-byte values`;
      // A chunk is inflated whole: one far larger than the steps it holds (a forged header) is not allocated here.
      const chunkElements = layout.chunkShape.reduce((product, size) => product * size, 1);
      const stepElements = shape.slice(1).reduce((product, size) => product * size, 1);
      if (chunkElements > 4 * Math.max(1, Math.min(layout.chunkShape[0]!, shape[0]!)) * stepElements) return `chunks of ${chunkElements} elements for steps of ${stepElements}`;
      const chunks = listChunks(this.#source, layout);
      for (const chunk of chunks) {
        if (chunk.address < 0 || chunk.address + chunk.size > this.#fileSize) return `a chunk at ${chunk.address} beyond the end of the file`;
      }
      const { type, size, signed, littleEndian } = element;
      return { layout, chunks, shape: [...shape], element: { type, size, signed, littleEndian } };
    } catch (error) {
      // Not described, or damaged as this module reads it: h5wasm reads it, or names the damage.
      return error instanceof NotDescribed ? error.message : `unreadable here (${(error as Error).message})`;
    }
  }

  /** A reader of the steps a plan describes, from this file. */
  stepsOf(plan: StepPlan): StepReader {
    const maker = arrayMaker(plan.element);
    if (typeof maker === "string") throw new Error(`Internal error: a step plan for ${maker}`);
    return new ChunkedSteps(this.#source, plan.layout, plan.chunks, plan.shape, maker);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

class ChunkedSteps implements StepReader {
  readonly #source: ByteSource;
  readonly #layout: ChunkedLayout;
  readonly #shape: readonly number[];
  readonly #makeArray: ArrayMaker;
  /** Chunks by the index of the first dimension they start at. */
  readonly #byStart = new Map<number, StoredChunk[]>();
  readonly #planeElements: number;

  constructor(source: ByteSource, layout: ChunkedLayout, chunks: StoredChunk[], shape: readonly number[], makeArray: ArrayMaker) {
    this.#source = source;
    this.#layout = layout;
    this.#shape = shape;
    this.#makeArray = makeArray;
    this.#planeElements = shape.slice(1).reduce((product, size) => product * size, 1);
    for (const chunk of chunks) {
      const list = this.#byStart.get(chunk.start[0]!);
      if (list) list.push(chunk);
      else this.#byStart.set(chunk.start[0]!, [chunk]);
    }
  }

  read(index: number): NumericArray | undefined {
    try {
      return this.#assemble(index);
    } catch {
      return undefined;
    }
  }

  #assemble(index: number): NumericArray | undefined {
    const chunkShape = this.#layout.chunkShape;
    const elementSize = this.#layout.elementSize;
    const chunks = this.#byStart.get(index - (index % chunkShape[0]!)) ?? [];
    const chunkElements = chunkShape.reduce((product, size) => product * size, 1);
    const chunkBytes = chunkElements * elementSize;
    const rank = this.#shape.length;
    const wholePlane = chunkShape[0] === 1 && chunkShape.every((size, dimension) => dimension === 0 || size === this.#shape[dimension]);
    if (wholePlane) {
      // netCDF-C's default and EEMEP's: one chunk holds the step, so its bytes are the answer.
      const chunk = chunks[0];
      if (!chunk) return undefined;
      const bytes = this.#decode(chunk, chunkBytes);
      return bytes.byteOffset % elementSize === 0 ? this.#makeArray(bytes.buffer as ArrayBuffer, bytes.byteOffset, this.#planeElements) : this.#makeArray(bytes.slice().buffer, 0, this.#planeElements);
    }
    // Chunks that tile the step: each copied row by row, clipped to the variable (edge chunks are stored whole).
    const out = new Uint8Array(this.#planeElements * elementSize);
    const innerShape = this.#shape.slice(1);
    const chunkInner = chunkShape.slice(1);
    const chunkStrides = strides(chunkInner);
    const planeStrides = strides(innerShape);
    const layerStart = (index % chunkShape[0]!) * (chunkElements / chunkShape[0]!);
    let covered = 0;
    for (const chunk of chunks) {
      const bytes = this.#decode(chunk, chunkBytes);
      const extent = chunkInner.map((size, dimension) => Math.min(size, innerShape[dimension]! - chunk.start[dimension + 1]!));
      if (extent.some((size) => size <= 0)) continue;
      const rowLength = extent.at(-1) ?? 1;
      const rows = extent.slice(0, -1).reduce((product, size) => product * size, 1);
      for (let row = 0; row < rows; row++) {
        let rest = row;
        let source = layerStart;
        let target = rank > 1 ? chunk.start[rank - 1]! : 0;
        for (let dimension = extent.length - 2; dimension >= 0; dimension--) {
          const position = rest % extent[dimension]!;
          rest = Math.floor(rest / extent[dimension]!);
          source += position * chunkStrides[dimension]!;
          target += (chunk.start[dimension + 1]! + position) * planeStrides[dimension]!;
        }
        out.set(bytes.subarray(source * elementSize, (source + rowLength) * elementSize), target * elementSize);
      }
      covered += rows * rowLength;
    }
    if (covered !== this.#planeElements) return undefined;
    return this.#makeArray(out.buffer, 0, this.#planeElements);
  }

  #decode(chunk: StoredChunk, chunkBytes: number): Uint8Array {
    return decodeChunk(this.#source.read(chunk.address, chunk.size), this.#layout, chunk.filterMask, chunkBytes);
  }
}

/** Elements between neighbours along each dimension of a row-major array of this shape. */
function strides(shape: readonly number[]): number[] {
  const result = shape.map(() => 1);
  for (let dimension = shape.length - 2; dimension >= 0; dimension--) result[dimension] = result[dimension + 1]! * shape[dimension + 1]!;
  return result;
}

function arrayMaker(element: ElementType): ArrayMaker | string {
  if (element.littleEndian !== MACHINE_LITTLE_ENDIAN) return "values in the other byte order";
  if (element.type === 1) {
    if (element.size === 4) return (buffer, offset, length) => new Float32Array(buffer, offset, length);
    if (element.size === 8) return (buffer, offset, length) => new Float64Array(buffer, offset, length);
  } else if (element.type === 0) {
    const signed = element.signed;
    if (element.size === 1) return signed ? (b, o, l) => new Int8Array(b, o, l) : (b, o, l) => new Uint8Array(b, o, l);
    if (element.size === 2) return signed ? (b, o, l) => new Int16Array(b, o, l) : (b, o, l) => new Uint16Array(b, o, l);
    if (element.size === 4) return signed ? (b, o, l) => new Int32Array(b, o, l) : (b, o, l) => new Uint32Array(b, o, l);
  }
  return `values of class ${element.type} and ${element.size} bytes`;
}
