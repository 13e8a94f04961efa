/**
 * Hand-made ash areas for tests, samples and benchmarks: a plume from Eyjafjallajökull spreading
 * south-east, as ThresholdBand values (disjoint classes: low has a hole where medium is, and so on).
 */
import type { LatLonBoxModel } from "../../src/contract/ashModel.ts";
import type { Polygon, Position, Ring, ThresholdBand } from "../../src/geo/types.ts";

export const EYJAFJALLAJOKULL = { name: "Eyjafjallajökull", lat: 63.63, lon: -19.62 };
export const ICELAND_BOX: LatLonBoxModel = { north: 72, south: 53, east: 12, west: -32 };

/** Signed area in lon/lat (positive: counter-clockwise). */
function signedArea(ring: Ring): number {
  let a = 0;
  for (let i = 0; i + 1 < ring.length; i++) a += ring[i]![0] * ring[i + 1]![1] - ring[i + 1]![0] * ring[i]![1];
  return a / 2;
}
export const orient = (ring: Ring, ccw: boolean): Ring => ((signedArea(ring) > 0) === ccw ? ring : [...ring].reverse());

export interface Teardrop {
  /** Start behind the source (km, negative upwind), length (km) and half width (km). */
  start: number;
  length: number;
  halfWidth: number;
}

/**
 * A teardrop along a curving axis from (lat0, lon0): bearing in degrees from north, `curve` km of
 * sideways drift at the far end. Closed ring, counter-clockwise.
 */
export function teardrop(origin: { lat: number; lon: number }, bearing: number, curve: number, t: Teardrop, n = 72): Ring {
  const b = (bearing * Math.PI) / 180;
  const at = (s: number, c: number): Position => {
    const drift = curve * (s / Math.max(1, t.length)) ** 2;
    const cc = c + drift;
    const east = s * Math.sin(b) + cc * Math.cos(b);
    const north = s * Math.cos(b) - cc * Math.sin(b);
    const lat = origin.lat + north / 111.2;
    const lon = origin.lon + east / (111.2 * Math.cos((lat * Math.PI) / 180));
    return [Math.round(lon * 1e4) / 1e4, Math.round(lat * 1e4) / 1e4];
  };
  const width = (u: number): number => t.halfWidth * Math.sqrt(Math.max(0, u)) * Math.max(0, 1 - u) ** 0.55 * 1.6;
  const left: Position[] = [];
  const right: Position[] = [];
  for (let i = 0; i <= n; i++) {
    const u = i / n;
    const s = t.start + (t.length - t.start) * u;
    left.push(at(s, -width(u)));
    right.push(at(s, width(u)));
  }
  const ring = [...left, ...right.reverse().slice(1)];
  ring.push(ring[0]!);
  return orient(ring, true);
}

/** Disjoint classes from nested shapes: each class is its shape minus the next one's (as a hole). */
export function nestedBands(origin: { lat: number; lon: number }, bearing: number, curve: number, shapes: Teardrop[], thresholds: readonly number[]): ThresholdBand[] {
  const rings = shapes.map((s) => teardrop(origin, bearing, curve, s));
  return rings.map((outer, i) => {
    const inner = rings[i + 1];
    const polygon: Polygon = { outer, holes: inner ? [orient(inner, false)] : [] };
    return { lower: thresholds[i]!, upper: thresholds[i + 1] ?? null, polygons: [polygon] };
  });
}

export const THRESHOLDS = [0.2, 2, 4] as const;
/** What the sample fields are, as the model chain's MAX6h names say (src/model/fieldMeaning.ts). */
export const QUANTITY = "maximum of 6-hour mean ash concentration";
/** Hourly outputs over a day, as a run map's `times`. */
export const DAY_OF_OUTPUTS = Array.from({ length: 25 }, (_, h) => new Date(Date.UTC(2010, 3, 14, 6 + h)).toISOString().replace(".000Z", "Z"));

/** The run maximum per flight-level band: a 24 h plume, widest low in the atmosphere. */
export function samplePlumeBands(hours = 24): Array<{ label: string; areas: ThresholdBand[] }> {
  const k = hours / 24;
  const v = EYJAFJALLAJOKULL;
  return [
    {
      label: "SFC/FL200",
      areas: nestedBands(v, 128, 160 * k, [
        { start: -40, length: 1050 * k + 40, halfWidth: 200 * Math.sqrt(k) + 20 },
        { start: -20, length: 640 * k + 20, halfWidth: 110 * Math.sqrt(k) + 10 },
        { start: -8, length: 280 * k + 10, halfWidth: 55 * Math.sqrt(k) + 5 },
      ], THRESHOLDS),
    },
    {
      label: "FL200/350",
      areas: nestedBands(v, 118, 220 * k, [
        { start: -30, length: 1250 * k + 30, halfWidth: 150 * Math.sqrt(k) + 15 },
        { start: -12, length: 420 * k + 12, halfWidth: 70 * Math.sqrt(k) + 8 },
      ], THRESHOLDS),
    },
    {
      label: "FL350/550",
      areas: nestedBands(v, 105, 120 * k, [{ start: -15, length: 700 * k + 15, halfWidth: 80 * Math.sqrt(k) + 8 }], THRESHOLDS),
    },
  ];
}

/** A lon/lat rectangle as a closed ring (densified), counter-clockwise unless `ccw` is false; west > east crosses 180°. */
export function lonLatRect(west: number, south: number, east: number, north: number, ccw = true): Ring {
  const span = east > west ? east - west : east - west + 360;
  const wrap = (lon: number): number => (lon > 180 ? lon - 360 : lon);
  const n = 16;
  const ring: Position[] = [];
  for (let i = 0; i <= n; i++) ring.push([wrap(west + (span * i) / n), south]);
  for (let i = 1; i <= n; i++) ring.push([wrap(east < west ? east : west + span), south + ((north - south) * i) / n]);
  for (let i = n - 1; i >= 0; i--) ring.push([wrap(west + (span * i) / n), north]);
  for (let i = n - 1; i >= 0; i--) ring.push([west, south + ((north - south) * i) / n]);
  return ccw ? ring : [...ring].reverse();
}
