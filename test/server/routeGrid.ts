/**
 * A point-query grid made in memory from fields a test writes cell by cell, through the build's own
 * recorder and the server's own reader: for exact route tests (the antimeridian, a plume of known place,
 * time and flight level) without a model file.
 */
import { assemblePointGrid, BLOCK, openPointGrid, POINT_GRID_FORMAT } from "../../src/contract/pointGrid.ts";
import { PointGridRecorder } from "../../src/build/pointGrids.ts";
import { regularGrid } from "../../src/model/gridMapping.ts";
import { FLIGHT_LEVEL_BANDS } from "../../src/model/types.ts";
import { ServedGrid } from "../../src/server/pointGrids.ts";

export interface TestGridSpec {
  lon: number[];
  lat: number[];
  times: string[];
  end: string;
  /** mg/m³ of band b at step t at the cell centred at (lon, lat). */
  value(b: number, t: number, lon: number, lat: number): number;
  /** The model output file the grid names (default test.nc). */
  source?: string;
}

export const axis = (from: number, step: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i * step);

export function testGrid(spec: TestGridSpec): ServedGrid {
  return new ServedGrid(openPointGrid(testGridBytes(spec), "test grid"), "test grid");
}

/** The grid artefact's bytes, as the build writes them. */
export function testGridBytes(spec: TestGridSpec): Buffer {
  const grid = regularGrid(spec.lon, spec.lat);
  const recorder = PointGridRecorder.for(grid, spec.times.length)!;
  const nx = spec.lon.length;
  FLIGHT_LEVEL_BANDS.forEach((band, b) => {
    recorder.startBand(band);
    spec.times.forEach((_, t) => {
      const field = new Float32Array(nx * spec.lat.length);
      spec.lat.forEach((lat, y) => spec.lon.forEach((lon, x) => (field[y * nx + x] = spec.value(b, t, lon, lat))));
      recorder.addStep(t, field);
    });
    recorder.endBand();
  });
  const recorded = recorder.result();
  return assemblePointGrid(
    { format: POINT_GRID_FORMAT, model: "EEMEP", source: spec.source ?? "test.nc", reftime: spec.times[0]!, times: spec.times, end: spec.end, thresholds: [0.2, 2, 4], bands: recorded.bands, nx, ny: spec.lat.length, block: BLOCK, geometry: recorded.geometry },
    recorded.blocks,
  );
}
