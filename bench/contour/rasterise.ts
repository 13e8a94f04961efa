/**
 * Overlap of contour results, for the contouring benchmarks: rings rasterised by even-odd scanlines on
 * a grid of nx × ny cells, at `step` cells (¼ cell in the benches). Pure; grid coordinates, centre of
 * column i at x = i.
 */
import type { Position } from "../../src/geo/types.ts";

/** Even-odd scanline rasterisation of rings at `step` cells; sample centres at (i + 0.5) * step - 0.5. */
export function rasterise(rings: Position[][], step: number, nx: number, ny: number): Uint8Array {
  const w = Math.ceil(nx / step);
  const h = Math.ceil(ny / step);
  const mask = new Uint8Array(w * h);
  const byRow: number[][] = Array.from({ length: h }, () => []);
  for (const ring of rings) {
    for (let i = 1; i < ring.length; i++) {
      const [x0, y0] = ring[i - 1]!;
      const [x1, y1] = ring[i]!;
      if (y0 === y1) continue;
      const lo = Math.min(y0, y1);
      const hi = Math.max(y0, y1);
      const r0 = Math.max(0, Math.ceil((lo + 0.5) / step - 0.5));
      const r1 = Math.min(h - 1, Math.floor((hi + 0.5) / step - 0.5));
      for (let r = r0; r <= r1; r++) {
        const y = (r + 0.5) * step - 0.5;
        if (y < lo || y >= hi) continue;
        byRow[r]!.push(x0 + ((y - y0) / (y1 - y0)) * (x1 - x0));
      }
    }
  }
  byRow.forEach((xs, r) => {
    xs.sort((a, b) => a - b);
    for (let k = 0; k + 1 < xs.length; k += 2) {
      const c0 = Math.max(0, Math.ceil((xs[k]! + 0.5) / step - 0.5));
      const c1 = Math.min(w - 1, Math.floor((xs[k + 1]! + 0.5) / step - 0.5));
      for (let c = c0; c <= c1; c++) mask[r * w + c] = 1;
    }
  });
  return mask;
}

/** Intersection over union of two masks of the same grid; 1 when both are empty. */
export function iou(a: Uint8Array, b: Uint8Array): number {
  let both = 0;
  let either = 0;
  for (let i = 0; i < a.length; i++) {
    both += a[i]! & b[i]!;
    either += a[i]! | b[i]!;
  }
  return either === 0 ? 1 : both / either;
}
