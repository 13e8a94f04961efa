/**
 * PNG encoding of a drawn canvas: its pixels as 8-bit RGBA, rows unfiltered, deflated at zlib level 3
 * on the thread pool. Skia's encoder (`canvas.encode("png")`)
 * takes about three times as long for these maps and writes larger files (docs/benchmarks.md, "Publishing
 * a full-size model run"): flat colour areas compress well without filters. Same pixels, same bytes.
 */
import { promisify } from "node:util";
import { crc32, deflate } from "node:zlib";

const deflateAsync = promisify(deflate);
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** What the encoder needs of a canvas: @napi-rs/canvas's SKRSContext2D fits. */
export interface PixelSource {
  getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray; width: number; height: number };
}

export async function encodePng(context: PixelSource, width: number, height: number): Promise<Buffer> {
  const { data } = context.getImageData(0, 0, width, height);
  return encodeRgbaPng(data, width, height);
}

/** A PNG of `rgba` (width × height pixels, 4 bytes each, not premultiplied). */
export async function encodeRgbaPng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Promise<Buffer> {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || rgba.length !== width * height * 4) {
    throw new Error(`Internal error: encodeRgbaPng got ${rgba.length} bytes for ${width} × ${height} pixels`);
  }
  // Rows are copied whole (a memcpy each), never pixel by pixel: this part runs on the main thread.
  const stride = width * 4 + 1;
  const raw = Buffer.allocUnsafe(stride * height);
  for (let y = 0; y < height; y++) {
    raw[y * stride] = 0; // filter: none
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * stride + 1);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 6; // truecolour with alpha
  // compression, filter method and interlace: 0 (the only ones defined, no interlace)
  const compressed = await deflateAsync(raw, { level: 3 });
  return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", compressed), chunk("IEND", Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
