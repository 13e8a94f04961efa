/**
 * Reads dispersion model output (NetCDF-4/HDF5 or NetCDF-3, EEMEP or SNAP layout), chosen by magic
 * bytes. The file is read completely here, one time step of one variable at a time, so that bad data
 * (negative or infinite concentrations, a truncated file) is an invalid run rather than a failed render,
 * and memory holds one field per band plus the running maximum, whatever the number of steps.
 */
import { contourBands } from "../../geo/contourBands.ts";
import type { ThresholdBand } from "../../geo/types.ts";
import { isModelOutputFile, openModelOutput } from "../../model/openModelOutput.ts";
import { DEFAULT_THRESHOLDS_MG_M3, type ModelOutput } from "../../model/types.ts";
import { UserError } from "../../errors.ts";
import { formatInstant, normaliseInstant, parseInstant } from "../../time/instant.ts";
import type { LatLonBoxModel } from "../../contract/ashModel.ts";
import type { Issues } from "../issues.ts";
import { PointGridRecorder } from "../pointGrids.ts";
import type { InputReader, InputReading, ModelBandAnalysis, ReaderContext, RunInputFile } from "./types.ts";

export const modelOutputReader: InputReader = {
  kind: "model-output",
  accepts: (_file, head) => isModelOutputFile(head),
  async read(file: RunInputFile, issues: Issues, context?: ReaderContext): Promise<InputReading | undefined> {
    let output: ModelOutput | undefined;
    try {
      const opened = await openModelOutput(file.absolutePath, file.displayPath);
      output = opened;
      const model = await analyse(opened, file.name, context?.thresholds ?? DEFAULT_THRESHOLDS_MG_M3);
      return { kind: "model-output", file, model };
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      issues.error(error.where ?? file.displayPath, error.message, error.fix ?? "replace the file with the model's complete output");
      return undefined;
    } finally {
      output?.close();
    }
  },
};

async function analyse(output: ModelOutput, fileName: string, thresholds: readonly number[]) {
  const { grid, times } = output;
  const bands: ModelBandAnalysis[] = [];
  let ashExtent: LatLonBoxModel | undefined;
  const pointGrid = PointGridRecorder.for(grid, times.length); // point queries (issue 16): fed the fields read here
  for (const variable of output.variables) {
    pointGrid?.startBand(variable.band);
    const maximum = new Float32Array(grid.nx * grid.ny).fill(Number.NaN);
    const steps: ModelBandAnalysis["steps"] = [];
    for (let t = 0; t < times.length; t++) {
      const field = await output.readField(variable.name, t);
      pointGrid?.addStep(t, field);
      for (let i = 0; i < field.length; i++) {
        const value = field[i]!;
        const current = maximum[i]!;
        if (value > current || (Number.isNaN(current) && !Number.isNaN(value))) maximum[i] = value;
      }
      const areas = contourBands(field, grid.nx, grid.ny, thresholds, grid.toLonLat);
      ashExtent = extend(ashExtent, areas);
      steps.push({ time: times[t]!, end: stepEnd(times, t), areas });
    }
    pointGrid?.endBand();
    bands.push({ band: variable.band, variable: variable.name, meaning: variable.meaning, steps, maximum: contourBands(maximum, grid.nx, grid.ny, thresholds, grid.toLonLat) });
  }
  // The model chain stamps file names in UTC without a zone: eemep_hour_20190322T153201.nc.
  const fileTimestamp = /_(\d{8}T\d{6})Z?\.nc$/i.exec(fileName)?.[1]?.concat("Z");
  return {
    layout: output.layout,
    times,
    domain: grid.domain,
    ...(fileTimestamp && normaliseInstant(fileTimestamp) ? { fileTimestamp: normaliseInstant(fileTimestamp)! } : {}),
    ...(output.simulationStart ? { simulationStart: output.simulationStart } : {}),
    ...(output.title ? { title: output.title } : {}),
    thresholds,
    bands,
    ...(ashExtent ? { ashExtent } : {}),
    ...(pointGrid ? { pointGrid: pointGrid.result() } : {}),
  };
}

/** A step lasts until the next one; the last lasts as long as the step before it (one hour if alone). */
function stepEnd(times: readonly string[], t: number): string {
  const next = times[t + 1];
  if (next) return next;
  const here = parseInstant(times[t]!)!;
  const previous = t > 0 ? parseInstant(times[t - 1]!)! : here - 3_600_000;
  return formatInstant(here + (here - previous));
}

function extend(box: LatLonBoxModel | undefined, areas: ThresholdBand[]): LatLonBoxModel | undefined {
  let result = box;
  for (const area of areas) {
    for (const polygon of area.polygons) {
      for (const [lon, lat] of polygon.outer) {
        result = result
          ? { north: Math.max(result.north, lat), south: Math.min(result.south, lat), east: Math.max(result.east, lon), west: Math.min(result.west, lon) }
          : { north: lat, south: lat, east: lon, west: lon };
      }
    }
  }
  return result;
}
