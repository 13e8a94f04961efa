/**
 * POST /route: what a flight meets along its path. The path is followed along great circles between
 * vertices, sampled at most half a grid cell apart (so no cell it crosses is stepped over); each sample
 * has the aircraft's time and altitude interpolated linearly between its vertices (by distance), its
 * flight level from the altitude (src/geo/flightLevel.ts), and takes the value a place gets (/point: the highest
 * of the cell centres around it), in the band(s) of its flight level, at the step valid at its time. Without times, each step is answered
 * for the whole path at once (the highest value anywhere along it).
 *
 * Work is bounded by the number of samples: at most MAX_ROUTE_SAMPLES per model, counted before any is
 * taken, so a request costs at most that many cell look-ups (× the steps without times, over distinct
 * cells only).
 */
import { classOf } from "../contract/ashClasses.ts";
import type { Encounter, ModelRoute, RouteAnswer, RoutePoint, Stretch } from "../contract/queries.ts";
import { decodeConcentration, MISSING_CODE } from "../formats/concentrationCodes.ts";
import { bandsAt, flightLevel } from "../geo/flightLevel.ts";
import { arcBetween, arcInterpolator, arcToKm, farthestFromEquator } from "../geo/greatCircle.ts";
import { gridCoordinates, halfCellArcDegrees } from "../geo/gridCells.ts";
import { formatInstant } from "../time/instant.ts";
import type { ServedGrid } from "./pointGrids.ts";
import { bandName, type QueryProblem } from "./pointQuery.ts";
import type { RouteInput } from "./routeInput.ts";

/**
 * 50,000 samples: 100,000 km at the 2 km a 0.1° grid needs at 60°N, far beyond any flight, and a few hundred
 * ms of work at worst (docs/benchmarks.md, "Point and route queries"); a transatlantic route takes 2,000-5,000.
 */
export const MAX_ROUTE_SAMPLES = 50_000;

/** A grid cell met in one band, and where along the route it was first met. */
interface Pair {
  band: number;
  x: number;
  y: number;
  point: RoutePoint;
}

interface Segment {
  arc: number;
  samples: number;
}

/**
 * How many samples each segment takes on this grid: at most half a cell apart where the segment is in the
 * domain (its cells narrowest at its largest |y| there, the arc's own in the grid's frame, as a rotation keeps
 * great circles), and, with times, at most one step apart within the forecast, so that a hold or a slow stretch
 * reads every step it lasts through. Samples are spread evenly in distance and time alike (both are linear
 * along a segment).
 */
function plan(route: RouteInput, grid: ServedGrid): { segments: Segment[]; total: number; stepArc: number } {
  const segments: Segment[] = [];
  let total = 1;
  let stepArc = 0;
  const inGrid = route.positions.map(([lon, lat]) => gridCoordinates(grid.header.geometry, lon, lat));
  const { timesMs } = route;
  const start = grid.timesMs[0]!;
  for (let i = 0; i + 1 < route.positions.length; i++) {
    const arc = arcBetween(route.positions[i]!, route.positions[i + 1]!);
    const farthestY = Math.min(grid.farthestY, farthestFromEquator(inGrid[i]!, inGrid[i + 1]!));
    const inSpace = Math.ceil(arc / halfCellArcDegrees(grid.spacing, farthestY));
    const flown = timesMs ? Math.max(0, Math.min(timesMs[i + 1]!, grid.endMs) - Math.max(timesMs[i]!, start)) : 0;
    const samples = Math.max(1, inSpace, Math.ceil(flown / grid.shortestStepMs));
    stepArc = Math.max(stepArc, arc / samples);
    segments.push({ arc, samples });
    total += samples;
  }
  return { segments, total, stepArc };
}

/** Walks the route sample by sample. */
function walk(route: RouteInput, segments: readonly Segment[], visit: (lon: number, lat: number, altitudeM: number, ms: number | undefined, km: number) => void): void {
  const { positions, altitudesM, timesMs } = route;
  let km = 0;
  segments.forEach((segment, i) => {
    const along = arcInterpolator(positions[i]!, positions[i + 1]!);
    for (let j = 0; j < segment.samples; j++) {
      const f = j / segment.samples;
      const [lon, lat] = along(f);
      const ms = timesMs ? timesMs[i]! + f * (timesMs[i + 1]! - timesMs[i]!) : undefined;
      visit(lon, lat, altitudesM[i]! + f * (altitudesM[i + 1]! - altitudesM[i]!), ms, km + arcToKm(f * segment.arc));
    }
    km += arcToKm(segment.arc);
  });
  const last = positions.length - 1;
  visit(positions[last]![0], positions[last]![1], altitudesM[last]!, timesMs?.[last], km);
}

/** Consecutive samples for which a condition holds, as stretches from the first to the last. */
class Stretches {
  readonly list: Stretch[] = [];
  #open: Stretch | undefined;
  mark(holds: boolean, point: () => RoutePoint): void {
    if (holds) {
      const here = point();
      if (this.#open) this.#open.to = here;
      else this.list.push((this.#open = { from: here, to: here }));
    } else this.#open = undefined;
  }
}

/** The route through each of the run's grids (not empty: the route refuses a run without them, withoutGrids). */
export function answerRoute(reftime: string, grids: readonly ServedGrid[], route: RouteInput): RouteAnswer | QueryProblem {
  const plans = grids.map((grid) => plan(route, grid));
  for (const [g, p] of plans.entries()) {
    if (p.total > MAX_ROUTE_SAMPLES) {
      return { kind: "problem", status: 422, detail: `the route needs ${p.total} samples at half a grid cell of ${grids[g]!.header.model} (${grids[g]!.header.source}); at most ${MAX_ROUTE_SAMPLES} are taken: split the route` };
    }
  }
  const lengthKm = plans[0]!.segments.reduce((sum, s) => sum + arcToKm(s.arc), 0);
  return {
    reftime,
    units: "mg/m3",
    timed: route.timesMs !== undefined,
    vertices: route.positions.length,
    length_km: round(lengthKm, 3),
    models: grids.map((grid, g) => followRoute(grid, route, plans[g]!)),
  };
}

function followRoute(grid: ServedGrid, route: RouteInput, { segments, total, stepArc }: ReturnType<typeof plan>): ModelRoute {
  const { header } = grid;
  const bandInfo = header.bands.map((band) => ({ band: bandName(band.lowerFl, band.upperFl), label: band.label, lower_fl: band.lowerFl, upper_fl: band.upperFl }));
  const bandHighest: number[] = header.bands.map(() => -1);
  // Bands flown where no value is known (outside the domain or the forecast, or the model gave none there):
  // "missing" when nothing else of them is known, never "none", which reads as clear air.
  const bandMissing: boolean[] = header.bands.map(() => false);
  const lowest = grid.classes[0]!.lower;
  const outsideDomain = new Stretches();
  const missingValues = new Stretches();
  const outsideForecast = new Stretches();
  const aboveBands = new Stretches();
  const encounters: Encounter[] = [];
  let open: Encounter | undefined;
  let highest: ModelRoute["highest"] = null;
  const timed = route.timesMs !== undefined;
  // Without times: the distinct (band, cell) pairs the path meets, with where it first meets each.
  const pairs = new Map<number, Pair>();
  const cells = header.nx * header.ny;

  let lastMemo = -1;
  let value = -1;
  let valueBand = 0;
  let valueMissing = false;
  walk(route, segments, (lon, lat, altitudeM, ms, km) => {
    const fl = flightLevel(altitudeM);
    const point = (): RoutePoint => ({ lon: round(lon, 5), lat: round(lat, 5), fl: round(fl, 1), km: round(km, 3), ...(ms !== undefined ? { time: formatInstant(Math.round(ms)) } : {}) });
    const place = grid.supportOf(lon, lat);
    const bands = bandsAt(header.bands, fl);
    const step = ms !== undefined ? grid.stepAt(ms) : 0;
    outsideDomain.mark(place === undefined, point);
    aboveBands.mark(bands.length === 0, point);
    outsideForecast.mark(timed && step === -1, point);
    if (place === undefined || bands.length === 0 || step === -1) {
      for (const b of bands) bandMissing[b] = true;
      if (timed) missingValues.mark(false, point);
      open = undefined;
      return;
    }
    if (!timed) {
      for (const b of bands) {
        for (const cell of place.support) {
          const key = b * cells + cell.y * header.nx + cell.x;
          if (!pairs.has(key)) pairs.set(key, { band: b, x: cell.x, y: cell.y, point: point() });
        }
      }
      return;
    }
    // Consecutive samples in the same square of centres, at the same step and level, read the same values.
    const memo = place.key * 2 ** 20 + step * 8 + (bands[0]! + 1) * 2 + (bands.length - 1);
    if (memo !== lastMemo) {
      lastMemo = memo;
      value = -1;
      valueBand = bands[0]!;
      valueMissing = false;
      for (const b of bands) {
        const code = grid.placeCode(b, place, step);
        if (code === MISSING_CODE) {
          valueMissing = bandMissing[b] = true;
          continue;
        }
        const v = decodeConcentration(code);
        if (v > bandHighest[b]!) bandHighest[b] = v;
        if (v > value) {
          value = v;
          valueBand = b;
        }
      }
    }
    // A band of this level without a value here: said as a stretch, never read as clear air.
    missingValues.mark(valueMissing, point);
    if (value > (highest?.value ?? -1)) highest = { ...point(), value, class: classOf(value, grid.classes)?.id ?? "none", band: bandInfo[valueBand]!.band };
    if (value >= lowest) {
      const here = point();
      if (open) {
        open.exit = here;
        if (value > open.highest) {
          open.highest = value;
          open.band = bandInfo[valueBand]!.band;
          open.class = classOf(value, grid.classes)!.id;
        }
      } else {
        encounters.push((open = { band: bandInfo[valueBand]!.band, class: classOf(value, grid.classes)!.id, highest: value, entry: here, exit: here }));
      }
    } else open = undefined;
  });

  const result: ModelRoute = {
    model: header.model,
    source: header.source,
    sampling_km: round(arcToKm(stepArc), 3),
    samples: total,
    highest,
    bands: [],
    outside_domain: outsideDomain.list,
    outside_forecast: outsideForecast.list,
    above_bands: aboveBands.list,
  };
  if (timed) {
    result.encounters = encounters;
    result.missing_values = missingValues.list;
  } else result.steps = perStep(grid, pairs, bandHighest, bandMissing, bandInfo, (h) => (highest = h));
  result.highest = highest;
  result.bands = bandInfo.map((info, b) => {
    const value = bandHighest[b]!;
    if (value < 0) return { ...info, highest: null, class: bandMissing[b] ? "missing" : "none" };
    return { ...info, highest: value, class: classOf(value, grid.classes)?.id ?? "none" };
  });
  return result;
}

/**
 * Per step, the highest value over the (band, cell) pairs the path meets, and the share of them without a value
 * when some are; the highest of each band on the way, and which bands were met where the model gave no value.
 */
function perStep(
  grid: ServedGrid,
  pairs: Map<number, Pair>,
  bandHighest: number[],
  bandMissing: boolean[],
  bandInfo: ReadonlyArray<{ band: string }>,
  setHighest: (h: NonNullable<ModelRoute["highest"]>) => void,
): NonNullable<ModelRoute["steps"]> {
  const steps = grid.header.times.length;
  const best = new Int32Array(steps).fill(-1);
  const where: Array<Pair | undefined> = new Array(steps);
  const bandBest = new Int32Array(bandHighest.length).fill(-1);
  const missingAt = new Int32Array(steps);
  for (const pair of pairs.values()) {
    const codes = grid.series(pair.band, pair);
    for (let t = 0; t < steps; t++) {
      const code = codes[t]!;
      if (code === MISSING_CODE) {
        missingAt[t]!++;
        bandMissing[pair.band] = true;
        continue;
      }
      if (code > bandBest[pair.band]!) bandBest[pair.band] = code;
      if (code > best[t]!) {
        best[t] = code;
        where[t] = pair;
      }
    }
  }
  bandBest.forEach((code, b) => {
    if (code >= 0) bandHighest[b] = decodeConcentration(code);
  });
  let top: NonNullable<ModelRoute["highest"]> | undefined;
  const result = grid.header.times.map((time, t) => {
    const found = where[t];
    // Nothing known along the path at this step: said as such, not as a 0 that reads as a clear route.
    if (!found) return { time, value: null, class: "missing", band: null, lon: null, lat: null };
    const value = decodeConcentration(best[t]!);
    const cls = classOf(value, grid.classes)?.id ?? "none";
    if (!top || value > top.value) top = { ...found.point, time, value, class: cls, band: bandInfo[found.band]!.band };
    const answer = { time, value, class: cls, band: bandInfo[found.band]!.band, lon: found.point.lon, lat: found.point.lat };
    // Part of the path unknown at this step: the highest is of the rest only, and says so.
    return missingAt[t]! > 0 ? { ...answer, missing_share: round(missingAt[t]! / pairs.size, 4) } : answer;
  });
  if (top) setHighest(top);
  return result;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
