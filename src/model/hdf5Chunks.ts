/**
 * Where the chunks of an HDF5 dataset lie in its file, and how to decode one, for the layouts netCDF-C
 * writes: object headers of version 1 or 2, a data layout message of version 3 (chunked, indexed by a
 * version 1 B-tree) and a pipeline of deflate and shuffle only.
 *
 * Why: h5wasm inflates in WebAssembly at about a third of the speed of Node's zlib, and a full-size
 * model run is hundreds of such chunks. h5wasm still opens the file, names the variables and reads
 * everything this module does not describe; for a dataset it does not recognise it answers why, and
 * the caller reads that dataset through h5wasm.
 *
 * Pure: bytes come from a `ByteSource`; decoding uses zlib. Layout from the HDF5 File Format
 * Specification, version 3.0 (sections II.A, III.A, IV.A.1–2, IV.A.2.i and IV.A.2.l).
 */
import { endianness } from "node:os";
import { inflateSync } from "node:zlib";

export interface ByteSource {
  /** `length` bytes from `offset`, or fewer at the end of the file. */
  read(offset: number, length: number): Uint8Array;
}

export interface Filter {
  id: number;
  /** Optional filters may be skipped for a chunk (its filter mask says so). */
  optional: boolean;
  clientData: number[];
}

export interface ChunkedLayout {
  /** Chunk dimensions, outermost first (the dataset's rank). */
  chunkShape: number[];
  elementSize: number;
  btreeAddress: number;
  filters: Filter[];
}

export interface StoredChunk {
  /** Index of the chunk's first element in each dimension. */
  start: number[];
  address: number;
  size: number;
  /** Bit i set: filter i of the pipeline was not applied to this chunk. */
  filterMask: number;
}

export const DEFLATE = 1;
export const SHUFFLE = 2;
const MACHINE_LITTLE_ENDIAN = endianness() === "LE";
const SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];
const UNDEFINED_ADDRESS = -1;
const MESSAGE_LAYOUT = 0x0008;
const MESSAGE_FILTERS = 0x000b;
const MESSAGE_CONTINUATION = 0x0010;
/** Continuation blocks followed, and bytes read, before a header is called damaged (real ones take a few KB). */
const MAX_HEADER_BLOCKS = 1024;
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
/** B-tree nodes visited before the index is called damaged: a loop guard. */
const MAX_BTREE_NODES = 1 << 16;
/** Chunks listed before the index is called damaged: nodes that share children could name billions. */
const MAX_CHUNKS = 1_000_000;

/** Why a dataset is left to h5wasm: its layout or pipeline is not one this module reads. */
export class NotDescribed extends Error {}

/**
 * Checks that the file is one this module reads: a superblock at its start, base address 0, and 8-byte
 * addresses and lengths (what every 64-bit HDF5 library writes; the reads below take them as 8 bytes).
 */
export function checkSuperblock(source: ByteSource): void {
  const head = source.read(0, 40);
  if (head.length < 24 || SIGNATURE.some((byte, index) => head[index] !== byte)) throw new NotDescribed("no HDF5 superblock at offset 0");
  const version = head[8]!;
  // Where the sizes and the base address are: version 1 adds 4 bytes (its B-tree K and a reserved field) before the address.
  const [offsetSize, lengthSize, baseAt] = version === 0 ? [head[13]!, head[14]!, 24] : version === 1 ? [head[13]!, head[14]!, 28] : version <= 3 ? [head[9]!, head[10]!, 12] : [0, 0, 0];
  if (offsetSize !== 8 || lengthSize !== 8) throw new NotDescribed(`superblock version ${version} with ${offsetSize}-byte addresses`);
  const fields = new Reader(head, 0);
  fields.at = baseAt;
  if (fields.uint(8) !== 0) throw new NotDescribed("a base address other than 0 (a user block)");
}

/** The chunked layout and filters of the dataset whose object header is at `headerAddress`. */
export function readChunkedLayout(source: ByteSource, headerAddress: number): ChunkedLayout {
  let layout: Omit<ChunkedLayout, "filters"> | undefined;
  let filters: Filter[] = [];
  for (const message of headerMessages(source, headerAddress)) {
    if (message.type === MESSAGE_LAYOUT) layout = parseLayout(message.body);
    else if (message.type === MESSAGE_FILTERS) filters = parseFilters(message.body);
  }
  if (!layout) throw new NotDescribed("no data layout message");
  for (const filter of filters) {
    if (filter.id !== DEFLATE && filter.id !== SHUFFLE) throw new NotDescribed(`filter ${filter.id} in its pipeline`);
  }
  return { ...layout, filters };
}

/** Every stored chunk of the dataset, in the B-tree's order (by start, outermost dimension first). */
export function listChunks(source: ByteSource, layout: ChunkedLayout): StoredChunk[] {
  const rank = layout.chunkShape.length;
  const chunks: StoredChunk[] = [];
  if (layout.btreeAddress === UNDEFINED_ADDRESS) return chunks; // nothing written yet
  const keySize = 8 + 8 * (rank + 1);
  let visited = 0;
  const visit = (address: number, expectedLevel: number | undefined): void => {
    if (++visited > MAX_BTREE_NODES) throw new Error("its chunk B-tree has too many nodes (a loop?)");
    const head = new Reader(source.read(address, 24), address);
    if (head.ascii(4) !== "TREE") throw new Error(`no B-tree node at address ${address}`);
    const type = head.uint(1);
    const level = head.uint(1);
    const entries = head.uint(2);
    if (type !== 1) throw new Error(`B-tree node at ${address} is of type ${type}, not raw data chunks`);
    if (expectedLevel !== undefined && level !== expectedLevel) throw new Error(`B-tree node at ${address} is at level ${level}, expected ${expectedLevel}`);
    const body = new Reader(source.read(address + 24, entries * (keySize + 8) + keySize), address + 24);
    for (let entry = 0; entry < entries; entry++) {
      const size = body.uint(4);
      const filterMask = body.uint(4);
      const start: number[] = [];
      for (let dimension = 0; dimension < rank; dimension++) start.push(body.uint(8));
      body.skip(8); // the element offset, always 0
      const child = body.uint(8);
      if (level > 0) visit(child, level - 1);
      else if (chunks.push({ start, address: child, size, filterMask }) > MAX_CHUNKS) throw new Error(`its chunk B-tree names more than ${MAX_CHUNKS} chunks`);
    }
  };
  visit(layout.btreeAddress, undefined);
  return chunks;
}

/** The bytes of one chunk as the dataset holds them: its filters undone, last to first. */
export function decodeChunk(stored: Uint8Array, layout: ChunkedLayout, filterMask: number, expectedBytes: number): Uint8Array {
  let bytes = stored;
  for (let index = layout.filters.length - 1; index >= 0; index--) {
    if (filterMask & (1 << index)) continue;
    const filter = layout.filters[index]!;
    // One output buffer a byte larger than the chunk: zlib then ends in one call, with nothing to join.
    if (filter.id === DEFLATE) bytes = inflateSync(bytes, { chunkSize: Math.max(64, expectedBytes + 1), maxOutputLength: expectedBytes });
    else bytes = unshuffle(bytes, filter.clientData[0] ?? layout.elementSize);
  }
  if (bytes.length !== expectedBytes) throw new Error(`a chunk decodes to ${bytes.length} bytes, not ${expectedBytes}`);
  return bytes;
}

/** HDF5's shuffle filter undone: byte b of every element was stored in the b-th plane. */
export function unshuffle(bytes: Uint8Array, elementSize: number): Uint8Array {
  if (elementSize <= 1) return bytes;
  const elements = Math.floor(bytes.length / elementSize);
  const out = new Uint8Array(bytes.length);
  if (elementSize === 4 && MACHINE_LITTLE_ENDIAN) {
    // float32, the usual case: whole elements written at once, four times fewer stores.
    const words = new Uint32Array(out.buffer, 0, elements);
    const second = elements;
    const third = 2 * elements;
    const fourth = 3 * elements;
    for (let element = 0; element < elements; element++) {
      words[element] = (bytes[element]! | (bytes[second + element]! << 8) | (bytes[third + element]! << 16) | (bytes[fourth + element]! << 24)) >>> 0;
    }
    out.set(bytes.subarray(elements * 4), elements * 4);
    return out;
  }
  for (let byte = 0; byte < elementSize; byte++) {
    const plane = byte * elements;
    for (let element = 0, at = byte; element < elements; element++, at += elementSize) out[at] = bytes[plane + element]!;
  }
  out.set(bytes.subarray(elements * elementSize), elements * elementSize); // leftover bytes are stored as they are
  return out;
}

interface Message {
  type: number;
  body: Uint8Array;
}

function* headerMessages(source: ByteSource, address: number): Generator<Message> {
  const first = source.read(address, 16);
  const isVersion2 = first[0] === 0x4f && first[1] === 0x48 && first[2] === 0x44 && first[3] === 0x52; // "OHDR"
  const blocks: Array<[number, number]> = [];
  let flags = 0;
  if (isVersion2) {
    const head = new Reader(source.read(address, 32), address);
    head.skip(4);
    if (head.uint(1) !== 2) throw new NotDescribed("an object header of an unknown version");
    flags = head.uint(1);
    if (flags & 0x20) head.skip(16); // times
    if (flags & 0x10) head.skip(4); // attribute storage phase change
    const length = head.uint(1 << (flags & 0x03));
    blocks.push([head.at, length]);
  } else {
    if (first[0] !== 1) throw new NotDescribed("an object header of an unknown version");
    const head = new Reader(first, address);
    head.skip(8);
    blocks.push([address + 16, head.uint(4)]);
  }
  const seen = new Set<number>();
  let headerBytes = 0;
  for (let index = 0; index < blocks.length; index++) {
    const [start, length] = blocks[index]!;
    headerBytes += length;
    if (index >= MAX_HEADER_BLOCKS || headerBytes > MAX_HEADER_BYTES) throw new Error("its object header is longer than any real one");
    if (seen.has(start)) throw new Error(`its object header continues at ${start} twice (a loop)`);
    seen.add(start);
    const block = new Reader(source.read(start, length), start);
    let end = length;
    if (isVersion2 && index > 0) {
      // A continuation block is its signature, messages and checksum; the first block's length counts messages only.
      if (block.ascii(4) !== "OCHK") throw new Error(`no object header continuation at address ${start}`);
      end = length - 4;
    }
    const headerSize = isVersion2 ? ((flags & 0x04) ? 6 : 4) : 8;
    while (block.at - start + headerSize <= end) {
      const type = isVersion2 ? block.uint(1) : block.uint(2);
      const size = block.uint(2);
      const messageFlags = block.uint(1);
      block.skip(isVersion2 ? ((flags & 0x04) ? 2 : 0) : 3);
      if (block.at - start + size > end) throw new Error(`an object header message at address ${block.at} runs past its block`);
      const body = block.bytes(size);
      if (type === MESSAGE_CONTINUATION) {
        const at = new Reader(body, 0);
        blocks.push([at.uint(8), at.uint(8)]);
      } else if (type === MESSAGE_LAYOUT || type === MESSAGE_FILTERS) {
        if (messageFlags & 0x02) throw new NotDescribed("a shared layout or filter message");
        yield { type, body };
      }
    }
  }
}

function parseLayout(body: Uint8Array): Omit<ChunkedLayout, "filters"> {
  const reader = new Reader(body, 0);
  const version = reader.uint(1);
  if (version !== 3) throw new NotDescribed(`a data layout message of version ${version}`);
  const layoutClass = reader.uint(1);
  if (layoutClass !== 2) throw new NotDescribed(layoutClass === 1 ? "contiguous storage" : "compact storage");
  const dimensionality = reader.uint(1);
  const btreeAddress = reader.uint(8);
  const dimensions: number[] = [];
  for (let index = 0; index < dimensionality; index++) dimensions.push(reader.uint(4));
  const elementSize = dimensions.pop()!;
  return { chunkShape: dimensions, elementSize, btreeAddress };
}

function parseFilters(body: Uint8Array): Filter[] {
  const reader = new Reader(body, 0);
  const version = reader.uint(1);
  const count = reader.uint(1);
  if (version === 1) reader.skip(6);
  else if (version !== 2) throw new NotDescribed(`a filter pipeline message of version ${version}`);
  const filters: Filter[] = [];
  for (let index = 0; index < count; index++) {
    const id = reader.uint(2);
    const nameLength = version === 1 || id >= 256 ? reader.uint(2) : 0;
    const flags = reader.uint(2);
    const values = reader.uint(2);
    reader.skip(version === 1 ? Math.ceil(nameLength / 8) * 8 : nameLength);
    const clientData: number[] = [];
    for (let value = 0; value < values; value++) clientData.push(reader.uint(4));
    if (version === 1 && values % 2 === 1) reader.skip(4);
    filters.push({ id, optional: (flags & 1) === 1, clientData });
  }
  return filters;
}

/** Little-endian fields of a byte range that starts at file address `origin`. */
class Reader {
  at: number;
  readonly #bytes: Uint8Array;
  readonly #origin: number;

  constructor(bytes: Uint8Array, origin: number) {
    this.#bytes = bytes;
    this.#origin = origin;
    this.at = origin;
  }

  uint(size: number): number {
    const offset = this.#take(size);
    let value = 0;
    let allOnes = true;
    for (let index = size - 1; index >= 0; index--) {
      const byte = this.#bytes[offset + index]!;
      if (byte !== 0xff) allOnes = false;
      value = value * 256 + byte;
    }
    if (size === 8 && allOnes) return UNDEFINED_ADDRESS;
    if (!Number.isSafeInteger(value)) throw new Error(`a ${size}-byte field at address ${this.at - size} is too large`);
    return value;
  }

  ascii(length: number): string {
    const offset = this.#take(length);
    return String.fromCharCode(...this.#bytes.subarray(offset, offset + length));
  }

  bytes(length: number): Uint8Array {
    const offset = this.#take(length);
    return this.#bytes.subarray(offset, offset + length);
  }

  skip(length: number): void {
    this.#take(length);
  }

  #take(length: number): number {
    const offset = this.at - this.#origin;
    if (offset + length > this.#bytes.length) throw new Error(`the file ends inside a structure at address ${this.at}`);
    this.at += length;
    return offset;
  }
}
