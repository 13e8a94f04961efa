/**
 * The rings bounding {v ≥ t} of a row-major grid, by marching squares with linear interpolation between
 * cell centres. Saddles (two diagonal corners at or above t, the other two below) are always resolved by
 * joining the corners at or above t: where the data cannot say whether ash connects, the drawn area keeps
 * it connected, so it contains what any other resolution of the saddle (gdal_contour's, d3-contour's)
 * would draw. Levels stay nested: for t1 < t2 every crossing of t1 on an edge lies nearer the low corner
 * than the crossing of t2, and both levels resolve a shared saddle the same way.
 *
 * Coordinates: the centre of cell (i, j) is at (i, j). Missing values (NaN) and the outside of the grid
 * (and −Infinity, which marks the outside of a larger grid this one is cut from) are below every
 * threshold. An edge from a missing value to a cell at or above t is crossed on that cell's centre (no
 * data to say more); an edge out of the grid is crossed on the cell's outer edge, half a cell out, as the
 * model's cell covers its whole footprint (and gdal_contour draws it so). Every ring is closed (first
 * position repeated last) and keeps the region on its right (the sign of the cross product: negative). Pure.
 */
import type { Position, Ring } from "./types.ts";

/**
 * Closed rings of {v ≥ t} on an nx × ny grid (values[y * nx + x]). `at`: where the grid's first cell is in a
 * larger grid it was cut from (positions are that grid's, computed there: the same bits whatever was cut).
 *
 * @example isorings(Float64Array.of(0, 5, 0, 0), 2, 2, 1) // one ring around the centre (1, 0)
 */
export function isorings(values: ArrayLike<number>, nx: number, ny: number, t: number, at: { x: number; y: number } = { x: 0, y: 0 }): Ring[] {
  // Three small functions, each with its own loops, rather than one: V8 compiles a long loop on the stack
  // (OSR), and a large function compiled that way was compiled again and again (bench:build:compiles).
  const level = classifyCells(values, nx, ny, t, at);
  const { next, vias } = boundarySegments(level);
  return followRings(level, next, vias);
}

/** The field at one threshold, on a grid with a frame of missing cells: cell (x, y) for x in −1 … nx, y in −1 … ny. */
interface Level {
  values: ArrayLike<number>;
  nx: number;
  ny: number;
  t: number;
  /** Where cell (0, 0) is in the grid positions are given in (isorings' `at`). */
  atX: number;
  atY: number;
  stride: number;
  above: Uint8Array;
  missing: Uint8Array;
  outside: Uint8Array;
}

function classifyCells(values: ArrayLike<number>, nx: number, ny: number, t: number, at: { x: number; y: number }): Level {
  const stride = nx + 2;
  const above = new Uint8Array(stride * (ny + 2));
  const missing = new Uint8Array(stride * (ny + 2)).fill(1);
  const outside = new Uint8Array(stride * (ny + 2)).fill(1);
  // One loop over the cells, not one per row (as in boundarySegments): c, the cell in the framed grid, steps
  // over the frame's two columns at the end of each row.
  let c = stride + 1;
  for (let k = 0, x = 0; k < nx * ny; k++) {
    const v = values[k]!;
    if (v >= t) above[c] = 1;
    if (v !== -Infinity) outside[c] = 0;
    if (!Number.isNaN(v) && v !== -Infinity) missing[c] = 0;
    c++;
    if (++x === nx) {
      x = 0;
      c += 2;
    }
  }
  return { values, nx, ny, t, atX: at.x, atY: at.y, stride, above, missing, outside };
}

function valueAt(level: Level, x: number, y: number): number {
  return x >= 0 && x < level.nx && y >= 0 && y < level.ny ? level.values[y * level.nx + x]! : -Infinity;
}

// Edges by id: 2·corner for the edge from corner (x, y) to (x + 1, y), 2·corner + 1 to (x, y + 1).
function crossing(level: Level, edge: number): Position {
  const c = edge >> 1;
  const x = (c % level.stride) - 1;
  const y = Math.floor(c / level.stride) - 1;
  const [bx, by] = edge & 1 ? [x, y + 1] : [x + 1, y];
  const a = valueAt(level, x, y);
  const b = valueAt(level, bx, by);
  // Fraction of the way from (x, y) to (bx, by) where the field, linear between the centres, equals t.
  let s: number;
  if (Number.isNaN(a) || Number.isNaN(b)) s = level.above[c] ? 0 : 1;
  else if (a === -Infinity || b === -Infinity) s = 0.5;
  else s = (level.t - a) / (b - a);
  return [x + level.atX + s * (bx - x), y + level.atY + s * (by - y)];
}

// Out-of-grid corners of a cell (bits as `bits` below) → the side of the cell inside the grid, when two are.
const INNER_SIDE: Partial<Record<number, number>> = { 12: 0, 9: 1, 3: 2, 6: 3 };

/**
 * A position to pass through between a segment's two crossings: on the grid's outer edge, where the
 * segment leaves the line of outermost centres (the cells' footprint is square to it).
 */
function frameVia(level: Level, out: number, edges: readonly number[], from: number, to: number, x: number, y: number): Position | undefined {
  // One corner in the grid: the cell's middle is the grid's outer corner.
  if (out === 14 || out === 13 || out === 11 || out === 7) return [x + level.atX + 0.5, y + level.atY + 0.5];
  // Two corners in the grid, along one side: that edge lies on the line of outermost centres, and the
  // footprint goes on square to it, to the cell's middle.
  const side = INNER_SIDE[out];
  if (side === undefined) return undefined;
  const inner = edges[side]!;
  if (from !== inner && to !== inner) return undefined;
  const [cx, cy] = crossing(level, inner);
  return side === 1 || side === 3 ? [x + level.atX + 0.5, cy] : [cx, y + level.atY + 0.5];
}

/** next[e]: the edge where the boundary segment starting on edge e ends, or −1; and the positions passed on the way. */
function boundarySegments(level: Level): { next: Int32Array; vias: Map<number, Position> } {
  const { ny, stride, above, missing, outside } = level;
  const next = new Int32Array(2 * stride * (ny + 2)).fill(-1);
  const vias = new Map<number, Position>();
  const corners = [0, 0, 0, 0];
  const edges = [0, 0, 0, 0];
  // One loop over the cells (tl: a cell's top-left corner; the frame's last column starts none), not a loop per
  // row: V8 compiled the inner loop on the stack and left that code at the end of every row ("exit from OSR'd
  // inner loop", hundreds of times a build), compiling the function again and again.
  const cells = (ny + 1) * stride;
  for (let tl = 0, column = 0; tl < cells; tl++, column = column === stride - 1 ? 0 : column + 1) {
    if (column === stride - 1) continue;
    // Corners in order around the cell (top-left, top-right, bottom-right, bottom-left), each edge k
    // running from corner k to corner k + 1, so the cell lies on the edges' left (positive cross product).
    const tr = tl + 1;
    const bl = tl + stride;
    const br = bl + 1;
    corners[0] = above[tl]!;
    corners[1] = above[tr]!;
    corners[2] = above[br]!;
    corners[3] = above[bl]!;
    const bits = corners[0]! | (corners[1]! << 1) | (corners[2]! << 2) | (corners[3]! << 3);
    if (bits === 0 || bits === 15) continue;
    edges[0] = 2 * tl;
    edges[1] = 2 * tr + 1;
    edges[2] = 2 * bl;
    edges[3] = 2 * tl + 1;
    // Beyond the outermost centres a level set follows the outer cells' footprints: at a corner of the
    // grid through the grid's outer corner, along an edge square to it (see frameVia).
    const out = outside[tl]! | (outside[tr]! << 1) | (outside[br]! << 2) | (outside[bl]! << 3);
    // A boundary segment runs from where the boundary leaves the region (at or above t, then below) to
    // where it next enters it, walking around the cell: with the region on its left. Pairing each exit
    // with the next entry joins the high corners of a saddle; pairing it with the previous entry cuts
    // them apart, which a saddle between two missing corners needs (joined, it would be a bridge of no
    // width along the diagonal).
    const apart = (bits === 5 && missing[tr]! && missing[bl]!) || (bits === 10 && missing[tl]! && missing[br]!);
    for (let k = 0; k < 4; k++) {
      if (!(corners[k] && !corners[(k + 1) & 3])) continue;
      for (let m = apart ? 3 : 1; apart ? m > 0 : m < 4; m += apart ? -1 : 1) {
        const j = (k + m) & 3;
        if (!corners[j] && corners[(j + 1) & 3]) {
          next[edges[k]!] = edges[j]!;
          if (out !== 0) {
            const via = frameVia(level, out, edges, edges[k]!, edges[j]!, column - 1, Math.floor(tl / stride) - 1);
            if (via) vias.set(edges[k]!, via);
          }
          break;
        }
      }
    }
  }
  return { next, vias };
}

/** The segments followed into rings, reversed so that the region lies on their right. */
function followRings(level: Level, next: Int32Array, vias: Map<number, Position>): Ring[] {
  const rings: Ring[] = [];
  for (let start = 0; start < next.length; start++) {
    if (next[start]! < 0) continue;
    const ring: Ring = [];
    let e = start;
    while (next[e]! >= 0) {
      ring.push(crossing(level, e));
      const corner = vias.get(e);
      if (corner) ring.push(corner);
      const following = next[e]!;
      next[e] = -1;
      e = following;
    }
    ring.push([ring[0]![0], ring[0]![1]]);
    rings.push(ring.reverse());
  }
  return rings;
}
