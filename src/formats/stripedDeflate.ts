/**
 * A zlib stream (RFC 1950) of image rows made of stripes of rows deflated one by one (RFC 1951, each ending on
 * a sync flush, so the pieces join into one stream), with the stripes a deflater compressed before reused:
 * a run's band images share their frame, base map and palette, so about 70 % of their 32-row stripes are
 * the same bytes in another image (docs/benchmarks.md, issue 18). Each stripe is compressed from scratch, so
 * a stripe's bytes always give the same compressed bytes: the stream depends on the rows alone, never on what
 * was compressed before. Stripes of 32 rows also come out 0.3 % smaller than the whole image deflated at once
 * (each gets Huffman codes of its own). Pure: no files.
 *
 * @example new StripedDeflater().deflate(rows, 801) // inflateSync of it gives `rows` back
 */
import { constants, deflateRawSync } from "node:zlib";

/** Rows per stripe: ~25 KB of an 800-pixel map, history enough for deflate (16 rows: 2 % larger images; 64: slower, fewer stripes repeat). */
export const STRIPE_ROWS = 32;
/** zlib's level for every stripe: 6 gives 10 % fewer bytes than 3 for about 3 ms more per map; 9 is ten times slower for 4 % less. */
const LEVEL = 6;
/** CMF 0x78 (deflate, 32 KB window), FLG 0x9c (the default level; CMF·256 + FLG a multiple of 31). */
const ZLIB_HEADER = Buffer.from([0x78, 0x9c]);
/** A final, empty block with fixed codes: the stream's end after the last sync-flushed stripe. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/** Stripes remembered per place in the image: the frame's own, and a few with ash. */
const KEPT_PER_STRIPE = 4;

interface Kept {
  rows: Buffer;
  compressed: Buffer;
  /** The stripe's own Adler-32: the stream's is combined from its stripes' (adler32Combine), never summed over the image again. */
  adler: number;
}

export class StripedDeflater {
  /** Per row a stripe starts at, the stripes compressed last there (most recent first). */
  readonly #kept = new Map<number, Kept[]>();
  /** Stripes compressed and reused, for tests and benchmarks. */
  compressed = 0;
  reused = 0;

  /**
   * `rows`: the image's rows one after the other, `rowBytes` each (a PNG's filter byte included). `alignTo`: a
   * row a stripe starts at (where what changes from image to image starts, so that fewer stripes hold it).
   */
  deflate(rows: Uint8Array, rowBytes: number, alignTo = 0): Buffer {
    if (!Number.isInteger(rowBytes) || rowBytes <= 0 || rows.length % rowBytes !== 0) throw new RangeError(`Internal error: ${rows.length} bytes are not rows of ${rowBytes}`);
    if (!Number.isInteger(alignTo) || alignTo < 0) throw new RangeError(`Internal error: stripes cannot start at row ${alignTo}`);
    const stripeBytes = rowBytes * STRIPE_ROWS;
    const pieces: Buffer[] = [ZLIB_HEADER];
    let adler = 1;
    for (let start = 0, end = (alignTo % STRIPE_ROWS || STRIPE_ROWS) * rowBytes; start < rows.length; start = end, end += stripeBytes) {
      const kept = this.#stripe(start / rowBytes, rows.subarray(start, Math.min(rows.length, end)));
      pieces.push(kept.compressed);
      adler = adler32Combine(adler, kept.adler, kept.rows.length);
    }
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(adler);
    pieces.push(FINAL_BLOCK, checksum);
    return Buffer.concat(pieces);
  }

  #stripe(firstRow: number, rows: Uint8Array): Kept {
    let kept = this.#kept.get(firstRow);
    if (kept === undefined) this.#kept.set(firstRow, (kept = []));
    const at = kept.findIndex((candidate) => candidate.rows.equals(rows));
    if (at !== -1) {
      const found = kept[at]!;
      if (at > 0) kept.unshift(...kept.splice(at, 1));
      this.reused++;
      return found;
    }
    const copy = Buffer.from(rows);
    const stripe = { rows: copy, compressed: deflateRawSync(copy, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH }), adler: adler32(copy) };
    kept.unshift(stripe);
    if (kept.length > KEPT_PER_STRIPE) kept.length = KEPT_PER_STRIPE;
    this.compressed++;
    return stripe;
  }
}

const ADLER_BASE = 65521;

/**
 * The Adler-32 of two byte strings one after the other, from each one's and the second's length (zlib's
 * adler32_combine): the first's sums carried over the second's bytes. Products stay below 2^32, exact in a double.
 */
export function adler32Combine(first: number, second: number, secondLength: number): number {
  const rem = secondLength % ADLER_BASE;
  const a1 = first & 0xffff;
  const b1 = first >>> 16;
  const a = (a1 + (second & 0xffff) + ADLER_BASE - 1) % ADLER_BASE;
  const b = ((rem * a1) % ADLER_BASE + b1 + (second >>> 16) + ADLER_BASE - rem) % ADLER_BASE;
  return ((b << 16) | a) >>> 0;
}

/** Adler-32 (RFC 1950): the sums taken modulo 65521 every 5,552 bytes, the most that cannot overflow. */
export function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}
