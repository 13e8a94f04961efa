/**
 * Natural Earth land and country borders (world-atlas TopoJSON, public domain) as the base maps draw them,
 * in a compact binary form kept beside this module (natural-earth-<resolution>.bin, made from world-atlas by
 * `npm run natural-earth`, scripts/natural-earth.ts): no TopoJSON is parsed at run time. Parsing it and
 * decoding its arcs took 60-80 ms, and ~100,000 small arrays, for every base map a build worker drew; this
 * form is read in well under a millisecond, and a piece's GeoJSON is made only when it is in the map. The
 * positions are those topojson-client gives, bit for bit: the file holds TopoJSON's own quantised integers,
 * and a position is `q × scale + translate`, as topojson-client computes it (test/render/naturalEarthData.test.ts
 * checks the files against world-atlas).
 *
 * Layout, little-endian: 8 int32 (format version, land pieces, land rings, land points, border lines, border
 * points, 0, 0); 8 float64 (land scale x, y, translate x, y; the same for borders); int32 offsets of each land
 * piece's first ring (pieces + 1), of each land ring's first point (rings + 1); int32 x, y of each land point;
 * int32 offsets of each border line's first point (lines + 1); int32 x, y of each border point.
 */

/** The layout's version (written first): bumped when it changes, with the files made again. */
export const FORMAT_VERSION = 1;

/** A piece of Natural Earth with its lon/lat bounding box, for cheap culling before its GeoJSON is made. */
export interface Piece<G> {
  west: number;
  east: number;
  south: number;
  north: number;
  geometry(): G;
}

export interface NaturalEarth {
  /** Land, one piece per polygon (its bounding box: its outer ring's). */
  land: Array<Piece<GeoJSON.Polygon>>;
  /** Country borders (shared edges between countries only, so coasts are not drawn twice), one piece per line. */
  borders: Array<Piece<GeoJSON.LineString>>;
}

/** The land and borders of a file scripts/natural-earth.ts made. */
export function decodeNaturalEarth(bytes: Uint8Array): NaturalEarth {
  // Copied into a buffer of its own: the views below need its start aligned.
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const [version, pieceCount = 0, ringCount = 0, landPoints = 0, lineCount = 0, borderPoints = 0] = new Int32Array(buffer, 0, 8);
  if (version !== FORMAT_VERSION) throw new RangeError(`Internal error: Natural Earth data of format ${version}, not ${FORMAT_VERSION}: run npm run natural-earth`);
  const [lkx = 0, lky = 0, ldx = 0, ldy = 0, bkx = 0, bky = 0, bdx = 0, bdy = 0] = new Float64Array(buffer, 32, 8);
  let at = 96;
  const take = (count: number): Int32Array => {
    const view = new Int32Array(buffer, at, count);
    at += count * 4;
    return view;
  };
  const pieceRings = take(pieceCount + 1);
  const ringPoints = take(ringCount + 1);
  const landXY = take(2 * landPoints);
  const linePoints = take(lineCount + 1);
  const borderXY = take(2 * borderPoints);
  if (at !== buffer.byteLength) throw new RangeError("Internal error: Natural Earth data of the wrong length: run npm run natural-earth");
  const positions = (xy: Int32Array, from: number, to: number, kx: number, ky: number, dx: number, dy: number): GeoJSON.Position[] => {
    const out: GeoJSON.Position[] = [];
    for (let p = from; p < to; p++) out.push([xy[2 * p]! * kx + dx, xy[2 * p + 1]! * ky + dy]);
    return out;
  };
  const land: Array<Piece<GeoJSON.Polygon>> = [];
  for (let piece = 0; piece < pieceCount; piece++) {
    const firstRing = pieceRings[piece]!;
    const endRing = pieceRings[piece + 1]!;
    land.push({
      ...(firstRing < endRing ? bounds(landXY, ringPoints[firstRing]!, ringPoints[firstRing + 1]!, lkx, lky, ldx, ldy) : bounds(landXY, 0, 0, lkx, lky, ldx, ldy)),
      geometry: () => {
        const coordinates: GeoJSON.Position[][] = [];
        for (let ring = firstRing; ring < endRing; ring++) coordinates.push(positions(landXY, ringPoints[ring]!, ringPoints[ring + 1]!, lkx, lky, ldx, ldy));
        return { type: "Polygon", coordinates };
      },
    });
  }
  const borders: Array<Piece<GeoJSON.LineString>> = [];
  for (let line = 0; line < lineCount; line++) {
    const from = linePoints[line]!;
    const to = linePoints[line + 1]!;
    borders.push({ ...bounds(borderXY, from, to, bkx, bky, bdx, bdy), geometry: () => ({ type: "LineString", coordinates: positions(borderXY, from, to, bkx, bky, bdx, bdy) }) });
  }
  return { land, borders };
}

function bounds(xy: Int32Array, from: number, to: number, kx: number, ky: number, dx: number, dy: number): { west: number; east: number; south: number; north: number } {
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  for (let p = from; p < to; p++) {
    const lon = xy[2 * p]! * kx + dx;
    const lat = xy[2 * p + 1]! * ky + dy;
    if (lon < west) west = lon;
    if (lon > east) east = lon;
    if (lat < south) south = lat;
    if (lat > north) north = lat;
  }
  return { west, east, south, north };
}
