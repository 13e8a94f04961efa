/**
 * Before and after for the PNGs of two builds of the same runs: how much the pixels differ, and a picture
 * to check by eye. Every PNG under `<before>` that has a namesake under `<after>` is decoded (Skia, through
 * @napi-rs/canvas) and compared pixel by pixel: mean and maximum absolute difference per channel (of 255),
 * the share of pixels that changed at all, and bytes (alpha must not change). The picture puts one image's before and after side by
 * side with, below, where they differ (black: same; brighter: more different, ×8).
 *
 *   node bench/build/pngDiff.ts <before dist> <after dist> [--picture out.png] [--image <path under the dists>]
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { createCanvas, loadImage } from "@napi-rs/canvas";

const { values: flags, positionals } = parseArgs({ allowPositionals: true, options: { picture: { type: "string" }, image: { type: "string" } } });
const [beforeDir, afterDir] = positionals;
if (!beforeDir || !afterDir) throw new Error("usage: node bench/build/pngDiff.ts <before dist> <after dist> [--picture out.png] [--image <path>]");

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith(".png") ? [path.join(dir, e.name)] : []));
/** Release folders carry a content hash: compare by the path below it. */
const key = (file: string, root: string): string => path.relative(root, file).replace(/^runs\/[^/]+\//, "");

async function pixels(file: string): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const image = await loadImage(readFileSync(file));
  const ctx = createCanvas(image.width, image.height).getContext("2d");
  ctx.drawImage(image, 0, 0);
  return { width: image.width, height: image.height, data: ctx.getImageData(0, 0, image.width, image.height).data };
}

const after = new Map(walk(afterDir).map((f) => [key(f, afterDir), f]));
const pairs = walk(beforeDir)
  .map((f) => [key(f, beforeDir), f, after.get(key(f, beforeDir))] as const)
  .filter((p): p is readonly [string, string, string] => p[2] !== undefined)
  .sort((a, b) => a[0].localeCompare(b[0]));
if (pairs.length === 0) throw new Error(`no PNG of ${beforeDir} has a namesake in ${afterDir}`);

let sum = 0;
let channels = 0;
let max = 0;
let changed = 0;
let pixelCount = 0;
let bytesBefore = 0;
let bytesAfter = 0;
const perImageMax: number[] = [];
for (const [, b, a] of pairs) {
  const [x, y] = [await pixels(b), await pixels(a)];
  if (x.width !== y.width || x.height !== y.height) throw new Error(`${b} is ${x.width} × ${x.height}, ${a} ${y.width} × ${y.height}`);
  let imageMax = 0;
  for (let i = 0; i < x.data.length; i += 4) {
    let differs = false;
    for (let k = 0; k < 4; k++) {
      const d = Math.abs(x.data[i + k]! - y.data[i + k]!);
      if (k === 3) {
        if (d) throw new Error(`${b}: alpha differs at pixel ${i / 4}`);
        continue;
      }
      sum += d;
      if (d > imageMax) imageMax = d;
      if (d) differs = true;
    }
    if (differs) changed++;
  }
  channels += (x.data.length / 4) * 3;
  pixelCount += x.data.length / 4;
  max = Math.max(max, imageMax);
  perImageMax.push(imageMax);
  bytesBefore += statSync(b).size;
  bytesAfter += statSync(a).size;
}
perImageMax.sort((p, q) => p - q);
console.log(
  `${pairs.length} PNGs: mean |difference| ${(sum / channels).toFixed(3)} of 255 per colour channel (alpha: none), max ${max} (median of the images' maxima ${perImageMax[perImageMax.length >> 1]}),` +
    ` ${((100 * changed) / pixelCount).toFixed(2)} % of pixels changed; ${(bytesBefore / 2 ** 20).toFixed(2)} MB → ${(bytesAfter / 2 ** 20).toFixed(2)} MB (${((100 * bytesAfter) / bytesBefore).toFixed(1)} %)`,
);

if (flags.picture) {
  const pick = pairs.find((p) => p[0] === flags.image) ?? pairs.find((p) => p[0].includes("/images/")) ?? pairs[0]!;
  const [x, y] = [await pixels(pick[1]), await pixels(pick[2])];
  const gap = 12;
  const label = 24;
  const canvas = createCanvas(x.width * 2 + gap, label + x.height * 2 + gap);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const put = (data: Uint8ClampedArray, left: number, top: number): void => {
    const image = ctx.createImageData(x.width, x.height);
    image.data.set(data);
    ctx.putImageData(image, left, top);
  };
  put(x.data, 0, label);
  put(y.data, x.width + gap, label);
  const diff = new Uint8ClampedArray(x.data.length);
  for (let i = 0; i < diff.length; i += 4) {
    const d = Math.max(Math.abs(x.data[i]! - y.data[i]!), Math.abs(x.data[i + 1]! - y.data[i + 1]!), Math.abs(x.data[i + 2]! - y.data[i + 2]!));
    diff.set([Math.min(255, d * 8), Math.min(255, d * 8), d ? 255 : 0, 255], i);
  }
  put(diff, 0, label + x.height + gap);
  ctx.fillStyle = "#000000";
  ctx.font = "16px sans-serif";
  ctx.fillText(`before: ${path.basename(pick[1])}, ${(statSync(pick[1]).size / 1024).toFixed(1)} KB`, 4, 17);
  ctx.fillText(`after: ${(statSync(pick[2]).size / 1024).toFixed(1)} KB`, x.width + gap + 4, 17);
  ctx.fillText("difference ×8 (blue: changed by 1–31)", x.width + gap + 4, label + x.height + gap + 20);
  writeFileSync(flags.picture, canvas.toBuffer("image/png"));
  console.log(`picture of ${pick[0]}: ${flags.picture}`);
}
