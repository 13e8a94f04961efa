/**
 * Reads dispersion model output (NetCDF-4/HDF5 or NetCDF-3, EEMEP or SNAP layout), chosen by magic
 * bytes. The file is read completely here, one time step of one variable at a time, so that bad data
 * (negative or infinite concentrations, a truncated file) is an invalid run rather than a failed render.
 * The steps are read and contoured a few at a time in the build's worker threads and merged here in step
 * order (the first bad step in that order is the one reported); memory holds the chunks in flight (three
 * per worker) and one running maximum, whatever the number of steps.
 */
import { contourBands } from "../../geo/contourBands.ts";
import type { ThresholdBand } from "../../geo/types.ts";
import { isModelOutputFile, openModelOutput } from "../../model/openModelOutput.ts";
import { isModelOutputName } from "../../contract/runFolderNames.ts";
import { DEFAULT_THRESHOLDS_MG_M3, FLIGHT_LEVEL_BANDS, type ModelOutput } from "../../model/types.ts";
import { UserError, UserErrors } from "../../errors.ts";
import { formatInstant, normaliseInstant, parseInstant } from "../../time/instant.ts";
import type { LatLonBoxModel } from "../../contract/ashModel.ts";
import { gridShareText } from "../../contract/missingValues.ts";
import type { Issues } from "../issues.ts";
import { eachInOrder } from "../../flow/inOrder.ts";
import { encodeBlocks, PointGridRecorder, stepCodes, type StepCodes } from "../pointGrids.ts";
import { bufferOf, runStepTask, stepTaskWindow, warmStepPool } from "../stepPool.ts";
import { describedByWorker } from "../modelOutputDescriptions.ts";
import type { InputReader, InputReading, ModelBandAnalysis, ReaderContext, RunInputFile } from "./types.ts";

export const modelOutputReader: InputReader = {
  kind: "model-output",
  // By its bytes whatever its name; and any .nc file, so that one that is not NetCDF (an error page, an empty
  // copy) is an error naming it rather than a file left out of the run with a warning.
  accepts: (file, head) => isModelOutputFile(head) || isModelOutputName(file.name),
  async read(file: RunInputFile, issues: Issues, context?: ReaderContext): Promise<InputReading | undefined> {
    let output: ModelOutput | undefined;
    // Started already when the scan found the file new or changed; not when an unchanged file is rebuilt (a new pipeline).
    warmStepPool();
    try {
      const described = await describedByWorker(file.absolutePath);
      const opened = await openModelOutput(file.absolutePath, file.displayPath, described ? { described } : {});
      output = opened;
      const { noGeometry } = opened.grid;
      if (noGeometry) issues.warning(file.displayPath, noGeometry.message, noGeometry.fix);
      warnOfMissingBands(opened, file.displayPath, issues);
      warnOfUnpublishedBands(opened, file.displayPath, issues);
      const model = await analyse(opened, file, context?.thresholds ?? DEFAULT_THRESHOLDS_MG_M3, issues);
      return { kind: "model-output", file, model };
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      const problems = error instanceof UserErrors ? error.problems : [{ message: error.message, fix: error.fix ?? "replace the file with the model's complete output" }];
      for (const problem of problems) issues.error(error.where ?? file.displayPath, problem.message, problem.fix);
      return undefined;
    } finally {
      output?.close();
    }
  },
};

/**
 * A flight-level variable the file lacks leaves its band out of every output of the run (maps, areas,
 * /point): said, so that no one takes the band's absence for a forecast of clear air.
 */
function warnOfMissingBands(output: ModelOutput, where: string, issues: Issues): void {
  const absent = FLIGHT_LEVEL_BANDS.filter((band) => !output.variables.some((variable) => variable.name === band.variable));
  if (absent.length === 0) return;
  issues.warning(
    where,
    `no ${absent.map((band) => band.variable).join(" or ")}: ${absent.map((band) => band.label).join(" and ")} ${absent.length === 1 ? "has" : "have"} no map, no ash areas and no /point series in this run, only ${output.variables.map((variable) => variable.band.label).join(" and ")}`,
    "deliver the model's output with every flight-level variable (EEMEP and SNAP write all three); a band left out is not a forecast of clear air",
  );
}

/**
 * Ash the file holds for a band the product does not have (e.g. MAX6h_ASH_fl550-650) is in none of the run's
 * outputs: said, so that no one reads the published bands as all the ash the model forecast.
 */
function warnOfUnpublishedBands(output: ModelOutput, where: string, issues: Issues): void {
  const names = output.unpublishedVariables;
  if (names.length === 0) return;
  issues.warning(
    where,
    `${names.join(", ")} ${names.length === 1 ? "is not a band" : "are not bands"} of this product (${FLIGHT_LEVEL_BANDS.map((band) => band.label).join(", ")}): ${names.length === 1 ? "its" : "their"} ash is in no map, ash area or /point series of this run`,
    "nothing to mend in the file: this product publishes only its three bands; give clients who need the ash of another band the model's output itself",
  );
}

/**
 * Steps read per task. The fields are read, checked and contoured a few steps at a time by the build's
 * worker threads (src/build/stepPool.ts), all cores at once; here the chunks are merged in step order,
 * so the result is the same bytes as one thread reading every step in turn. 12 steps: the 216 fields of
 * a full-size run are 18 tasks, still enough to keep two workers busy to the end; against 6 steps, half the
 * chunk maxima to merge here and ~30 MB less peak RSS (12 alternating builds: 9 faster, the median within noise).
 */
const CHUNK_STEPS = 12;

/** A new one per file read: a worker reopens the file for each, never reads one it opened for an earlier build. */
let opening = 0;

async function analyse(output: ModelOutput, file: RunInputFile, thresholds: readonly number[], issues: Issues) {
  const { grid, times } = output;
  const cells = grid.nx * grid.ny;
  const gaps = output.variables.map(() => new MissingValues(cells));
  const pointGrid = PointGridRecorder.for(grid, times.length); // point queries (issue 16): fed the fields read here
  const chunks = output.variables.flatMap((variable, band) => {
    const list: Array<{ band: number; variable: string; from: number; to: number }> = [];
    for (let from = 0; from < times.length; from += CHUNK_STEPS) list.push({ band, variable: variable.name, from, to: Math.min(times.length, from + CHUNK_STEPS) });
    return list;
  });
  const open = { path: file.absolutePath, where: file.displayPath, opening: `${process.pid}:${++opening}`, description: output.description() };
  const read = (chunk: (typeof chunks)[number]): Promise<StepChunk> =>
    runStepTask(
      "readSteps",
      { open, variable: chunk.variable, from: chunk.from, to: chunk.to, thresholds, codes: pointGrid !== undefined },
      `${file.displayPath} (${chunk.variable}, time steps ${chunk.from}–${chunk.to - 1})`,
      () => analyseSteps(output, chunk.variable, chunk.from, chunk.to, thresholds, pointGrid !== undefined),
    );

  const bands: ModelBandAnalysis[] = [];
  let ashExtent: LatLonBoxModel | undefined;
  let current: { maximum: Float32Array; steps: ModelBandAnalysis["steps"] } | undefined;
  const maxima: Array<Promise<void>> = [];
  // Bands are finished in order, the ones without any step included.
  const finishBandsBefore = (band: number): void => {
    while (bands.length < band) {
      const variable = output.variables[bands.length]!;
      if (!current) pointGrid?.startBand(variable.band);
      const { maximum, steps } = current ?? { maximum: new Float32Array(cells).fill(Number.NaN), steps: [] };
      pointGrid?.endBandWith((band) =>
        runStepTask("encodeBlocks", band, `${file.displayPath} (point grid of ${variable.name})`, async () => encodeBlocks(band), [band.codes.buffer as ArrayBuffer]).then((blocks) => blocks.map(bufferOf)),
      );
      const { worstShare } = gaps[bands.length]!;
      const analysis: ModelBandAnalysis = { band: variable.band, variable: variable.name, meaning: variable.meaning, steps, maximum: [], ...(worstShare > 0 ? { worstMissingShare: worstShare } : {}) };
      bands.push(analysis);
      // The maximum is contoured in a worker too: this thread never runs (and V8 never compiles here) the contouring.
      const contoured = runStepTask(
        "contourMaximum",
        { open, maximum, thresholds },
        `${file.displayPath} (${variable.name}, the maximum over all time steps)`,
        async () => contourBands(maximum, grid.nx, grid.ny, thresholds, grid.toLonLat),
        [maximum.buffer as ArrayBuffer],
      ).then((areas) => {
        analysis.maximum = areas;
      });
      contoured.catch(() => {}); // awaited below
      maxima.push(contoured);
      current = undefined;
    }
  };
  await eachInOrder(
    chunks.map((chunk) => () => read(chunk)),
    stepTaskWindow(),
    (result, index) => {
      const chunk = chunks[index]!;
      finishBandsBefore(chunk.band);
      if (!current) {
        pointGrid?.startBand(output.variables[chunk.band]!.band);
        current = { maximum: new Float32Array(cells).fill(Number.NaN), steps: [] };
      }
      mergeMaximum(current.maximum, result.maximum);
      result.steps.forEach((step, k) => {
        const t = chunk.from + k;
        gaps[chunk.band]!.add(times[t]!, step.missing);
        if (step.codes) pointGrid?.addCodes(t, step.codes);
        ashExtent = extend(ashExtent, step.areas);
        current!.steps.push({ time: times[t]!, end: stepEnd(times, t), areas: step.areas, ...(step.missing > 0 ? { missingShare: step.missing / cells } : {}) });
      });
    },
  );
  finishBandsBefore(output.variables.length);
  await Promise.all(maxima);
  // Not awaited here: the last band's blocks are compressed in a worker while the other starts on the maps.
  const pointGridDone = pointGrid?.finish();
  pointGridDone?.catch(() => {}); // awaited by renderPointGrids; a run found invalid meanwhile is never rendered
  reportMissingValues(output.variables.map((v) => v.name), gaps, times.length, file.displayPath, issues);
  // The model chain stamps file names in UTC without a zone: eemep_hour_20190322T153201.nc.
  const fileTimestamp = /_(\d{8}T\d{6})Z?\.nc$/i.exec(file.name)?.[1]?.concat("Z");
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
    ...(pointGridDone ? { pointGrid: pointGridDone } : {}),
  };
}

/** The cells without a value (fill value, missing_value or NaN) of one variable, step by step. */
class MissingValues {
  /** Steps where no cell has a value. */
  readonly emptySteps: string[] = [];
  /** Steps where some cells, not all, have none; and the largest share of the grid missing in one. */
  partialSteps = 0;
  worstShare = 0;
  readonly #cells: number;

  constructor(cells: number) {
    this.#cells = cells;
  }

  add(time: string, missing: number): void {
    if (missing === this.#cells) this.emptySteps.push(time);
    else if (missing > 0) {
      this.partialSteps++;
      this.worstShare = Math.max(this.worstShare, missing / this.#cells);
    }
  }
}

/**
 * A step where the model wrote no value at all would be drawn and answered as "no ash": an error, so that
 * the run keeps its last good version (all such variables named together). Cells missing here and there:
 * no ash area is drawn there, every output says how much of the grid has no value at that step
 * (src/contract/missingValues.ts), /point answers them as missing; and a warning, with how much.
 */
function reportMissingValues(variables: readonly string[], gaps: readonly MissingValues[], steps: number, where: string, issues: Issues): void {
  const empty = variables.flatMap((name, band) => {
    const times = gaps[band]!.emptySteps;
    if (times.length === 0) return [];
    return [`${name} at ${times.length === steps ? `all ${steps}` : `${times.length} of ${steps}`} time steps (${times.length > 2 ? `${times[0]} … ${times.at(-1)}` : times.join(", ")})`];
  });
  if (empty.length > 0) {
    throw new UserError(`no cell has a value (each is the _FillValue, missing_value or NaN) in ${empty.join("; ")}: maps would show no ash where nothing is known`, {
      where,
      fix: "deliver the model's complete output (re-run the model or copy its file again); the run's last good version stays published",
    });
  }
  variables.forEach((name, band) => {
    const { partialSteps, worstShare } = gaps[band]!;
    if (partialSteps === 0) return;
    issues.warning(
      where,
      `${name} has cells without a value (fill value or NaN) at ${partialSteps} of ${steps} time steps, up to ${gridShareText(worstShare)} of the grid in one: no ash area is drawn there (maps, KML and GeoJSON say how much of the grid has no value) and /point answers them as missing`,
      "check the model's output: a concentration is expected in every cell of its domain",
    );
  });
}

/** What a few steps of one variable give: per step its ash areas (and point-grid codes), and their maximum. */
export interface StepChunk {
  /** `missing`: the cells without a value (fill value or NaN) at that step. */
  steps: Array<{ areas: ThresholdBand[]; missing: number; codes?: StepCodes }>;
  /** Per cell, the highest value of these steps (NaN where every one is missing). */
  maximum: Float32Array;
}

/** Reads, checks and contours steps `from` to `to` (excluded) of a variable; a worker thread runs this (src/build/stepTasks.ts). */
export async function analyseSteps(output: ModelOutput, variable: string, from: number, to: number, thresholds: readonly number[], codes: boolean): Promise<StepChunk> {
  const { grid } = output;
  const maximum = new Float32Array(grid.nx * grid.ny).fill(Number.NaN);
  // Cells of the maximum without a value yet: while there are none, a step can only raise the cells it holds ash in.
  let unvalued = maximum.length;
  const steps: StepChunk["steps"] = [];
  for (let t = from; t < to; t++) {
    const { values, nonZero, missing } = await output.readFieldCells(variable, t);
    if (t === from) {
      maximum.set(values);
      unvalued = missing;
    } else if (unvalued === 0) raiseMaximum(maximum, values, nonZero);
    else unvalued = mergeMaximum(maximum, values);
    const areas = contourBands(values, grid.nx, grid.ny, thresholds, grid.toLonLat, { cells: nonZero });
    steps.push(codes ? { areas, missing, codes: stepCodes(values, nonZero) } : { areas, missing });
  }
  return { steps, maximum };
}

/** mergeMaximum for a maximum with a value in every cell: only the cells of `nonZero` (the others hold 0) can raise it. */
function raiseMaximum(maximum: Float32Array, values: Float32Array, nonZero: Uint32Array): void {
  for (let k = 0; k < nonZero.length; k++) {
    const i = nonZero[k]!;
    const value = values[i]!;
    if (value > maximum[i]!) maximum[i] = value;
  }
}

/** maximum[i] = the higher of the two, a value over NaN (missing), the one already there when equal. Returns how many cells of the maximum are still missing. */
function mergeMaximum(maximum: Float32Array, values: Float32Array): number {
  let missing = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    const current = maximum[i]!;
    if (value > current || (current !== current && value === value)) maximum[i] = value;
    else if (current !== current) missing++;
  }
  return missing;
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
