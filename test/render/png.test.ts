/**
 * Our PNG encoder, read back by independent decoders: Skia's (through @napi-rs/canvas) for the pixels,
 * and the structure checked chunk by chunk (CRCs by zlib's crc32, IDAT inflated by zlib).
 */
import { crc32, inflateSync } from "node:zlib";
import { createCanvas } from "@napi-rs/canvas";
import { describe, expect, it } from "vitest";
import { encodeIndexedPng, encodePng, encodeRgbaPng } from "../../src/render/png.ts";
import { quantise } from "../../src/render/palette.ts";
import { PNG_SIGNATURE, readPixels } from "./pixels.ts";

interface Chunk {
  type: string;
  data: Buffer;
}

function chunks(png: Buffer): Chunk[] {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  const out: Chunk[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString("latin1");
    const data = png.subarray(at + 8, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length), `CRC of ${type}`).toBe(crc32(png.subarray(at + 4, at + 8 + length)));
    out.push({ type, data });
    at += 12 + length;
  }
  return out;
}

/** A deterministic test pattern: gradients, a hard edge and some pseudo-random noise. */
function pattern(width: number, height: number, alpha: (x: number, y: number) => number): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const i = (y * width + x) * 4;
      rgba[i] = (x * 255) / (width - 1);
      rgba[i + 1] = x < width / 2 ? (y * 255) / (height - 1) : 40;
      rgba[i + 2] = seed >>> 24;
      rgba[i + 3] = alpha(x, y);
    }
  }
  return rgba;
}

describe("encodeRgbaPng", () => {
  it("writes 8-bit RGBA that decodes to the same pixels", async () => {
    const [width, height] = [37, 23];
    const rgba = pattern(width, height, () => 255);
    const png = await encodeRgbaPng(rgba, width, height);
    const list = chunks(png);
    expect(list.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"]);
    const ihdr = list[0]!.data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).toEqual([width, height, 8, 6, 0, 0, 0]);
    const rows = inflateSync(list[1]!.data);
    expect(rows.length).toBe(height * (width * 4 + 1));
    for (let y = 0; y < height; y++) expect(rows[y * (width * 4 + 1)], `filter byte of row ${y}`).toBe(0);
    const pixels = await readPixels(png);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 4;
        expect(pixels.at(x, y), `pixel ${x},${y}`).toEqual([rgba[i], rgba[i + 1], rgba[i + 2], 255]);
      }
    }
  });

  it("keeps transparent pixels transparent", async () => {
    const [width, height] = [16, 9];
    const rgba = pattern(width, height, (x) => (x % 3 === 0 ? 0 : 255));
    const png = await encodeRgbaPng(rgba, width, height);
    const pixels = await readPixels(png);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 4;
        expect(pixels.at(x, y), `pixel ${x},${y}`).toEqual(x % 3 === 0 ? [0, 0, 0, 0] : [rgba[i], rgba[i + 1], rgba[i + 2], 255]);
      }
    }
  });

  it("gives the same bytes for the same pixels, and refuses a buffer of the wrong size", async () => {
    const rgba = pattern(20, 10, () => 255);
    expect((await encodeRgbaPng(rgba, 20, 10)).equals(await encodeRgbaPng(rgba.slice(), 20, 10))).toBe(true);
    await expect(encodeRgbaPng(rgba, 21, 10)).rejects.toThrow(/Internal error: encodeRgbaPng got 800 bytes for 21 × 10 pixels/);
  });

  it("encodes what was drawn on a canvas, as a palette PNG without loss when it has few colours", async () => {
    const canvas = createCanvas(120, 80);
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, 120, 80);
    ctx.fillStyle = "#c0392b";
    ctx.fillRect(10, 10, 50, 30);
    ctx.strokeStyle = "#1f3a93";
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.arc(85, 50, 20, 0, Math.PI * 2);
    ctx.stroke();
    const ours = await readPixels(await encodePng(ctx, 120, 80));
    const skia = await readPixels(await canvas.encode("png"));
    for (let y = 0; y < 80; y++) for (let x = 0; x < 120; x++) expect(ours.at(x, y), `pixel ${x},${y}`).toEqual(skia.at(x, y));
  });
});

describe("encodeIndexedPng", () => {
  it("writes IHDR colour type 3, PLTE and 8-bit indices that decode to the palette's colours", async () => {
    const [width, height] = [37, 23];
    const rgba = pattern(width, height, () => 255);
    const image = quantise(rgba, width, height, { maxColours: 50 });
    const png = await encodeIndexedPng(image);
    const list = chunks(png);
    expect(list.map((c) => c.type)).toEqual(["IHDR", "PLTE", "IDAT", "IEND"]);
    const ihdr = list[0]!.data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[10], ihdr[11], ihdr[12]]).toEqual([width, height, 8, 3, 0, 0, 0]);
    expect(list[1]!.data.length).toBe(image.colours.length * 3);
    const rows = inflateSync(list[2]!.data);
    expect(rows.length).toBe(height * (width + 1));
    const pixels = await readPixels(png);
    for (let y = 0; y < height; y++) {
      expect(rows[y * (width + 1)], `filter byte of row ${y}`).toBe(0);
      for (let x = 0; x < width; x++) {
        const c = image.colours[image.indices[y * width + x]!]!;
        expect(pixels.at(x, y), `pixel ${x},${y}`).toEqual([c & 255, (c >>> 8) & 255, (c >>> 16) & 255, 255]);
      }
    }
  });

  it("writes tRNS up to the last translucent entry, and keeps transparent pixels transparent", async () => {
    const [width, height] = [16, 9];
    const rgba = pattern(width, height, (x) => (x % 3 === 0 ? 0 : 255));
    for (let i = 0; i < rgba.length; i += 4) if (rgba[i + 3] === 0) rgba.fill(0, i, i + 3);
    const image = quantise(rgba, width, height);
    const list = chunks(await encodeIndexedPng(image));
    expect(list.map((c) => c.type)).toEqual(["IHDR", "PLTE", "tRNS", "IDAT", "IEND"]);
    const transparent = image.colours.indexOf(0);
    expect(list[2]!.data.length).toBe(transparent + 1);
    expect(list[2]!.data[transparent]).toBe(0);
    const pixels = await readPixels(await encodeIndexedPng(image));
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x += 3) expect(pixels.at(x, y)).toEqual([0, 0, 0, 0]);
  });

  it("gives the same bytes for the same pixels", async () => {
    const rgba = pattern(64, 40, () => 255);
    const a = await encodePng({ getImageData: () => ({ data: new Uint8ClampedArray(rgba), width: 64, height: 40 }) }, 64, 40);
    const b = await encodePng({ getImageData: () => ({ data: new Uint8ClampedArray(rgba.slice()), width: 64, height: 40 }) }, 64, 40);
    expect(a.equals(b)).toBe(true);
  });
});
