/**
 * Small pure functions on rings and polygons (tilebelt-style: no files, no HTTP, exact-value tests).
 * A ring is closed: its first position is repeated at the end. Planar functions work in whatever
 * coordinates they are given (grid indices or lon/lat degrees, longitude first).
 */
import type { Polygon, Position, Ring } from "./types.ts";

/** Mean Earth radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088;

/** Signed planar area by the shoelace formula: positive when counter-clockwise (x right, y up). */
export function ringArea(ring: readonly Position[]): number {
  let twice = 0;
  for (let i = 1; i < ring.length; i++) {
    const a = ring[i - 1]!;
    const b = ring[i]!;
    twice += a[0] * b[1] - b[0] * a[1];
  }
  return twice / 2;
}

/** True when the ring turns counter-clockwise (x right, y up: lon/lat), i.e. its signed area is positive. */
export function isCounterClockwise(ring: readonly Position[]): boolean {
  return ringArea(ring) > 0;
}

/** The ring turned to the wanted orientation (a new array; the input is left alone). */
export function orientRing(ring: readonly Position[], counterClockwise: boolean): Ring {
  const copy: Position[] = [];
  for (const p of ring) copy.push([p[0], p[1]]);
  return isCounterClockwise(copy) === counterClockwise ? copy : copy.reverse();
}

/**
 * Where a point lies relative to a closed ring: 1 inside, 0 on its boundary, -1 outside.
 * Even-odd rule, so the orientation of the ring does not matter.
 */
export function pointInRing(point: readonly [number, number], ring: readonly Position[]): 1 | 0 | -1 {
  const x = point[0];
  const y = point[1];
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const pi = ring[i]!;
    const pj = ring[j]!;
    const xi = pi[0];
    const yi = pi[1];
    const xj = pj[0];
    const yj = pj[1];
    // On the segment pj-pi?
    const cross = (xj - xi) * (y - yi) - (x - xi) * (yj - yi);
    if (cross === 0 && Math.min(xi, xj) <= x && x <= Math.max(xi, xj) && Math.min(yi, yj) <= y && y <= Math.max(yi, yj)) {
      return 0;
    }
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside ? 1 : -1;
}

/**
 * Douglas–Peucker simplification of a closed ring: every dropped position lies within `tolerance`
 * (perpendicular distance, same units as the ring) of the kept outline. Positions listed in `keep`
 * (by index) are never dropped. The result has at least 4 positions (3 distinct corners): when the
 * simplified ring would be smaller, the input ring is returned unchanged (a copy).
 *
 * @example simplifyRing([[0,0],[1,0],[2,0.01],[2,2],[0,2],[0,0]], 0.1) // [[0,0],[2,0.01],[2,2],[0,2],[0,0]]
 */
export function simplifyRing(ring: readonly Position[], tolerance: number, keep?: ReadonlySet<number>): Ring {
  return simplifyRingIndices(ring, tolerance, keep).map((i): Position => [ring[i]![0], ring[i]![1]]);
}

/**
 * The indices of the positions `simplifyRing` keeps (the first and last are 0 and ring.length - 1).
 * With `keepSide` (1: left of the chord, −1: right, by the sign of the cross product), a position strictly
 * on that side of the chord that would replace it is never dropped: the outline only moves to the other
 * side (outward, when keepSide is the side away from the region).
 */
export function simplifyRingIndices(ring: readonly Position[], tolerance: number, keep?: Iterable<number>, keepSide?: 1 | -1): number[] {
  const n = ring.length - 1; // distinct positions (the last repeats the first)
  const all = (): number[] => ring.map((_, i) => i);
  if (!(tolerance > 0) || n < 4) return all();
  const kept = new Uint8Array(n + 1);
  // Anchors: the first position, the one farthest from it, and every forced position.
  const first = ring[0]!;
  let far = 0;
  let farDist = -1;
  for (let i = 1; i < n; i++) {
    const p = ring[i]!;
    const d = (p[0] - first[0]) ** 2 + (p[1] - first[1]) ** 2;
    if (d > farDist) {
      farDist = d;
      far = i;
    }
  }
  kept[0] = kept[n] = kept[far] = 1;
  if (keep) for (const i of keep) if (i >= 0 && i <= n) kept[i] = 1;
  const tol2 = tolerance * tolerance;
  const stack: number[] = [];
  let previous = 0;
  for (let i = 1; i <= n; i++) {
    if (!kept[i]) continue;
    stack.push(previous, i);
    previous = i;
  }
  while (stack.length > 0) {
    const b = stack.pop()!;
    const a = stack.pop()!;
    if (b - a < 2) continue;
    const pa = ring[a]!;
    const pb = ring[b]!;
    let worst = -1;
    let worstD = tol2;
    // Positions on the kept side rank above any within tolerance; among them, the farthest first.
    let worstSide = false;
    const ex = pb[0] - pa[0];
    const ey = pb[1] - pa[1];
    const slack = 1e-9 * Math.hypot(ex, ey);
    for (let i = a + 1; i < b; i++) {
      const p = ring[i]!;
      const d = segmentDistance2(p, pa, pb);
      const onSide = keepSide !== undefined && keepSide * (ex * (p[1] - pa[1]) - ey * (p[0] - pa[0])) > slack;
      if ((onSide && (!worstSide || d > worstD)) || (!worstSide && !onSide && d > worstD)) {
        worstD = d;
        worst = i;
        worstSide = onSide;
      }
    }
    if (worst >= 0) {
      kept[worst] = 1;
      stack.push(a, worst, worst, b);
    }
  }
  const out: number[] = [];
  for (let i = 0; i <= n; i++) if (kept[i]) out.push(i);
  if (out.length < 4) return all();
  let twice = 0;
  for (let k = 1; k < out.length; k++) {
    const a = ring[out[k - 1]!]!;
    const b = ring[out[k]!]!;
    twice += a[0] * b[1] - b[0] * a[1];
  }
  return twice !== 0 ? out : all();
}

/** Squared distance from p to the segment a–b. */
export function segmentDistance2(p: readonly [number, number], a: readonly [number, number], b: readonly [number, number]): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len2 = dx * dx + dy * dy;
  let t = len2 === 0 ? 0 : ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = a[0] + t * dx - p[0];
  const ey = a[1] + t * dy - p[1];
  return ex * ex + ey * ey;
}

/**
 * Area enclosed by a lon/lat ring on the sphere, km², signed: positive when counter-clockwise.
 * The spherical-excess approximation of Chamberlain & Duquette (2007), as in d3-geo and turf; good to
 * well under 1% for ash-sized polygons.
 */
export function ringAreaKm2(ring: readonly Position[]): number {
  const n = ring.length - 1;
  if (n < 3) return 0;
  const rad = Math.PI / 180;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const prev = ring[(i + n - 1) % n]!;
    const here = ring[i]!;
    const next = ring[(i + 1) % n]!;
    sum += (prev[0] - next[0]) * rad * Math.sin(here[1] * rad);
  }
  return (sum * EARTH_RADIUS_KM * EARTH_RADIUS_KM) / 2;
}

/** Area of a polygon on the sphere, km²: its outer ring less its holes, whatever their orientation. */
export function polygonAreaKm2(polygon: Polygon): number {
  let area = Math.abs(ringAreaKm2(polygon.outer));
  for (const hole of polygon.holes) area -= Math.abs(ringAreaKm2(hole));
  return area;
}

/** Planar area of a polygon in its own units: outer ring less holes, whatever their orientation. */
export function polygonArea(polygon: Polygon): number {
  let area = Math.abs(ringArea(polygon.outer));
  for (const hole of polygon.holes) area -= Math.abs(ringArea(hole));
  return area;
}

/**
 * True when two segments of the rings cross or overlap (touching at a shared end point is allowed).
 * A uniform-grid bucket sweep: about linear in the number of segments for contour-like rings.
 */
export function ringsIntersect(rings: readonly (readonly Position[])[]): boolean {
  return findCrossingRings(rings).size > 0;
}

/** Segments a ring may have for ringCrossing to say where it crosses itself (a pairwise search, after the sweep said it does). */
const CROSSING_SEARCH_LIMIT = 5_000;

/**
 * Whether a closed ring crosses or overlaps itself (neighbouring segments share their end point, which is
 * allowed), and where: the first crossing found, when the ring is small enough to search pairwise (`at`
 * undefined beyond CROSSING_SEARCH_LIMIT segments). Undefined when it does not cross.
 */
export function ringCrossing(ring: readonly Position[]): { at: Position | undefined } | undefined {
  if (!ringsIntersect([ring])) return undefined;
  const n = ring.length - 1;
  if (n > CROSSING_SEARCH_LIMIT) return { at: undefined };
  for (let i = 1; i <= n; i++) {
    for (let j = i + 1; j <= n; j++) {
      const [a, b, c, d] = [ring[i - 1]!, ring[i]!, ring[j - 1]!, ring[j]!];
      if (segmentsConflict(a, b, c, d)) return { at: meetingPoint(a, b, c, d) };
    }
  }
  return { at: undefined };
}

/** Where two conflicting segments meet: their crossing, or an end point of one lying on the other. */
function meetingPoint(a: Position, b: Position, c: Position, d: Position): Position {
  const denominator = (b[0] - a[0]) * (d[1] - c[1]) - (b[1] - a[1]) * (d[0] - c[0]);
  if (denominator !== 0) {
    const t = ((c[0] - a[0]) * (d[1] - c[1]) - (c[1] - a[1]) * (d[0] - c[0])) / denominator;
    return [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
  }
  // Parallel, so overlapping (or the same segment): an end point of one inside the other.
  return [c, d].find((p) => strictlyBetween(a, b, p)) ?? [a, b].find((p) => strictlyBetween(c, d, p)) ?? a;
}

export interface CrossingOptions {
  /** Only pairs where at least one segment is "new" count (segment i joins positions i-1 and i). */
  onlyNew?: (ring: number, segment: number) => boolean;
  /** Collinear overlaps are not conflicts (boundaries shared on purpose). */
  allowCollinear?: boolean;
}

/**
 * Indices of the rings having a segment that crosses or overlaps another segment (of any ring); with
 * `onlyNew`, of the rings owning a new segment in such a pair (pairs of two old segments are not tested).
 */
export function findCrossingRings(rings: readonly (readonly Position[])[], options: CrossingOptions = {}): Set<number> {
  const onlyNew = options.onlyNew ?? (() => true);
  const bad = new Set<number>();
  // Bucket the new segments on a uniform grid sized by their mean extent, then test every segment
  // against the new ones sharing a bucket.
  const newSegs: Array<[number, number]> = [];
  let minX = Infinity;
  let minY = Infinity;
  let extent = 0;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    for (let i = 1; i < ring.length; i++) {
      if (!onlyNew(r, i)) continue;
      const a = ring[i - 1]!;
      const b = ring[i]!;
      newSegs.push([r, i]);
      minX = Math.min(minX, a[0], b[0]);
      minY = Math.min(minY, a[1], b[1]);
      extent += Math.max(Math.abs(b[0] - a[0]), Math.abs(b[1] - a[1]));
    }
  }
  if (newSegs.length === 0) return bad;
  // Buckets no smaller than 1/1024 of the rings' span: a few tiny new segments must not make a long
  // segment visit millions of buckets.
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const ring of rings) {
    for (const p of ring) {
      minX = Math.min(minX, p[0]);
      minY = Math.min(minY, p[1]);
      maxX = Math.max(maxX, p[0]);
      maxY = Math.max(maxY, p[1]);
    }
  }
  let size = Math.max(extent / newSegs.length, Math.max(maxX - minX, maxY - minY) / 1024);
  if (!(size > 0)) size = 1;
  const cellKey = (x: number, y: number): number => x * 1_048_573 + y;
  const buckets = new Map<number, number[]>();
  const range = (a: Position, b: Position): [number, number, number, number] => [
    Math.floor((Math.min(a[0], b[0]) - minX) / size),
    Math.floor((Math.min(a[1], b[1]) - minY) / size),
    Math.floor((Math.max(a[0], b[0]) - minX) / size),
    Math.floor((Math.max(a[1], b[1]) - minY) / size),
  ];
  for (let s = 0; s < newSegs.length; s++) {
    const [r, i] = newSegs[s]!;
    const ring = rings[r]!;
    const [x0, y0, x1, y1] = range(ring[i - 1]!, ring[i]!);
    for (let x = x0; x <= x1; x++) {
      for (let y = y0; y <= y1; y++) {
        const k = cellKey(x, y);
        const list = buckets.get(k);
        if (list) list.push(s);
        else buckets.set(k, [s]);
      }
    }
  }
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    for (let i = 1; i < ring.length; i++) {
      const a = ring[i - 1]!;
      const b = ring[i]!;
      const isNew = onlyNew(r, i);
      const [x0, y0, x1, y1] = range(a, b);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const list = buckets.get(cellKey(x, y));
          if (!list) continue;
          for (const s of list) {
            const [rt, it] = newSegs[s]!;
            if (rt === r && it === i) continue;
            if (bad.has(rt) && (!isNew || bad.has(r))) continue;
            const ringT = rings[rt]!;
            if (segmentsConflict(a, b, ringT[it - 1]!, ringT[it]!, options.allowCollinear)) {
              bad.add(rt);
              if (isNew) bad.add(r);
            }
          }
        }
      }
    }
  }
  return bad;
}

/**
 * True when segments a–b and c–d cross at a point interior to both, overlap along a stretch, or when
 * an end point of one lies strictly inside the other. Sharing an end point is allowed.
 */
export function segmentsConflict(a: Position, b: Position, c: Position, d: Position, allowCollinear = false): boolean {
  if (Math.max(a[0], b[0]) < Math.min(c[0], d[0]) || Math.max(c[0], d[0]) < Math.min(a[0], b[0])) return false;
  if (Math.max(a[1], b[1]) < Math.min(c[1], d[1]) || Math.max(c[1], d[1]) < Math.min(a[1], b[1])) return false;
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 * o2 < 0 && o3 * o4 < 0) return true; // proper crossing
  if (allowCollinear && o1 === 0 && o2 === 0) return false;
  // An end point strictly inside the other segment (includes collinear overlaps).
  if (o1 === 0 && strictlyBetween(a, b, c)) return true;
  if (o2 === 0 && strictlyBetween(a, b, d)) return true;
  if (o3 === 0 && strictlyBetween(c, d, a)) return true;
  if (o4 === 0 && strictlyBetween(c, d, b)) return true;
  // Identical segments (either direction).
  const same = (p: Position, q: Position): boolean => p[0] === q[0] && p[1] === q[1];
  return (same(a, c) && same(b, d)) || (same(a, d) && same(b, c));
}

function orient(a: Position, b: Position, c: Position): number {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/** p (collinear with a–b) lies on a–b and is neither end point. */
function strictlyBetween(a: Position, b: Position, p: Position): boolean {
  if ((p[0] === a[0] && p[1] === a[1]) || (p[0] === b[0] && p[1] === b[1])) return false;
  return Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);
}
