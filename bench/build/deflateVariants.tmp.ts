// Experiment: how the band images' indices compress with other filters and zlib settings.
import { readFileSync } from "node:fs";
import { execSync } from "node:child_process";
import { inflateSync, deflateSync, constants as Z } from "node:zlib";
const files = execSync("find /tmp/dist-prof -path '*images*' -name '*.png'", { encoding: "utf8" }).trim().split("\n").slice(0, 60);
type Img = { w: number; h: number; idx: Uint8Array };
const imgs: Img[] = files.map((f) => {
  const b = readFileSync(f); let o = 8; let w = 0, h = 0; const idat: Buffer[] = [];
  while (o < b.length) { const len = b.readUInt32BE(o); const type = b.toString("latin1", o + 4, o + 8); const d = b.subarray(o + 8, o + 8 + len);
    if (type === "IHDR") { w = d.readUInt32BE(0); h = d.readUInt32BE(4); } if (type === "IDAT") idat.push(d); o += 12 + len; }
  const raw = inflateSync(Buffer.concat(idat)); const idx = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) idx.set(raw.subarray(y * (w + 1) + 1, (y + 1) * (w + 1)), y * w);
  return { w, h, idx };
});
function filtered(img: Img, filter: "none" | "up" | "sub"): Buffer {
  const { w, h, idx } = img; const out = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; y++) { const o = y * (w + 1); out[o] = filter === "none" ? 0 : filter === "sub" ? 1 : 2;
    for (let x = 0; x < w; x++) { const v = idx[y * w + x]!; const p = filter === "none" ? 0 : filter === "sub" ? (x ? idx[y * w + x - 1]! : 0) : (y ? idx[(y - 1) * w + x]! : 0); out[o + 1 + x] = (v - p) & 255; } }
  return out;
}
for (const filter of ["none", "up", "sub"] as const) for (const [name, opts] of [["l6", { level: 6 }], ["l4", { level: 4 }], ["l3", { level: 3 }], ["l9", { level: 9 }], ["rle", { level: 6, strategy: Z.Z_RLE }], ["filt6", { level: 6, strategy: Z.Z_FILTERED }], ["l6m9", { level: 6, memLevel: 9 }]] as const) {
  const raws = imgs.map((i) => filtered(i, filter));
  const t0 = performance.now(); const sizes = raws.map((r) => deflateSync(r, opts).length); const ms = (performance.now() - t0) / raws.length;
  sizes.sort((a, b) => a - b);
  console.log(filter.padEnd(5), name.padEnd(6), "median KB", (sizes[sizes.length >> 1]! / 1024).toFixed(1), "ms/img", ms.toFixed(2));
}
