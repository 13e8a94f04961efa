/**
 * GeoJSON geometry made to RFC 7946's rules for the antimeridian: polygons and lines crossing 180° cut
 * into parts on either side (§3.1.9), every longitude within −180 … 180, rings closed and oriented
 * (exterior counter-clockwise, holes clockwise, §3.1.6), and a bbox that crosses 180° written with west
 * greater than east (§5.2). Pure: no files, no HTTP.
 *
 * Positions come in two ways and both are taken: unwrapped (longitudes running on past 180, as the build
 * gives them for a model grid across the antimeridian, see lonLatBox.ts), or within ±180 with a jump of
 * more than 180° between two positions (as KML writes an edge across the antimeridian: the shorter way
 * round, as Google Earth and GDAL's -wrapdateline draw it). Edges are straight lines in longitude and
 * latitude (RFC 7946 §3.1.1), so a cut point's latitude is the linear interpolation at 180°, and the
 * parts' areas add up to the uncut polygon's.
 *
 * Coordinates are kept exactly: a position is written as given (with its altitude, if it has one), or
 * shifted by 360°, which is exact for longitudes between 180 and 540 (Sterbenz); cut points lie on ±180.
 *
 * @example rfc7946Polygon([[[179, 0], [181, 0], [181, 1], [179, 1], [179, 0]]])
 * // [[[[180, 1], [179, 1], [179, 0], [180, 0], [180, 1]]], [[[-180, 0], [-179, 0], [-179, 1], [-180, 1], [-180, 0]]]]
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { unionOfBoxes } from "./lonLatBox.ts";
import { pointInRing, ringArea } from "./rings.ts";
import type { Position } from "./types.ts";

/** A GeoJSON position: `[lon, lat]` or `[lon, lat, altitude]`. */
export type GeoPosition = number[];

/** A position on its way through the cut: unwrapped longitude `x`, and how the output writes it. */
interface Vertex {
  /** Unwrapped longitude: `lon + 360 k`. */
  x: number;
  y: number;
  /** Longitude as given and its shift in turns; a cut point has no given longitude (k NaN). */
  lon: number;
  k: number;
  /** The altitude, when the position has one. */
  z?: number;
}

/** Longitudes continued across jumps of more than 180° between consecutive positions (the shorter way). */
function unwrap(positions: readonly GeoPosition[]): Vertex[] {
  let k = 0;
  let previous: number | undefined;
  return positions.map((p) => {
    const lon = p[0]!;
    if (previous !== undefined) {
      const step = lon + 360 * k - previous;
      if (step > 180) k -= Math.ceil((step - 180) / 360);
      else if (step < -180) k += Math.ceil((-180 - step) / 360);
    }
    const x = k === 0 ? lon : lon + 360 * k;
    previous = x;
    return vertex(x, p[1]!, lon, k, p[2]);
  });
}

function vertex(x: number, y: number, lon: number, k: number, z: number | undefined): Vertex {
  return z === undefined ? { x, y, lon, k } : { x, y, lon, k, z };
}

/** The vertex moved by whole turns (a hole brought next to its exterior). */
const turned = (v: Vertex, turns: number): Vertex => (turns === 0 ? v : vertex(v.x + 360 * turns, v.y, v.lon, v.k + turns, v.z));

/** The position written for a vertex of strip `s` (longitudes 360 s − 180 … 360 s + 180). */
function output(v: Vertex, s: number): GeoPosition {
  const lon = v.k === s ? v.lon : v.x - 360 * s;
  return v.z === undefined ? [lon, v.y] : [lon, v.y, v.z];
}

const same = (a: Vertex, b: Vertex): boolean => a.x === b.x && a.y === b.y && a.z === b.z;
const planar = (ring: readonly Vertex[]): Position[] => ring.map((v): Position => [v.x, v.y]);

/** The ring closed (first position repeated at the end) when it is not. */
function closed(ring: Vertex[]): Vertex[] {
  return ring.length > 0 && !same(ring[0]!, ring[ring.length - 1]!) ? [...ring, ring[0]!] : ring;
}

function oriented(ring: Vertex[], counterClockwise: boolean): Vertex[] {
  const area = ringArea(planar(ring));
  return area !== 0 && area > 0 !== counterClockwise ? [...ring].reverse() : ring;
}

/** Where the edge a–b meets the meridian x = at: linear in longitude and latitude, the same whichever way the edge runs. */
function crossing(a: Vertex, b: Vertex, at: number): Vertex {
  if (a.x === at) return a;
  if (b.x === at) return b;
  const [p, q] = a.x < b.x ? [a, b] : [b, a];
  const t = (at - p.x) / (q.x - p.x);
  const z = p.z !== undefined && q.z !== undefined ? p.z + (q.z - p.z) * t : undefined;
  return vertex(at, p.y + (q.y - p.y) * t, Number.NaN, Number.NaN, z);
}

/** Strip s holds longitudes 360 s − 180 … 360 s + 180; the strips a range [west, east] reaches into. */
const firstStrip = (west: number): number => Math.floor((west + 180) / 360);
const lastStrip = (east: number): number => Math.ceil((east - 180) / 360);

/**
 * The part of a polygon (exterior counter-clockwise, holes clockwise, closed) on one side of the
 * meridian x = at: `keep` −1 keeps x ≤ at, 1 keeps x ≥ at. Each ring is cut where it crosses; the pieces
 * on the kept side are joined along the meridian (northwards on the west side, southwards on the east,
 * so the interior stays on the left) and holes go to the exterior that holds them.
 */
function clip(rings: readonly Vertex[][], at: number, keep: -1 | 1): Vertex[][][] {
  const outside = (v: Vertex): boolean => (keep < 0 ? v.x > at : v.x < at);
  const whole: Vertex[][] = [];
  const chains: Vertex[][] = [];
  for (const ring of rings) {
    const open = ring.slice(0, -1);
    const start = open.findIndex(outside);
    if (start < 0) {
      whole.push(ring);
      continue;
    }
    if (open.every(outside)) continue;
    let chain: Vertex[] | undefined;
    for (let i = 1; i <= open.length; i++) {
      const a = open[(start + i - 1) % open.length]!;
      const b = open[(start + i) % open.length]!;
      if (outside(a) && !outside(b)) {
        const entry = crossing(a, b, at);
        chain = entry === b ? [b] : [entry, b];
      } else if (!outside(a) && outside(b)) {
        const exit = crossing(a, b, at);
        if (exit !== a) chain!.push(exit);
        chains.push(chain!);
        chain = undefined;
      } else if (!outside(b)) {
        chain!.push(b);
      }
    }
  }
  // A piece lying on the meridian only (a ring touching it from the other side) encloses nothing here.
  const pieces = chains.filter((piece) => piece.some((v) => v.x !== at));
  const northwards = keep < 0;
  const assembled: Vertex[][] = [];
  const used = new Set<Vertex[]>();
  for (const first of pieces) {
    if (used.has(first)) continue;
    used.add(first);
    const ring = [...first];
    let current = first;
    for (;;) {
      const from = current[current.length - 1]!.y;
      let next: Vertex[] | undefined;
      let distance = Infinity;
      for (const candidate of pieces) {
        if (used.has(candidate) && candidate !== first) continue;
        const d = northwards ? candidate[0]!.y - from : from - candidate[0]!.y;
        if (d < 0 || d > distance || (d === distance && candidate !== first)) continue;
        next = candidate;
        distance = d;
      }
      if (next === undefined || next === first) break;
      used.add(next);
      ring.push(...next);
      current = next;
    }
    assembled.push(closed(ring));
  }
  return withHoles([...assembled, ...whole]);
}

/** Rings sorted into polygons: counter-clockwise ones are exteriors, each clockwise one goes to the exterior holding it. */
function withHoles(rings: readonly Vertex[][]): Vertex[][][] {
  const polygons: Vertex[][][] = [];
  const holes: Vertex[][] = [];
  for (const ring of rings) {
    const area = ringArea(planar(ring));
    if (area > 0) polygons.push([ring]);
    else if (area < 0) holes.push(ring);
  }
  for (const hole of holes) {
    const owner = polygons.find(([outer]) => {
      const shape = planar(outer!);
      for (const v of hole) {
        const where = pointInRing([v.x, v.y], shape);
        if (where !== 0) return where > 0;
      }
      return false;
    });
    owner?.push(hole);
  }
  return polygons;
}

/** Two positions alike in every element (a ring is closed when its last position is its first). */
const equalPositions = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((value, i) => value === b[i]);

/**
 * A ring unwrapped and closed, the closing edge unwrapped like the others; `aroundPole` when it does not
 * come back to its starting longitude (it winds around a pole: there is no side of 180° to cut it to).
 */
function ringOf(given: readonly GeoPosition[]): { ring: Vertex[]; aroundPole: boolean } {
  const closedGiven = equalPositions(given[0]!, given[given.length - 1]!) ? given : [...given, given[0]!];
  const ring = unwrap(closedGiven);
  return { ring, aroundPole: ring[0]!.x !== ring[ring.length - 1]!.x };
}

/**
 * Whether rfc7946Polygon gives `rings` back as they are: one part, the same positions in the same order (so a
 * writer can use text it has for them). That is: each ring closed, no step of more than 180° in longitude,
 * the exterior counter-clockwise and holes clockwise (or of no area), each hole within half a turn of the
 * exterior's middle, and everything within ±180 of the first turn. Rings as flat `[lon, lat, lon, lat, …]`;
 * the sums are rfc7946Polygon's own, term for term.
 */
export function keptByRfc7946(rings: readonly Float64Array[]): boolean {
  if (rings.length === 0) return false;
  let west = Infinity;
  let east = -Infinity;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r]!;
    const n = ring.length;
    if (n < 2 || ring[0] !== ring[n - 2] || ring[1] !== ring[n - 1]) return false;
    let twice = 0;
    for (let i = 2; i < n; i += 2) {
      const step = ring[i]! - ring[i - 2]!;
      if (step > 180 || step < -180) return false;
      twice += ring[i - 2]! * ring[i + 1]! - ring[i]! * ring[i - 1]!;
      if (r === 0) {
        west = Math.min(west, ring[i - 2]!);
        east = Math.max(east, ring[i - 2]!);
      }
    }
    if (r === 0) {
      west = Math.min(west, ring[n - 2]!);
      east = Math.max(east, ring[n - 2]!);
    }
    const area = twice / 2;
    // oriented(): a ring the wrong way round is reversed.
    if (area !== 0 && area > 0 !== (r === 0)) return false;
  }
  const middle = (west + east) / 2;
  for (let r = 1; r < rings.length; r++) if (Math.round((middle - rings[r]![0]!) / 360) !== 0) return false;
  return firstStrip(west) === 0 && lastStrip(east) <= 0;
}

/**
 * A polygon as RFC 7946 wants it: rings closed, the exterior counter-clockwise and holes clockwise, and
 * cut at the antimeridian into one polygon per side when it crosses (a hole crossing it becomes part of
 * the outline of each side). `rings` is the exterior then the holes, closed or not, in either orientation.
 * A ring around a pole is left as given (closed): a cut at 180° cannot make it valid.
 */
export function rfc7946Polygon(rings: readonly (readonly GeoPosition[])[]): GeoPosition[][][] {
  const given = rings.filter((ring) => ring.length > 0);
  if (given.length === 0 || given.length !== rings.length || rings[0]!.length === 0) return [];
  const unwrapped = given.map(ringOf);
  if (unwrapped.some((r) => r.aroundPole)) {
    return [given.map((ring) => (equalPositions(ring[0]!, ring[ring.length - 1]!) ? ring : [...ring, ring[0]!]).map((p) => rfc7946Position(p)))];
  }
  const outer = oriented(unwrapped[0]!.ring, true);
  const { west, east } = extentOf(outer);
  const middle = (west + east) / 2;
  const holes = unwrapped.slice(1).map(({ ring }) => {
    const hole = oriented(ring, false);
    // A hole unwrapped on its own may sit a turn away from its exterior: bring it next to it.
    const turns = Math.round((middle - hole[0]!.x) / 360);
    return hole.map((v) => turned(v, turns));
  });
  const first = firstStrip(west);
  const last = lastStrip(east);
  if (first >= last) return [[outer, ...holes].map((ring) => ring.map((v) => output(v, first)))];
  const parts: GeoPosition[][][] = [];
  for (let s = first; s <= last; s++) {
    let pieces: Vertex[][][] = [[outer, ...holes]];
    if (s > first) pieces = pieces.flatMap((polygon) => clip(polygon, 360 * s - 180, 1));
    if (s < last) pieces = pieces.flatMap((polygon) => clip(polygon, 360 * s + 180, -1));
    for (const polygon of pieces) parts.push(polygon.map((ring) => ring.map((v) => output(v, s))));
  }
  return parts;
}

/** A line cut where it crosses the antimeridian: one line per side, every longitude within ±180. */
export function rfc7946LineString(line: readonly GeoPosition[]): GeoPosition[][] {
  const vertices = unwrap(line);
  const parts: GeoPosition[][] = [];
  const first = vertices[0];
  if (!first) return parts;
  let s = Math.round(first.x / 360);
  let piece: Vertex[] = [first];
  const emit = (): void => {
    if (piece.some((v) => !same(v, piece[0]!))) parts.push(piece.map((v) => output(v, s)));
  };
  for (const v of vertices.slice(1)) {
    while (v.x > 360 * s + 180 || v.x < 360 * s - 180) {
      const at = v.x > 360 * s + 180 ? 360 * s + 180 : 360 * s - 180;
      const last = piece[piece.length - 1]!;
      const cut = crossing(last, v, at);
      if (cut !== last) piece.push(cut);
      emit();
      s += v.x > at ? 1 : -1;
      piece = [cut];
    }
    piece.push(v);
  }
  emit();
  return parts.length > 0 ? parts : [vertices.map((v) => output(v, s))];
}

/** A position with its longitude brought within ±180. */
export function rfc7946Position(position: readonly number[]): GeoPosition {
  const lon = position[0]!;
  if (lon >= -180 && lon <= 180) return [...position];
  const s = Math.round(lon / 360);
  return [lon - 360 * s, ...position.slice(1)];
}

/** West, east (unwrapped, east ≥ west), south and north of positions, continued across the antimeridian as the cut does. */
export function unwrappedExtent(positions: readonly GeoPosition[]): LatLonBoxModel | undefined {
  return positions.length === 0 ? undefined : extentOf(unwrap(positions));
}

function extentOf(vertices: readonly Vertex[]): LatLonBoxModel {
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  for (const v of vertices) {
    west = Math.min(west, v.x);
    east = Math.max(east, v.x);
    south = Math.min(south, v.y);
    north = Math.max(north, v.y);
  }
  return { west, east, south, north };
}

/**
 * The bbox member (RFC 7946 §5) of geometries with these unwrapped extents: `[west, south, east, north]`,
 * west greater than east when the box crosses the antimeridian (§5.2), the whole circle when it spans
 * 360°; with the lowest and highest altitude as third and sixth elements when positions have one.
 *
 * @example rfc7946Bbox([{ west: 179, east: 181, south: 0, north: 1 }]) // [179, 0, -179, 1]
 */
export function rfc7946Bbox(extents: readonly LatLonBoxModel[], altitudes?: { min: number; max: number }): number[] | undefined {
  const box = unionOfBoxes(extents);
  if (!box) return undefined;
  const turns = Math.floor((box.west + 180) / 360);
  let west = box.west - 360 * turns;
  let east = box.east - 360 * turns;
  if (east - west >= 360) {
    west = -180;
    east = 180;
  } else if (east > 180) {
    east -= 360;
  }
  return altitudes ? [west, box.south, altitudes.min, east, box.north, altitudes.max] : [west, box.south, east, box.north];
}
