/**
 * Grid geometry: fractional grid coordinates (cell centre of column i is x = i) to lon/lat.
 *
 * - Regular grids (EEMEP): 1-D latitude and longitude axes, linear interpolation between centres and
 *   linear extrapolation beyond the outer centres (the outer half cells).
 * - Curvilinear grids (SNAP): 2-D latitude/longitude arrays, bilinear interpolation in the cell
 *   around the point (extrapolating from the outer cell beyond the outer centres). The four corner
 *   longitudes are unwrapped against the first before interpolating, so a cell across the
 *   antimeridian (179.9 and -179.9) interpolates through 180, not through 0.
 * - Longitudes are returned continuous over the domain, within 180° of its centre: a domain across
 *   the antimeridian gives e.g. 150..190 rather than a jump from 180 to -180. Latitudes are clamped to ±90.
 * - CF rotated pole (`rotated_latitude_longitude`): rotated to geographic coordinates, for SNAP files
 *   whose 2-D arrays must be computed, for the generator and for checks.
 */
import type { GridToLonLat, Position } from "../geo/types.ts";
import type { ModelGrid } from "./types.ts";

type Coordinates = ArrayLike<number>;

const DEG = Math.PI / 180;

/** `lon` moved by whole turns to within 180° of `centre`. */
export function wrapLongitude(lon: number, centre: number): number {
  return lon - 360 * Math.round((lon - centre) / 360);
}

/**
 * CF `rotated_latitude_longitude`: rotated (grid) coordinates to geographic lon/lat in degrees.
 * `poleLat`/`poleLon` are grid_north_pole_latitude/longitude (where the grid's north pole lies on
 * the Earth); `northPoleGridLon` is north_pole_grid_longitude (default 0). The grid point (0, 0) lies at
 * (lon = poleLon + 180, lat = 90 - poleLat). Same formulas as COSMO's rlarot2rla/phirot2phi and
 * PROJ's `ob_tran +o_lat_p=poleLat +lon_0=poleLon+180`.
 */
export function rotatedToGeographic(rlon: number, rlat: number, poleLat: number, poleLon: number, northPoleGridLon = 0): Position {
  const sinPole = Math.sin(poleLat * DEG);
  const cosPole = Math.cos(poleLat * DEG);
  const phi = rlat * DEG;
  const lambda = (rlon - northPoleGridLon) * DEG;
  const z = cosPole * Math.cos(phi) * Math.cos(lambda) + sinPole * Math.sin(phi);
  const poleLambda = poleLon * DEG;
  const common = -sinPole * Math.cos(lambda) * Math.cos(phi) + cosPole * Math.sin(phi);
  const y = Math.sin(poleLambda) * common - Math.cos(poleLambda) * Math.sin(lambda) * Math.cos(phi);
  const x = Math.cos(poleLambda) * common + Math.sin(poleLambda) * Math.sin(lambda) * Math.cos(phi);
  // atan2 of the vertical and horizontal parts rather than asin of the vertical: asin loses half the digits near a pole.
  return [wrapLongitude(Math.atan2(y, x) / DEG, 0), Math.atan2(z, Math.hypot(x, y)) / DEG];
}

/** The inverse of rotatedToGeographic: geographic lon/lat to rotated [rlon, rlat]. */
export function geographicToRotated(lon: number, lat: number, poleLat: number, poleLon: number, northPoleGridLon = 0): Position {
  const sinPole = Math.sin(poleLat * DEG);
  const cosPole = Math.cos(poleLat * DEG);
  const phi = lat * DEG;
  const lambda = (lon - poleLon) * DEG;
  const z = sinPole * Math.sin(phi) + cosPole * Math.cos(phi) * Math.cos(lambda);
  const y = -Math.cos(phi) * Math.sin(lambda);
  const x = -sinPole * Math.cos(phi) * Math.cos(lambda) + cosPole * Math.sin(phi);
  return [wrapLongitude(Math.atan2(y, x) / DEG + northPoleGridLon, 0), Math.atan2(z, Math.hypot(x, y)) / DEG];
}

/** Great-circle distance in degrees of arc. */
export function arcDegrees(a: Position, b: Position): number {
  const [lon1, lat1] = a;
  const [lon2, lat2] = b;
  const h = Math.sin(((lat2 - lat1) * DEG) / 2) ** 2 + Math.cos(lat1 * DEG) * Math.cos(lat2 * DEG) * Math.sin(((lon2 - lon1) * DEG) / 2) ** 2;
  return (2 * Math.asin(Math.min(1, Math.sqrt(h)))) / DEG;
}

/**
 * A regular grid from its axes (x along `lon`, y along `lat`). The axes must be strictly monotonic
 * (longitude after unwrapping: see unwrapAxis) and have at least two values each.
 */
export function regularGrid(lon: Coordinates, lat: Coordinates): ModelGrid {
  const lonAxis = unwrapAxis(lon);
  const latAxis = Float64Array.from(lat);
  const nx = lonAxis.length;
  const ny = latAxis.length;
  const lonMin = Math.min(lonAxis[0]!, lonAxis[nx - 1]!);
  const lonMax = Math.max(lonAxis[0]!, lonAxis[nx - 1]!);
  // Put the domain's centre within [-180, 180]: 0..360 axes of a European domain become -45..30.
  const shift = wrapLongitude((lonMin + lonMax) / 2, 0) - (lonMin + lonMax) / 2;
  for (let i = 0; i < nx; i++) lonAxis[i]! += shift;
  const toLonLat: GridToLonLat = (x, y) => [axisAt(lonAxis, x), clamp(axisAt(latAxis, y), -90, 90)];
  return {
    nx,
    ny,
    kind: "regular",
    toLonLat,
    geometry: { kind: "regular", x: Array.from(lonAxis), y: Array.from(latAxis) },
    domain: {
      north: Math.max(latAxis[0]!, latAxis[ny - 1]!),
      south: Math.min(latAxis[0]!, latAxis[ny - 1]!),
      east: lonMax + shift,
      west: lonMin + shift,
    },
    cellDegrees: Math.abs(latAxis[ny - 1]! - latAxis[0]!) / (ny - 1),
  };
}

/**
 * A curvilinear grid from 2-D arrays `lon[y * nx + x]`, `lat[y * nx + x]` (at least 2 × 2, finite,
 * latitudes within ±90).
 */
export function curvilinearGrid(lon: Coordinates, lat: Coordinates, nx: number, ny: number): ModelGrid {
  const domain = curvilinearDomain(lon, lat, nx * ny);
  const centre = (domain.west + domain.east) / 2;
  const toLonLat: GridToLonLat = (x, y) => {
    const i = clamp(Math.floor(x), 0, nx - 2);
    const j = clamp(Math.floor(y), 0, ny - 2);
    const fx = x - i;
    const fy = y - j;
    const k00 = j * nx + i;
    const k10 = k00 + 1;
    const k01 = k00 + nx;
    const k11 = k01 + 1;
    const lon00 = lon[k00]!;
    const lon10 = wrapLongitude(lon[k10]!, lon00);
    const lon01 = wrapLongitude(lon[k01]!, lon00);
    const lon11 = wrapLongitude(lon[k11]!, lon00);
    const w00 = (1 - fx) * (1 - fy);
    const w10 = fx * (1 - fy);
    const w01 = (1 - fx) * fy;
    const w11 = fx * fy;
    const lonAt = w00 * lon00 + w10 * lon10 + w01 * lon01 + w11 * lon11;
    const latAt = w00 * lat[k00]! + w10 * lat[k10]! + w01 * lat[k01]! + w11 * lat[k11]!;
    return [wrapLongitude(lonAt, centre), clamp(latAt, -90, 90)];
  };
  return { nx, ny, kind: "curvilinear", toLonLat, domain, cellDegrees: typicalCellDegrees(toLonLat, nx, ny) };
}

/** Unwraps a longitude axis into a continuous sequence (no jump of 360 between neighbours). */
export function unwrapAxis(lon: Coordinates): Float64Array {
  const axis = Float64Array.from(lon);
  for (let i = 1; i < axis.length; i++) axis[i] = wrapLongitude(axis[i]!, axis[i - 1]!);
  return axis;
}

/** Strictly increasing or strictly decreasing, finite. */
export function isStrictlyMonotonic(axis: Coordinates): boolean {
  if (axis.length < 2) return false;
  const sign = Math.sign(axis[1]! - axis[0]!);
  if (sign === 0) return false;
  for (let i = 0; i < axis.length; i++) {
    if (!Number.isFinite(axis[i]!)) return false;
    if (i > 0 && Math.sign(axis[i]! - axis[i - 1]!) !== sign) return false;
  }
  return true;
}

function axisAt(axis: Float64Array, v: number): number {
  const i = clamp(Math.floor(v), 0, axis.length - 2);
  const a = axis[i]!;
  return a + (v - i) * (axis[i + 1]! - a);
}

/**
 * Extreme latitudes and longitudes of the cell centres. Longitudes are measured against the grid's
 * middle cell, so a domain across the antimeridian gets west < east (east above 180); a domain
 * around a pole (longitudes all round) is -180..180.
 */
function curvilinearDomain(lon: Coordinates, lat: Coordinates, cells: number): ModelGrid["domain"] {
  const reference = wrapLongitude(lon[Math.floor(cells / 2)]!, 0);
  let north = -Infinity;
  let south = Infinity;
  let west = Infinity;
  let east = -Infinity;
  for (let k = 0; k < cells; k++) {
    const latitude = lat[k]!;
    if (latitude > north) north = latitude;
    if (latitude < south) south = latitude;
    const longitude = wrapLongitude(lon[k]!, reference);
    if (longitude > east) east = longitude;
    if (longitude < west) west = longitude;
  }
  if (east - west > 359 || north > 89.999 || south < -89.999) return { north, south, west: -180, east: 180 };
  const shift = wrapLongitude((west + east) / 2, 0) - (west + east) / 2;
  return { north, south, west: west + shift, east: east + shift };
}

/** The median distance between neighbouring centres, in degrees of arc, over a sample of cells. */
function typicalCellDegrees(toLonLat: GridToLonLat, nx: number, ny: number): number {
  const distances: number[] = [];
  const stepX = Math.max(1, Math.floor((nx - 1) / 10));
  const stepY = Math.max(1, Math.floor((ny - 1) / 10));
  for (let j = 0; j < ny - 1; j += stepY) {
    for (let i = 0; i < nx - 1; i += stepX) {
      const here = toLonLat(i, j);
      distances.push(arcDegrees(here, toLonLat(i + 1, j)), arcDegrees(here, toLonLat(i, j + 1)));
    }
  }
  distances.sort((a, b) => a - b);
  return distances[Math.floor(distances.length / 2)] ?? 0;
}

function clamp(value: number, low: number, high: number): number {
  return value < low ? low : value > high ? high : value;
}
