/**
 * The striped zlib stream of image rows: inflates (Node's zlib, and libpng through GDAL for a whole PNG) to
 * exactly the rows given, whatever the deflater compressed before; stripes seen before are reused, changed ones
 * never; the Adler-32 is zlib's.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { adler32, adler32Combine, STRIPE_ROWS, StripedDeflater } from "../../src/formats/stripedDeflate.ts";
import { encodeIndexedPng } from "../../src/render/png.ts";

/** Rows of a map-like image: a flat background, a band of changing detail, a filter byte of 0 per row. */
function rows(width: number, height: number, detail: (x: number, y: number) => number): Buffer {
  const out = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) out[y * (width + 1) + 1 + x] = detail(x, y);
  return out;
}
const base = (x: number, y: number) => (x * 7 + y * 3) % 11 === 0 ? 5 : y < 40 ? 1 : 2;
const withAsh = (step: number) => (x: number, y: number) => (y > 70 && y < 110 && Math.abs(x - 100 - step * 5) < 30 ? 9 + ((x + y + step) % 3) : base(x, y));

describe("StripedDeflater", () => {
  it("inflates to exactly the rows given, for any number of rows", () => {
    for (const height of [1, STRIPE_ROWS - 1, STRIPE_ROWS, STRIPE_ROWS + 1, 5 * STRIPE_ROWS + 7]) {
      const input = rows(200, height, withAsh(height));
      expect(inflateSync(new StripedDeflater().deflate(input, 201)).equals(input), `${height} rows`).toBe(true);
    }
    expect(inflateSync(new StripedDeflater().deflate(Buffer.alloc(0), 201)).length).toBe(0);
  });

  it("gives the same bytes whatever it compressed before, reusing the stripes it had and no changed one", () => {
    const first = rows(200, 150, withAsh(0));
    const second = rows(200, 150, withAsh(1));
    const fresh = new StripedDeflater().deflate(second, 201);
    const warm = new StripedDeflater();
    warm.deflate(first, 201);
    expect(warm.compressed).toBe(5);
    const again = warm.deflate(second, 201);
    expect(again.equals(fresh)).toBe(true);
    // Rows 70–110 (stripes 2 and 3) changed; stripes 0, 1 and 4 are the first image's.
    expect([warm.compressed, warm.reused]).toEqual([7, 3]);
    expect(inflateSync(again).equals(second)).toBe(true);
    // A stripe that differs in one byte is compressed again, not taken for the one it resembles.
    const touched = Buffer.from(second);
    touched[4 * STRIPE_ROWS * 201 + 17] = 3;
    expect(inflateSync(warm.deflate(touched, 201)).equals(touched)).toBe(true);
    expect(warm.compressed).toBe(8);
  });

  it("starts a stripe at the row asked for, so that a change from there on fills fewer stripes", () => {
    // Rows 70–101 change: from row 0, stripes 64–95 and 96–127 hold them; from row 70, stripe 70–101 alone.
    const ashAt = (step: number) => (x: number, y: number) => (y >= 70 && y < 102 && Math.abs(x - 100 - step * 5) < 30 ? 9 + ((x + y + step) % 3) : base(x, y));
    const deflater = new StripedDeflater();
    for (const alignTo of [0, 1, 31, 32, 70, 149, 150, 400]) {
      const input = rows(200, 150, ashAt(alignTo));
      expect(inflateSync(deflater.deflate(input, 201, alignTo)).equals(input), `from row ${alignTo}`).toBe(true);
    }
    for (const [alignTo, changed] of [[0, 2], [70, 1]] as const) {
      const warm = new StripedDeflater();
      warm.deflate(rows(200, 150, ashAt(0)), 201, alignTo);
      const before = warm.compressed;
      warm.deflate(rows(200, 150, ashAt(1)), 201, alignTo);
      expect(warm.compressed - before, `stripes from row ${alignTo}`).toBe(changed);
    }
    expect(() => new StripedDeflater().deflate(Buffer.alloc(201), 201, -1)).toThrow(/Internal error: stripes cannot start at row -1/);
  });

  it("refuses bytes that are not whole rows", () => {
    expect(() => new StripedDeflater().deflate(Buffer.alloc(10), 3)).toThrow(/Internal error: 10 bytes are not rows of 3/);
  });
});

describe("adler32", () => {
  it("is zlib's checksum, also where the sums need reducing (long runs of 255)", () => {
    for (const data of [Buffer.alloc(0), Buffer.from("Wikipedia"), Buffer.alloc(100_000, 255), rows(801, 300, withAsh(2))]) {
      const zlibStream = deflateSync(data);
      expect(adler32(data)).toBe(zlibStream.readUInt32BE(zlibStream.length - 4));
    }
    expect(adler32(Buffer.from("Wikipedia"))).toBe(0x11e60398);
  });

  it("of two strings is combined from each one's (adler32Combine), at every length around the modulus", () => {
    const data = Buffer.concat([Buffer.alloc(70_000, 255), rows(801, 100, withAsh(3)), Buffer.from("Wikipedia")]);
    for (const cut of [0, 1, 9, 5552, 65520, 65521, 65522, 70_000, 131_042, data.length - 9, data.length]) {
      const [head, tail] = [data.subarray(0, cut), data.subarray(cut)];
      expect(adler32Combine(adler32(head), adler32(tail), tail.length), `cut at ${cut}`).toBe(adler32(data));
    }
  });
});

const HAS_GDAL = spawnSync("gdalinfo", ["--version"]).status === 0;
describe.skipIf(!HAS_GDAL)(`an indexed PNG of striped rows, read by libpng (GDAL)${HAS_GDAL ? "" : ": skipped, install Debian gdal-bin"}`, () => {
  it("decodes to the indices written", async () => {
    const width = 300;
    const height = 3 * STRIPE_ROWS + 5;
    const indices = new Uint8Array(width * height).map((_, k) => withAsh(3)(k % width, Math.floor(k / width)));
    const colours = new Uint32Array(12).map((_, i) => (0xff000000 | (i * 20) | ((255 - i * 20) << 8) | (i * 7) << 16) >>> 0);
    const png = await encodeIndexedPng({ width, height, colours, indices, exact: true });
    const dir = mkdtempSync(path.join(tmpdir(), "ashcast-striped-"));
    try {
      const file = path.join(dir, "map.png");
      writeFileSync(file, png);
      // GDAL reads a palette PNG as one band of indices: its raw bytes, written out as an ENVI/EHdr file.
      const out = path.join(dir, "indices.bin");
      const translated = spawnSync("gdal_translate", ["-q", "-of", "EHdr", file, out], { encoding: "utf8" });
      expect(translated.status, translated.stderr).toBe(0);
      expect(Buffer.from(readFileSync(out)).equals(Buffer.from(indices))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
