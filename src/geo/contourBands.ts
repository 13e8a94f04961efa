/**
 * Banded contours of a concentration field: for thresholds t0 < t1 < … one band per interval
 * [t_i, t_{i+1}) (the last unbounded), as lon/lat polygons with holes, outer rings counter-clockwise.
 *
 * How: isorings traces the level set {v ≥ t} of each threshold (marching squares with linear
 * interpolation between cell centres, saddles joined so that no ash is cut away). The rings of one
 * field's level sets never cross, so band i is
 * assembled from the rings of {v ≥ t_i} and the reversed rings of {v ≥ t_{i+1}}: stretches both share
 * (where the band has no width, along missing values or the grid edge) cancel out, the rest is nested
 * by depth (even depth: outer ring, odd: hole). Work is restricted to the bounding box of the cells at
 * or above the lowest threshold; rings are simplified outward only (a dropped position never lies
 * outside the simplified ring, so no area at or above a threshold shrinks), far below the grid
 * resolution, in grid-index space, then mapped to lon/lat with no edge longer than 4 cells.
 *
 * Conventions: grid coordinates put the centre of column i at x = i and of row j at y = j
 * (values[y * nx + x]). NaN is missing: a level set stops at the last valid cell centre. At the grid's
 * edge a level set reaches the outer edge of the outermost cells (half a cell beyond their centres), the
 * footprint of the model's cells, and never further.
 */
import type { GridToLonLat, Polygon, Position, Ring, ThresholdBand } from "./types.ts";
import { isorings } from "./isorings.ts";
import { findCrossingRings, orientRing, pointInRing, ringArea, simplifyRingIndices } from "./rings.ts";

export { isCounterClockwise, pointInRing, polygonArea, polygonAreaKm2, ringArea, ringAreaKm2, simplifyRing } from "./rings.ts";

export interface ContourBandsOptions {
  /**
   * Douglas–Peucker tolerance in grid cells, applied outward only, in grid-index space before mapping to
   * lon/lat. Default 0.01; 0 keeps every marching-squares vertex.
   */
  simplifyCells?: number;
  /**
   * The cells (indices into `values`, any order) that may hold a value at or above the lowest threshold when it is
   * above 0, every other cell holding 0 or nothing: the cells of a model's field that are not 0 (FieldCells.nonZero),
   * a few per cent of it. The extent of the ash is then found from them, not by a pass over the whole field.
   */
  cells?: ArrayLike<number> | undefined;
}

/**
 * Default simplification tolerance, in grid cells: outward only, so areas only grow; 0.01 cell keeps the
 * intersection over union with gdal_contour's areas at 0.99 or more even for areas of a few cells, and
 * still drops the marching squares' collinear runs (docs/benchmarks.md, "Ash areas against gdal_contour").
 */
export const DEFAULT_SIMPLIFY_CELLS = 0.01;

/** Rings from isorings keep the region on their right in grid coordinates: left of a chord is outside. */
const OUTSIDE = 1;

/**
 * Banded threshold polygons of a row-major field (values[y * nx + x], NaN missing).
 *
 * @example
 * const bands = contourBands(field, grid.nx, grid.ny, [0.2, 2, 4], grid.toLonLat);
 * // bands[0]: 0.2 ≤ c < 2, bands[1]: 2 ≤ c < 4, bands[2]: c ≥ 4 (upper null)
 */
export function contourBands(
  values: Float32Array | Float64Array,
  nx: number,
  ny: number,
  thresholds: readonly number[],
  toLonLat: GridToLonLat,
  options: ContourBandsOptions = {},
): ThresholdBand[] {
  checkArguments(values, nx, ny, thresholds);
  const tolerance = options.simplifyCells ?? DEFAULT_SIMPLIFY_CELLS;
  if (!(tolerance >= 0 && tolerance < 1)) {
    throw new RangeError(`simplifyCells must be at least 0 and under 1 grid cell, got ${tolerance}`);
  }
  const bands: ThresholdBand[] = thresholds.map((lower, i) => ({ lower, upper: thresholds[i + 1] ?? null, polygons: [] }));
  if (thresholds.length === 0) return bands;

  // Each level is traced in the box of its own cells, found among the listed cells or else inside the lowest
  // level's box (a higher threshold's cells are among its cells, often far fewer): the rings are the same, since
  // every cell a ring passes has a corner at or above the threshold.
  const boxOf = (t: number, within?: CellBox): CellBox | undefined => (options.cells && t > 0 ? boxOfCellsAtOrAbove(values, nx, options.cells, t) : boxAtOrAbove(values, nx, ny, t, within));
  const lowestBox = boxOf(thresholds[0]!);
  if (!lowestBox) return bands;
  const levels: Ring[][] = thresholds.map((t, i) => {
    const box = i === 0 ? lowestBox : boxOf(t, lowestBox);
    return box ? levelRings(values, nx, ny, box, t) : [];
  });

  const simplified = tolerance > 0 ? simplifyLevels(levels, tolerance) : levels;

  for (let k = 0; k < bands.length; k++) {
    const upperRings = simplified[k + 1] ?? [];
    const rings = [...simplified[k]!, ...upperRings.map((r) => r.slice().reverse())];
    const polygons = assemble(rings);
    bands[k]!.polygons = polygons
      .map((polygon): { polygon: Polygon; area: number } => ({
        polygon: {
          outer: orientRing(onEarth(polygon.outer, toLonLat), true),
          holes: polygon.holes.map((hole) => orientRing(onEarth(hole, toLonLat), false)),
        },
        area: Math.abs(ringArea(polygon.outer)),
      }))
      .sort((a, b) => b.area - a.area)
      .map(({ polygon }) => polygon);
  }
  return bands;
}

/** A box of cells, inclusive. */
type CellBox = { x0: number; y0: number; x1: number; y1: number };

/** The rings of {v ≥ t} whose cells lie in `box`, in the whole grid's positions. */
function levelRings(values: ArrayLike<number>, nx: number, ny: number, box: CellBox, t: number): Ring[] {
  // The box with a margin of one cell on each side; margin cells outside the grid are −Infinity, which
  // isorings reads as the outside of the grid (areas reach the outer edge of the grid's cells).
  const x0 = box.x0 - 1;
  const y0 = box.y0 - 1;
  const w = box.x1 - box.x0 + 3;
  const h = box.y1 - box.y0 + 3;
  const sub = cutBox(values, nx, ny, x0, y0, w, h);
  const rings: Ring[] = [];
  for (const raw of isorings(sub, w, h, t, { x: x0, y: y0 })) {
    const ring = dedupe(raw);
    if (ring.length >= 4) rings.push(ring);
  }
  return rings;
}

/*
 * The ring helpers below are named functions with loops rather than closures passed to map: a closure made
 * per call was compiled again by V8 on every few calls (bench:build:compiles).
 */

/**
 * The longest edge of a published ring, in grid cells. Simplification leaves one edge for a straight run
 * (along a row of equal values, the side of a block of missing cells), and such an edge can span tens of
 * degrees; a client that draws edges as great circles (d3-geo, Google Earth) bows it up to a degree off the
 * grid's line, into the ash on one side. Cut into edges of at most 4 cells the bow is under 2 % of a cell even on
 * a 1° grid at mid-latitudes (0.2 % on a 0.1° grid), for 2 % more positions on the full-size run (1.5
 * cells gave 14 % more: simplification leaves many edges of 2 to 4 cells along gentle curves).
 */
const MAX_EDGE_CELLS = 4;

/** A ring of grid positions as longitude/latitude, with positions added on edges longer than MAX_EDGE_CELLS. */
function onEarth(ring: readonly Position[], toLonLat: GridToLonLat): Position[] {
  const out: Position[] = [];
  for (let i = 0; i < ring.length; i++) {
    const p = ring[i]!;
    const q = ring[i - 1];
    if (q) {
      const dx = p[0] - q[0];
      const dy = p[1] - q[1];
      const pieces = Math.ceil(Math.hypot(dx, dy) / MAX_EDGE_CELLS);
      for (let k = 1; k < pieces; k++) out.push(toLonLat(q[0] + (dx * k) / pieces, q[1] + (dy * k) / pieces));
    }
    out.push(toLonLat(p[0], p[1]));
  }
  return out;
}

/** The positions of a ring at the given indices. */
function pick(ring: Ring, indices: readonly number[]): Ring {
  const out: Ring = [];
  for (const i of indices) out.push(ring[i]!);
  return out;
}

function checkArguments(values: ArrayLike<number>, nx: number, ny: number, thresholds: readonly number[]): void {
  if (!Number.isInteger(nx) || !Number.isInteger(ny) || nx < 1 || ny < 1) {
    throw new RangeError(`grid size must be positive integers, got ${nx} × ${ny}`);
  }
  if (values.length !== nx * ny) {
    throw new RangeError(`field has ${values.length} values, expected nx × ny = ${nx * ny}`);
  }
  thresholds.forEach((t, i) => {
    if (!Number.isFinite(t)) throw new RangeError(`threshold ${i} is not a finite number: ${t}`);
    if (i > 0 && !(t > thresholds[i - 1]!)) {
      throw new RangeError(`thresholds must increase strictly, got ${thresholds.join(", ")}`);
    }
  });
}

/** The w × h cells of a field from (x0, y0), −Infinity outside the grid. Its own function: inside contourBands this long loop made V8 compile all of contourBands on the stack, again and again (docs/benchmarks.md). */
function cutBox(values: ArrayLike<number>, nx: number, ny: number, x0: number, y0: number, w: number, h: number): Float64Array {
  const sub = new Float64Array(w * h);
  for (let j = 0; j < h; j++) {
    const y = y0 + j;
    for (let i = 0; i < w; i++) {
      const x = x0 + i;
      sub[j * w + i] = x >= 0 && x < nx && y >= 0 && y < ny ? values[y * nx + x]! : -Infinity;
    }
  }
  return sub;
}

/** Inclusive bounding box (in cells) of the cells at or above t (in `within` only); undefined when none is (NaN never is). */
export function boxAtOrAbove(values: ArrayLike<number>, nx: number, ny: number, t: number, within: CellBox = { x0: 0, y0: 0, x1: nx - 1, y1: ny - 1 }): CellBox | undefined {
  let x0 = nx;
  let y0 = -1;
  let x1 = -1;
  let y1 = -1;
  for (let y = within.y0; y <= within.y1; y++) {
    const row = y * nx;
    let first = -1;
    let last = -1;
    for (let x = within.x0; x <= within.x1; x++) {
      if (values[row + x]! >= t) {
        if (first < 0) first = x;
        last = x;
      }
    }
    if (first < 0) continue;
    if (y0 < 0) y0 = y;
    y1 = y;
    if (first < x0) x0 = first;
    if (last > x1) x1 = last;
  }
  return y0 < 0 ? undefined : { x0, y0, x1, y1 };
}

/** boxAtOrAbove over the listed cells only (ContourBandsOptions.cells). */
export function boxOfCellsAtOrAbove(values: ArrayLike<number>, nx: number, cells: ArrayLike<number>, t: number): CellBox | undefined {
  let x0 = nx;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let k = 0; k < cells.length; k++) {
    const i = cells[k]!;
    if (!(values[i]! >= t)) continue;
    const y = Math.floor(i / nx);
    const x = i - y * nx;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return y1 < 0 ? undefined : { x0, y0, x1, y1 };
}

const key = (p: Position): string => `${p[0]},${p[1]}`;

/** Consecutive repeated positions removed; the ring stays closed. */
function dedupe(ring: Ring): Ring {
  const out: Ring = [];
  for (const p of ring) {
    const last = out[out.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
  }
  const first = out[0];
  const last = out[out.length - 1];
  if (first && last && (first[0] !== last[0] || first[1] !== last[1])) out.push([first[0], first[1]]);
  return out;
}

/**
 * Simplifies every ring of every level set once (so a ring shared by two bands, as the hole of one and
 * the outer ring of the next, stays identical in both). Positions used more than once (touching points,
 * stretches shared along missing values) are kept: only cell centres can be shared, as every other
 * marching-squares position is an interpolated crossing of one cell edge at one threshold. A ring whose
 * simplified outline would cross another ring (or itself) keeps its full outline.
 */
function simplifyLevels(levels: Ring[][], tolerance: number): Ring[][] {
  const uses = new Map<string, number>();
  const all: Ring[] = levels.flat();
  for (const ring of all) {
    for (let i = 0; i < ring.length - 1; i++) {
      const p = ring[i]!;
      if (!isCentre(p)) continue;
      const k = key(p);
      uses.set(k, (uses.get(k) ?? 0) + 1);
    }
  }
  const kept: number[][] = [];
  const simple: Ring[] = [];
  for (const ring of all) {
    const keep: number[] = [];
    for (let i = 0; i < ring.length - 1; i++) if (isCentre(ring[i]!) && uses.get(key(ring[i]!))! > 1) keep.push(i);
    const indices = simplifyRingIndices(ring, tolerance, keep, OUTSIDE);
    kept.push(indices);
    simple.push(indices.length === ring.length ? ring : pick(ring, indices));
  }
  // Segments a simplification created (joining positions that were not consecutive): only they can cross.
  const isNew = (r: number, segment: number): boolean => {
    const k = kept[r]!;
    return k.length !== all[r]!.length && k[segment]! - k[segment - 1]! > 1;
  };
  // Each round restores at least one ring (which then has no new segment), so this ends.
  for (;;) {
    const bad = findCrossingRings(simple, { onlyNew: isNew, allowCollinear: true });
    if (bad.size === 0) break;
    for (const r of bad) {
      simple[r] = all[r]!;
      kept[r] = all[r]!.map((_, i) => i);
    }
  }
  const out: Ring[][] = [];
  let r = 0;
  for (const rings of levels) out.push(rings.map(() => simple[r++]!));
  return out;
}

/** On a line of cell centres or of cell edges (the grid's outer edge): where rings of two levels can meet. */
const onLattice = (v: number): boolean => Number.isInteger(2 * v);
const isCentre = (p: Position): boolean => onLattice(p[0]) && onLattice(p[1]);

/**
 * Polygons of a region given the rings of its boundary, all oriented with the region on their right
 * (isorings' convention in grid coordinates). Opposite copies of the same segment cancel.
 */
function assemble(input: Ring[]): Polygon[] {
  const loops = cancelSharedSegments(splitOnSharedLines(input))
    .flatMap((ring) => splitAtRepeats(removeSpikes(ring)))
    .filter((ring) => ring.length >= 4 && ringArea(ring) !== 0);
  return nest(loops);
}

/**
 * Where rings run along the same line of cell centres (beside missing values, along the grid edge), one
 * ring's stretch can start part-way along another's segment. Splits such segments at the other rings'
 * positions on the line, so that shared stretches become identical segments that cancel.
 */
function splitOnSharedLines(rings: Ring[]): Ring[] {
  const lineOf = (a: Position, b: Position): string | undefined =>
    a[0] === b[0] && onLattice(a[0]) ? `x${a[0]}` : a[1] === b[1] && onLattice(a[1]) ? `y${a[1]}` : undefined;
  // Positions (their varying coordinate) on each line, with the rings they come from.
  const lines = new Map<string, { at: number[]; rings: Set<number> }>();
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    for (let i = 1; i < ring.length; i++) {
      const a = ring[i - 1]!;
      const b = ring[i]!;
      const line = lineOf(a, b);
      if (!line) continue;
      const axis = line[0] === "x" ? 1 : 0;
      let entry = lines.get(line);
      if (!entry) lines.set(line, (entry = { at: [], rings: new Set() }));
      entry.at.push(a[axis], b[axis]);
      entry.rings.add(r);
    }
  }
  let shared = false;
  for (const entry of lines.values()) {
    if (entry.rings.size < 2) continue;
    shared = true;
    entry.at = [...new Set(entry.at)].sort((p, q) => p - q);
  }
  if (!shared) return rings;
  return rings.map((ring) => {
    const out: Ring = [ring[0]!];
    for (let i = 1; i < ring.length; i++) {
      const a = ring[i - 1]!;
      const b = ring[i]!;
      const line = lineOf(a, b);
      const entry = line ? lines.get(line) : undefined;
      if (entry && entry.rings.size >= 2) {
        const axis = line![0] === "x" ? 1 : 0;
        const lo = Math.min(a[axis], b[axis]);
        const hi = Math.max(a[axis], b[axis]);
        const inside = entry.at.filter((v) => v > lo && v < hi);
        if (a[axis] > b[axis]) inside.reverse();
        for (const v of inside) out.push(axis === 1 ? [a[0], v] : [v, a[1]]);
      }
      out.push(b);
    }
    return out;
  });
}

/** Removes segments that appear in both directions, re-stitching what remains into closed rings. */
function cancelSharedSegments(rings: Ring[]): Ring[] {
  // Only segments joining two cell centres or lying on a line of centres can be shared: look at those first.
  const count = new Map<string, number>();
  const candidate = (a: Position, b: Position): boolean =>
    (isCentre(a) && isCentre(b)) || (a[0] === b[0] && onLattice(a[0])) || (a[1] === b[1] && onLattice(a[1]));
  for (const ring of rings) {
    for (let i = 1; i < ring.length; i++) {
      if (!candidate(ring[i - 1]!, ring[i]!)) continue;
      const k = `${key(ring[i - 1]!)}>${key(ring[i]!)}`;
      count.set(k, (count.get(k) ?? 0) + 1);
    }
  }
  let shared = false;
  for (const k of count.keys()) {
    const [a, b] = k.split(">");
    if (count.has(`${b}>${a}`)) {
      shared = true;
      break;
    }
  }
  if (!shared) return rings;
  for (const ring of rings) {
    for (let i = 1; i < ring.length; i++) {
      if (candidate(ring[i - 1]!, ring[i]!)) continue;
      const k = `${key(ring[i - 1]!)}>${key(ring[i]!)}`;
      count.set(k, (count.get(k) ?? 0) + 1);
    }
  }

  // Directed segments left after cancelling opposite pairs, by start vertex.
  const from: Position[] = [];
  const to: Position[] = [];
  const live = new Map<string, number>(count);
  for (const ring of rings) {
    for (let i = 1; i < ring.length; i++) {
      const a = ring[i - 1]!;
      const b = ring[i]!;
      const forward = `${key(a)}>${key(b)}`;
      const backward = `${key(b)}>${key(a)}`;
      const f = live.get(forward) ?? 0;
      const g = live.get(backward) ?? 0;
      if (f <= 0) continue;
      if (g > 0) {
        live.set(forward, f - 1);
        live.set(backward, g - 1);
        continue;
      }
      live.set(forward, f - 1);
      from.push(a);
      to.push(b);
    }
  }
  const outgoing = new Map<string, number[]>();
  from.forEach((a, e) => {
    const k = key(a);
    const list = outgoing.get(k);
    if (list) list.push(e);
    else outgoing.set(k, [e]);
  });
  const used = new Uint8Array(from.length);
  const out: Ring[] = [];
  for (let start = 0; start < from.length; start++) {
    if (used[start]) continue;
    used[start] = 1;
    const ring: Ring = [from[start]!, to[start]!];
    const startKey = key(from[start]!);
    let prev = from[start]!;
    let here = to[start]!;
    let closed = false;
    for (let guard = 0; guard <= from.length; guard++) {
      if (key(here) === startKey) {
        closed = true;
        break;
      }
      const candidates = (outgoing.get(key(here)) ?? []).filter((e) => !used[e]);
      if (candidates.length === 0) break;
      // Region on the right: take the first outgoing segment counter-clockwise from the way back.
      const back = Math.atan2(prev[1] - here[1], prev[0] - here[0]);
      let best = candidates[0]!;
      let bestTurn = Infinity;
      for (const e of candidates) {
        const dir = Math.atan2(to[e]![1] - here[1], to[e]![0] - here[0]);
        let turn = dir - back;
        while (turn <= 0) turn += 2 * Math.PI;
        while (turn > 2 * Math.PI) turn -= 2 * Math.PI;
        if (turn < bestTurn) {
          bestTurn = turn;
          best = e;
        }
      }
      used[best] = 1;
      prev = here;
      here = to[best]!;
      ring.push(here);
    }
    if (closed) out.push(ring);
  }
  return out;
}

/** Removes back-and-forth stretches (A→B→A, or B beyond C on the line A→B→C). Returns a closed ring. */
function removeSpikes(ring: Ring): Ring {
  let points = ring.slice(0, -1);
  for (let pass = 0; pass < 4; pass++) {
    const stack: Position[] = [];
    for (const p of points) {
      stack.push(p);
      while (stack.length >= 3 && isSpike(stack[stack.length - 3]!, stack[stack.length - 2]!, stack[stack.length - 1]!)) {
        stack.splice(stack.length - 2, 1);
      }
      while (stack.length >= 2 && same(stack[stack.length - 2]!, stack[stack.length - 1]!)) stack.pop();
    }
    // Across the seam.
    let changed = stack.length !== points.length;
    while (stack.length >= 3) {
      const n = stack.length;
      if (same(stack[n - 1]!, stack[0]!)) {
        stack.pop();
      } else if (isSpike(stack[n - 1]!, stack[0]!, stack[1]!)) {
        stack.shift();
      } else if (isSpike(stack[n - 2]!, stack[n - 1]!, stack[0]!)) {
        stack.pop();
      } else break;
      changed = true;
    }
    points = stack;
    if (!changed) break;
  }
  if (points.length === 0) return [];
  return [...points, points[0]!];
}

const same = (a: Position, b: Position): boolean => a[0] === b[0] && a[1] === b[1];

/** B is the tip of a spike: A, B, C collinear and the path turns back at B. */
function isSpike(a: Position, b: Position, c: Position): boolean {
  if (same(a, c)) return true;
  const ux = b[0] - a[0];
  const uy = b[1] - a[1];
  const vx = c[0] - b[0];
  const vy = c[1] - b[1];
  return ux * vy - uy * vx === 0 && ux * vx + uy * vy < 0;
}

/** Splits a ring that passes twice through a position into simple closed loops. */
function splitAtRepeats(ring: Ring): Ring[] {
  if (ring.length < 4) return [];
  const loops: Ring[] = [];
  const stack: Position[] = [];
  const at = new Map<string, number>();
  for (let i = 0; i < ring.length - 1; i++) {
    const p = ring[i]!;
    const k = key(p);
    const j = at.get(k);
    if (j === undefined) {
      at.set(k, stack.length);
      stack.push(p);
      continue;
    }
    const loop = stack.splice(j + 1);
    for (const q of loop) at.delete(key(q));
    loops.push([stack[j]!, ...loop, stack[j]!]);
  }
  if (stack.length >= 3) loops.push([...stack, stack[0]!]);
  return loops.filter((loop) => loop.length >= 4);
}

interface Node {
  ring: Ring;
  area: number;
  box: [number, number, number, number];
  children: Node[];
}

/** Rings nested by containment: even depth is an outer ring, its children are its holes. */
function nest(rings: Ring[]): Polygon[] {
  const nodes: Node[] = rings
    .map((ring) => ({ ring, area: Math.abs(ringArea(ring)), box: bounds(ring), children: [] as Node[] }))
    .sort((a, b) => b.area - a.area);
  const roots: Node[] = [];
  for (const node of nodes) {
    let siblings = roots;
    for (;;) {
      const parent = siblings.find((candidate) => contains(candidate, node));
      if (!parent) break;
      siblings = parent.children;
    }
    siblings.push(node);
  }
  const polygons: Polygon[] = [];
  const visit = (list: Node[], depth: number): void => {
    for (const node of list) {
      if (depth % 2 === 0) polygons.push({ outer: node.ring, holes: node.children.map((c) => c.ring) });
      visit(node.children, depth + 1);
    }
  };
  visit(roots, 0);
  return polygons;
}

function bounds(ring: Ring): [number, number, number, number] {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const [x, y] of ring) {
    if (x < x0) x0 = x;
    if (y < y0) y0 = y;
    if (x > x1) x1 = x;
    if (y > y1) y1 = y;
  }
  return [x0, y0, x1, y1];
}

/** Rings of one region never cross: the first position of the inner ring off the outer's boundary decides. */
function contains(outer: Node, inner: Node): boolean {
  const [a0, b0, a1, b1] = outer.box;
  const [c0, d0, c1, d1] = inner.box;
  if (c0 < a0 || d0 < b0 || c1 > a1 || d1 > b1 || inner.area >= outer.area) return false;
  const ring = inner.ring;
  for (let i = 0; i < ring.length - 1; i++) {
    const where = pointInRing(ring[i]!, outer.ring);
    if (where !== 0) return where === 1;
  }
  for (let i = 1; i < ring.length; i++) {
    const a = ring[i - 1]!;
    const b = ring[i]!;
    const where = pointInRing([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2], outer.ring);
    if (where !== 0) return where === 1;
  }
  return false;
}
