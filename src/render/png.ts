/**
 * PNG encoding of a drawn canvas. The maps are a pale base map and a few flat colours, so they are written
 * as indexed-colour PNG: the pixels reduced to a palette of at most 256 colours (src/render/palette.ts: the
 * ash classes and every frequent colour exact, anti-aliased edges to their nearest entry; a run's band images
 * share one, src/render/bandImage.ts), one byte per
 * pixel, rows unfiltered (filter "none" compresses palette images best here), deflated at zlib level 6 in
 * stripes of rows, a stripe another image of this thread already had taken as it was compressed then
 * (src/formats/stripedDeflate.ts). A third of the bytes of the RGBA PNG it replaced, for a few milliseconds of quantising
 * (docs/benchmarks.md, "Publishing a full-size model run"; docs/decisions.md). The same pixels and palette give the same bytes.
 */
import { promisify } from "node:util";
import { crc32, deflate } from "node:zlib";
import { quantise, type IndexedImage, type QuantiseOptions } from "./palette.ts";
import { StripedDeflater } from "../formats/stripedDeflate.ts";

const deflateAsync = promisify(deflate);
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The indexed images' deflater, one per thread: the band images a thread encodes share most of their rows. */
const indexedRows = new StripedDeflater();

/** What the encoder needs of a canvas: @napi-rs/canvas's SKRSContext2D fits. */
export interface PixelSource {
  getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray; width: number; height: number };
}

/** An indexed-colour PNG of what was drawn; `keep`: colours that must come out exactly as drawn. */
export async function encodePng(context: PixelSource, width: number, height: number, options: Pick<QuantiseOptions, "keep"> = {}): Promise<Buffer> {
  const { data } = context.getImageData(0, 0, width, height);
  return encodeIndexedPng(quantise(data, width, height, options));
}

/**
 * A PNG of an indexed image: PLTE with its colours, tRNS when some are not opaque, 8 bits per index. `alignTo`:
 * a row where what changes between images of this size starts (StripedDeflater.deflate).
 */
export async function encodeIndexedPng(image: IndexedImage, alignTo = 0): Promise<Buffer> {
  const { width, height, colours, indices } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || indices.length !== width * height || colours.length < 1 || colours.length > 256) {
    throw new Error(`Internal error: encodeIndexedPng got ${indices.length} indices and ${colours.length} colours for ${width} × ${height} pixels`);
  }
  const palette = Buffer.alloc(colours.length * 3);
  const alpha = Buffer.alloc(colours.length);
  let lastTranslucent = -1;
  colours.forEach((c, i) => {
    palette[i * 3] = c & 255;
    palette[i * 3 + 1] = (c >>> 8) & 255;
    palette[i * 3 + 2] = (c >>> 16) & 255;
    alpha[i] = c >>> 24;
    if (alpha[i] !== 255) lastTranslucent = i;
  });
  const compressed = indexedRows.deflate(unfilteredRows(indices, width, height), width + 1, alignTo);
  return Buffer.concat([
    SIGNATURE,
    chunk("IHDR", header(width, height, 8, 3)),
    chunk("PLTE", palette),
    ...(lastTranslucent >= 0 ? [chunk("tRNS", alpha.subarray(0, lastTranslucent + 1))] : []),
    chunk("IDAT", compressed),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The rows of an indexed image as a PNG stores them: each row's filter byte 0 (none), then its indices. */
export function unfilteredRows(indices: Uint8Array, width: number, height: number): Buffer {
  const stride = width + 1;
  const rows = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) rows.set(indices.subarray(y * width, (y + 1) * width), y * stride + 1);
  return rows;
}

/** A truecolour PNG of `rgba` (width × height pixels, 4 bytes each, not premultiplied), every pixel as it is. */
export async function encodeRgbaPng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Promise<Buffer> {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || rgba.length !== width * height * 4) {
    throw new Error(`Internal error: encodeRgbaPng got ${rgba.length} bytes for ${width} × ${height} pixels`);
  }
  // Rows are copied whole (a memcpy each), never pixel by pixel.
  const stride = width * 4 + 1;
  const raw = Buffer.allocUnsafe(stride * height);
  for (let y = 0; y < height; y++) {
    raw[y * stride] = 0; // filter: none
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * stride + 1);
  }
  const compressed = await deflateAsync(raw, { level: 3 });
  return Buffer.concat([SIGNATURE, chunk("IHDR", header(width, height, 8, 6)), chunk("IDAT", compressed), chunk("IEND", Buffer.alloc(0))]);
}

/** IHDR: size, bit depth, colour type (3 indexed, 6 RGBA); compression, filter method and interlace 0. */
function header(width: number, height: number, depth: number, colourType: number): Buffer {
  const out = Buffer.alloc(13);
  out.writeUInt32BE(width, 0);
  out.writeUInt32BE(height, 4);
  out[8] = depth;
  out[9] = colourType;
  return out;
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
