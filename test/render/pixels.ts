/** Reading our own PNGs back, for tests: size from IHDR, pixels through @napi-rs/canvas. */
import { inflateSync } from "node:zlib";
import { createCanvas, loadImage, type Canvas } from "@napi-rs/canvas";
import type { GeoProjection } from "d3-geo";
import type { Rect } from "../../src/render/draw.ts";
import type { Rgb } from "../../src/render/style.ts";

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngSize(png: Buffer): { width: number; height: number } {
  if (!png.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error("not a PNG");
  if (png.subarray(12, 16).toString("latin1") !== "IHDR") throw new Error("first chunk is not IHDR");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export interface Pixels {
  width: number;
  height: number;
  at(x: number, y: number): [number, number, number, number];
  /** How many pixels are exactly this colour (opaque). */
  count(colour: Rgb, rect?: Rect): number;
  /** How many pixels in rect pass a test. */
  countWhere(rect: Rect, test: (p: [number, number, number, number]) => boolean): number;
}

export async function readPixels(png: Buffer): Promise<Pixels> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(image, 0, 0);
  const { data } = ctx.getImageData(0, 0, image.width, image.height);
  const at = (x: number, y: number): [number, number, number, number] => {
    const i = (Math.round(y) * image.width + Math.round(x)) * 4;
    return [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
  };
  const countWhere = (rect: Rect, test: (p: [number, number, number, number]) => boolean): number => {
    let n = 0;
    for (let y = rect.y; y < rect.y + rect.h; y++) for (let x = rect.x; x < rect.x + rect.w; x++) if (test(at(x, y))) n++;
    return n;
  };
  const count = (c: Rgb, rect: Rect = { x: 0, y: 0, w: image.width, h: image.height }): number => {
    let n = 0;
    for (let y = rect.y; y < rect.y + rect.h; y++) {
      for (let x = rect.x, i = (y * image.width + x) * 4; x < rect.x + rect.w; x++, i += 4) {
        if (data[i] === c[0] && data[i + 1] === c[1] && data[i + 2] === c[2] && data[i + 3] === 255) n++;
      }
    }
    return n;
  };
  return { width: image.width, height: image.height, at, countWhere, count };
}

/** The pixels of a panel's base map (sea, land, graticule), offset so `at` takes image coordinates. */
export async function basePixels(canvas: Canvas, panel: Rect): Promise<Pixels> {
  const pixels = await readPixels(canvas.toBuffer("image/png"));
  return { ...pixels, at: (x, y) => pixels.at(x - panel.x, y - panel.y) };
}

/** Where a lon/lat lands in the image, for a panel and its projection. */
export function imagePoint(projection: GeoProjection, panel: Rect, lon: number, lat: number): [number, number] {
  const p = projection([lon, lat]);
  if (!p) throw new Error(`(${lon}, ${lat}) does not project`);
  return [panel.x + p[0], panel.y + p[1]];
}

/** The colour `fill` at `alpha` over `under` (what a semi-opaque fill gives). */
export function over(under: readonly number[], fill: Rgb, alpha: number): [number, number, number] {
  return [0, 1, 2].map((k) => under[k]! * (1 - alpha) + fill[k]! * alpha) as [number, number, number];
}

export function closeTo(actual: readonly number[], expected: readonly number[], tolerance = 3): boolean {
  return [0, 1, 2].every((k) => Math.abs(actual[k]! - expected[k]!) <= tolerance);
}

/** The PLTE chunk's data of a PNG. */
export function plte(png: Buffer): Buffer {
  const [palette] = chunksOfType(png, "PLTE");
  if (!palette) throw new Error("no PLTE chunk");
  return palette;
}

/** The rows a PNG stores (each row's filter byte included), its IDAT chunks inflated. */
export function pngRows(png: Buffer): Buffer {
  return inflateSync(Buffer.concat(chunksOfType(png, "IDAT")));
}

/** The data of a PNG's chunks of one type, in order. */
function chunksOfType(png: Buffer, type: string): Buffer[] {
  const found: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === type) found.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return found;
}
