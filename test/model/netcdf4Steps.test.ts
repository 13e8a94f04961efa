/**
 * Steps of NetCDF-4 variables read with Node's zlib (src/model/netcdf4Steps.ts, hdf5Chunks.ts) must be
 * exactly what h5wasm reads, for every layout netCDF-C writes; anything else is left to h5wasm, with
 * the reason, and still read right through openNetcdf4.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import h5wasm from "h5wasm/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deflateSync } from "node:zlib";
import { decodeChunk, DEFLATE, listChunks, readChunkedLayout, SHUFFLE, unshuffle, type ByteSource, type ChunkedLayout } from "../../src/model/hdf5Chunks.ts";
import { h5wasmReady, openNetcdf4 } from "../../src/model/netcdf4.ts";
import { ChunkFile, type ElementType, type StepReader } from "../../src/model/netcdf4Steps.ts";
import { UserError } from "../../src/errors.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN, removeTempDirs, tempDir, type FieldSpec } from "./helpers.ts";

const LAT = [60, 60.5, 61, 61.5, 62, 62.5, 63];
const LON = [-20, -19.5, -19, -18.5, -18, -17.5, -17, -16.5, -16];
const TIMES = [1 / 48, 3 / 48, 5 / 48];
const CELLS = LAT.length * LON.length;

/** Values that differ in every byte from step to step and cell to cell, with zeros and fill values. */
function values(type: FieldSpec["type"]): string {
  return Array.from({ length: TIMES.length * CELLS }, (_, k) => {
    if (k % 11 === 3) return "0";
    if (k % 13 === 5) return "_";
    if (type === "float" || type === "double") return String((k * 1234.567 - 40000) * (k % 2 ? 1 : 1e-3));
    if (type === "short") return String((k * 397) % 30000 - 15000);
    if (type === "byte") return String((k % 250) - 125);
    return String(k * 104729 - 5_000_000);
  }).join(", ");
}

interface Variant {
  name: string;
  type: NonNullable<FieldSpec["type"]>;
  attributes: string[];
  /** Undefined: read without h5wasm; otherwise the reason given for leaving it to h5wasm. */
  leftToH5wasm?: RegExp;
  dims?: string;
}

const VARIANTS: Variant[] = [
  { name: "deflate", type: "float", attributes: ["_DeflateLevel = 4", "_ChunkSizes = 1, 7, 9"] },
  { name: "shuffle", type: "float", attributes: ["_DeflateLevel = 4", '_Shuffle = "true"', "_ChunkSizes = 1, 7, 9"] },
  { name: "double_shuffle", type: "double", attributes: ["_DeflateLevel = 1", '_Shuffle = "true"'] },
  { name: "short_shuffle", type: "short", attributes: ["_DeflateLevel = 9", '_Shuffle = "true"', "_ChunkSizes = 1, 4, 4"] },
  { name: "signed_bytes", type: "byte", attributes: ["_DeflateLevel = 2"] },
  { name: "int_uncompressed", type: "int", attributes: ['_Storage = "chunked"', "_ChunkSizes = 1, 7, 9"] },
  // Tiles with edge chunks stored whole (7 = 3 + 3 + 1 rows, 9 = 4 + 4 + 1 columns), two steps a chunk.
  { name: "tiled", type: "float", attributes: ["_DeflateLevel = 4", '_Shuffle = "true"', "_ChunkSizes = 2, 3, 4"] },
  { name: "big_endian", type: "float", attributes: ["_DeflateLevel = 4", '_Endianness = "big"'], leftToH5wasm: /other byte order/ },
  { name: "fletcher32", type: "float", attributes: ["_DeflateLevel = 4", '_Fletcher32 = "true"'], leftToH5wasm: /filter 3 /  },
  // A variable on an unlimited dimension is always chunked: this one is on a fixed one.
  { name: "contiguous", type: "float", attributes: ['_Storage = "contiguous"'], leftToH5wasm: /contiguous storage/, dims: "steps, lat, lon" },
];

type H5File = InstanceType<typeof h5wasm.File>;

function objectAddress(file: H5File, name: string): number {
  const reference = Uint8Array.from((file.get(name) as ReturnType<H5File["get"]> & { create_reference(): { ref_data: ArrayLike<number> } }).create_reference().ref_data);
  return Number(new DataView(reference.buffer).getBigUint64(0, true));
}

/** A reader of a dataset's steps without h5wasm, or the reason there is none. */
function stepReader(chunkFile: ChunkFile, headerAddress: number, shape: number[], element: ElementType): StepReader | string {
  const plan = chunkFile.stepPlan(headerAddress, shape, element);
  return typeof plan === "string" ? plan : chunkFile.stepsOf(plan);
}

function bytesOf(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

afterAll(removeTempDirs);

describe.skipIf(!HAS_NETCDF_BIN)(`files written by netCDF-C (ncgen -k nc4)${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  let file: string;
  let h5: H5File;

  beforeAll(async () => {
    await h5wasmReady();
    const fields = VARIANTS.map((variant): FieldSpec => ({ name: variant.name, type: variant.type, dims: variant.dims, attributes: variant.attributes, data: values(variant.type) }));
    file = await ncgen(eemepCdl({ lat: LAT, lon: LON, times: TIMES, fields, dimensions: `steps = ${TIMES.length} ;` }), path.join(await tempDir(), "layouts.nc"), "nc4");
    h5 = new h5wasm.File(file, "r");
    return () => h5.close();
  });

  for (const variant of VARIANTS) {
    it(`${variant.name}: ${variant.leftToH5wasm ? "left to h5wasm, and read right" : "read without h5wasm, the same bytes as h5wasm's"}`, async () => {
      const dataset = h5.get(variant.name) as unknown as { metadata: { shape: number[]; type: number; size: number; signed: boolean; littleEndian: boolean }; slice(ranges: Array<[number, number]>): ArrayBufferView };
      const chunkFile = new ChunkFile(file);
      const source = await openNetcdf4(file, "run/layouts.nc");
      try {
        const reader = stepReader(chunkFile, objectAddress(h5, variant.name), dataset.metadata.shape, dataset.metadata);
        if (variant.leftToH5wasm) expect(reader).toMatch(variant.leftToH5wasm);
        else expect(typeof reader, String(reader)).toBe("object");
        for (let step = 0; step < TIMES.length; step++) {
          const expected = dataset.slice([[step, step + 1]]);
          if (typeof reader === "object") expect(bytesOf(reader.read(step)!).equals(bytesOf(expected)), `step ${step} read directly`).toBe(true);
          const through = await source.readStep(variant.name, step);
          expect(through.constructor).toBe(expected.constructor);
          expect(bytesOf(through).equals(bytesOf(expected)), `step ${step}`).toBe(true);
        }
      } finally {
        source.close();
        chunkFile.close();
      }
    });
  }

  it("a damaged chunk is named as h5wasm names it: the file and the variable", async () => {
    const damaged = path.join(path.dirname(file), "damaged.nc");
    const bytes = await readFile(file);
    const chunkFile = new ChunkFile(file);
    const reader = stepReader(chunkFile, objectAddress(h5, "deflate"), [3, LAT.length, LON.length], { type: 1, size: 4, signed: true, littleEndian: true });
    chunkFile.close();
    expect(typeof reader).toBe("object");
    // Find step 1's chunk: the deflate stream whose inflation is that step, and break its middle.
    const expected = bytesOf((h5.get("deflate") as unknown as { slice(r: Array<[number, number]>): ArrayBufferView }).slice([[1, 2]]));
    const stored = deflateSync(expected, { level: 4 });
    const at = bytes.indexOf(stored.subarray(0, 12));
    expect(at, "the chunk as zlib level 4 writes it").toBeGreaterThan(0);
    for (let index = at + 4; index < at + stored.length - 4; index++) bytes[index] = bytes[index]! ^ 0x5a;
    await writeFile(damaged, bytes);
    const source = await openNetcdf4(damaged, "run/damaged.nc");
    try {
      const error = await source.readStep("deflate", 1).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).where).toBe("run/damaged.nc");
      expect((error as UserError).message).toMatch(/variable deflate cannot be read at index 1/);
      expect(bytesOf(await source.readStep("deflate", 0)).equals(bytesOf((h5.get("deflate") as unknown as { slice(r: Array<[number, number]>): ArrayBufferView }).slice([[0, 1]])))).toBe(true);
    } finally {
      source.close();
    }
  });
});

describe("files written by HDF5 itself (h5wasm)", () => {
  const STEP = Float32Array.from({ length: CELLS }, (_, k) => (k % 5 === 0 ? 0 : k * 1.5));

  async function write(name: string, options: { libver?: ["earliest", "v108"] | ["latest", "latest"]; resizeTo?: number }): Promise<string> {
    await h5wasmReady();
    const file = path.join(await tempDir(), name);
    const out = new h5wasm.File(file, "w", options.libver ? { libver: options.libver } : {});
    try {
      const dataset = out.create_dataset({ name: "ash", data: STEP, shape: [1, LAT.length, LON.length], maxshape: [null, LAT.length, LON.length], chunks: [1, LAT.length, LON.length], compression: 4 });
      if (options.resizeTo) dataset.resize([options.resizeTo, LAT.length, LON.length]);
    } finally {
      out.close();
    }
    return file;
  }

  it("a step whose chunk was never written is left to h5wasm, which gives its fill value", async () => {
    const file = await write("partly.nc", { resizeTo: 3 });
    const source = await openNetcdf4(file, "run/partly.nc");
    const chunkFile = new ChunkFile(file);
    const h5 = new h5wasm.File(file, "r");
    try {
      const reader = stepReader(chunkFile, objectAddress(h5, "ash"), [3, LAT.length, LON.length], { type: 1, size: 4, signed: true, littleEndian: true });
      expect(typeof reader, String(reader)).toBe("object");
      if (typeof reader === "string") return;
      expect([...reader.read(0)!]).toEqual([...STEP]);
      expect(reader.read(1), "no chunk for step 1").toBeUndefined();
      expect([...(await source.readStep("ash", 0))]).toEqual([...STEP]);
      expect([...(await source.readStep("ash", 2))]).toEqual(Array.from({ length: CELLS }, () => 0));
    } finally {
      h5.close();
      chunkFile.close();
      source.close();
    }
  });

  it("files in HDF5 1.6's format (superblock 0, version-1 object headers) are read without h5wasm", async () => {
    const file = await write("oldest.nc", { libver: ["earliest", "v108"] });
    const bytes = await readFile(file);
    expect(bytes[8], "superblock version").toBe(0);
    expect(bytes.includes("OHDR"), "no version-2 object header").toBe(false);
    const chunkFile = new ChunkFile(file);
    const h5 = new h5wasm.File(file, "r");
    try {
      const reader = stepReader(chunkFile, objectAddress(h5, "ash"), [1, LAT.length, LON.length], { type: 1, size: 4, signed: true, littleEndian: true });
      expect(typeof reader, String(reader)).toBe("object");
      if (typeof reader === "object") expect([...reader.read(0)!]).toEqual([...STEP]);
    } finally {
      h5.close();
      chunkFile.close();
    }
  });

  it("chunks far larger than the steps they hold (a forged header) are left to h5wasm, not inflated here", async () => {
    await h5wasmReady();
    const file = path.join(await tempDir(), "oversized.nc");
    const out = new h5wasm.File(file, "w");
    try {
      out.create_dataset({ name: "ash", data: STEP, shape: [1, LAT.length, LON.length], maxshape: [null, null, null], chunks: [1, 70, 90], compression: 4 });
    } finally {
      out.close();
    }
    const source = await openNetcdf4(file, "run/oversized.nc");
    const chunkFile = new ChunkFile(file);
    const h5 = new h5wasm.File(file, "r");
    try {
      expect(stepReader(chunkFile, objectAddress(h5, "ash"), [1, LAT.length, LON.length], { type: 1, size: 4, signed: true, littleEndian: true })).toMatch(/chunks of 6300 elements for steps of 63/);
      expect([...(await source.readStep("ash", 0))]).toEqual([...STEP]);
    } finally {
      h5.close();
      chunkFile.close();
      source.close();
    }
  });

  it("HDF5's newer chunk indexes (layout version 4 or later) are left to h5wasm, and read right", async () => {
    const file = await write("latest.nc", { libver: ["latest", "latest"], resizeTo: 2 });
    const source = await openNetcdf4(file, "run/latest.nc");
    const chunkFile = new ChunkFile(file);
    const h5 = new h5wasm.File(file, "r");
    try {
      expect(stepReader(chunkFile, objectAddress(h5, "ash"), [2, LAT.length, LON.length], { type: 1, size: 4, signed: true, littleEndian: true })).toMatch(/data layout message of version [45]/);
      expect([...(await source.readStep("ash", 0))]).toEqual([...STEP]);
    } finally {
      h5.close();
      chunkFile.close();
      source.close();
    }
  });
});

describe("HDF5 filters undone", () => {
  it("unshuffle puts byte b of each element back from the b-th plane, leftover bytes as stored", () => {
    // 3 elements of 4 bytes + 2 leftover bytes, stored as the shuffle filter writes them.
    const shuffled = Uint8Array.of(0x10, 0x20, 0x30, 0x11, 0x21, 0x31, 0x12, 0x22, 0x32, 0x13, 0x23, 0x33, 0xee, 0xff);
    expect([...unshuffle(shuffled, 4)]).toEqual([0x10, 0x11, 0x12, 0x13, 0x20, 0x21, 0x22, 0x23, 0x30, 0x31, 0x32, 0x33, 0xee, 0xff]);
    expect([...unshuffle(Uint8Array.of(1, 2, 3, 4, 5, 6, 7), 2)]).toEqual([1, 4, 2, 5, 3, 6, 7]);
    expect([...unshuffle(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), 8)]).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 2, 4, 6, 8, 10, 12, 14, 16]);
    expect([...unshuffle(Uint8Array.of(9, 8, 7), 1)]).toEqual([9, 8, 7]);
  });

  it("decodes filters last to first, skips those the chunk's mask names, and checks the size", () => {
    const element = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8);
    const shuffled = Uint8Array.of(1, 5, 2, 6, 3, 7, 4, 8);
    const layout: ChunkedLayout = { chunkShape: [2], elementSize: 4, btreeAddress: 0, filters: [{ id: SHUFFLE, optional: false, clientData: [4] }, { id: DEFLATE, optional: false, clientData: [4] }] };
    expect([...decodeChunk(deflateSync(shuffled), layout, 0, 8)]).toEqual([...element]);
    expect([...decodeChunk(shuffled, layout, 0b10, 8)], "deflate skipped").toEqual([...element]);
    expect([...decodeChunk(deflateSync(element), layout, 0b01, 8)], "shuffle skipped").toEqual([...element]);
    expect(() => decodeChunk(deflateSync(element), layout, 0b01, 12)).toThrow(/8 bytes, not 12/);
  });
});

describe("forged HDF5 structures end in an error, not a loop or a huge allocation", () => {
  const sourceOf = (bytes: Uint8Array): ByteSource => ({ read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)) });

  it("an object header that continues into itself", () => {
    const bytes = new Uint8Array(40);
    const view = new DataView(bytes.buffer);
    bytes.set([1, 0, 1, 0, 1, 0, 0, 0, 24, 0, 0, 0], 0); // version 1, one message, 24 bytes of messages
    view.setUint16(16, 0x0010, true); // a continuation message
    view.setUint16(18, 16, true);
    view.setBigUint64(24, 16n, true); // … back to the block it is in
    view.setBigUint64(32, 24n, true);
    expect(() => readChunkedLayout(sourceOf(bytes), 0)).toThrow(/continues at 16 twice \(a loop\)/);
  });

  it("a chunk index whose nodes share a leaf, naming over a million chunks", () => {
    const keySize = 8 + 8 * 3;
    const node = (level: number, entries: number, child: (entry: number) => number): Uint8Array => {
      const bytes = new Uint8Array(24 + entries * (keySize + 8) + keySize);
      const view = new DataView(bytes.buffer);
      bytes.set([0x54, 0x52, 0x45, 0x45, 1, level], 0); // "TREE", raw data chunks
      view.setUint16(6, entries, true);
      for (let entry = 0; entry < entries; entry++) view.setBigUint64(24 + entry * (keySize + 8) + keySize, BigInt(child(entry)), true);
      return bytes;
    };
    const leaf = node(0, 1000, (entry) => 1_000_000 + entry);
    const root = node(1, 1100, () => 0); // every child: the leaf, placed at address 0
    const file = new Uint8Array(leaf.length + root.length);
    file.set(leaf, 0);
    file.set(root, leaf.length);
    const layout: ChunkedLayout = { chunkShape: [1, 2], elementSize: 4, btreeAddress: leaf.length, filters: [] };
    expect(() => listChunks(sourceOf(file), layout)).toThrow(/more than 1000000 chunks/);
    expect(listChunks(sourceOf(file), { ...layout, btreeAddress: 0 })).toHaveLength(1000);
  });
});
