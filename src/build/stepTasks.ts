/**
 * The per-step work of a build that worker threads do (src/build/stepPool.ts): opening a model output file
 * for its description, reading and contouring a few of its time steps, contouring a band's maximum,
 * compressing a band's point-grid blocks, drawing and encoding one map, the viewer's coastlines. Each task is
 * a function of its input alone, the same code a build runs on its own thread with ASHCAST_WORKERS=0: the
 * same bytes either way.
 */
import type { Transferable } from "node:worker_threads";
import type { TaskResult } from "../flow/workerPool.ts";
import { contourBands } from "../geo/contourBands.ts";
import type { ThresholdBand } from "../geo/types.ts";
import { openModelOutput } from "../model/openModelOutput.ts";
import type { SourceDescription } from "../model/source.ts";
import type { ModelOutput } from "../model/types.ts";
import type { BandImageInput } from "../render/bandImage.ts";
import type { RunMapInput } from "../render/runMap.ts";
import { encodeBlocks, type BandCodes } from "./pointGrids.ts";
import { analyseSteps, type StepChunk } from "./readers/modelOutput.ts";
import { fileIdentity, type WorkerDescription } from "./modelOutputDescriptions.ts";

export interface ReadStepsInput {
  /**
   * The file, which reading of it this is (a worker keeps one file open, reopened for each new reading), and
   * the file as the main thread opened it (ModelOutput.description): a worker need not load h5wasm to read it.
   */
  open: { path: string; where: string; opening: string; description: SourceDescription };
  variable: string;
  from: number;
  to: number;
  thresholds: readonly number[];
  /** Also code each field for the point-query grid. */
  codes: boolean;
}

/** A band's maximum over all its steps (per cell), to contour for the run's map. */
export interface ContourMaximumInput {
  open: ReadStepsInput["open"];
  maximum: Float32Array;
  thresholds: readonly number[];
}

/**
 * The drawing code (canvas, d3, Natural Earth), loaded by a worker's first map: a worker is ready for its first
 * task, opening or reading model output, ~0.05 s sooner without it, and that is where a build waits for it.
 */
const drawing = {
  bandImage: () => import("../render/bandImage.ts"),
  runMap: () => import("../render/runMap.ts"),
  coastlines: () => import("./viewerCoastlines.ts"),
};
type Palette = ReturnType<typeof import("../render/bandImage.ts").bandImagePalette>;

let opened: { opening: string; output: ModelOutput } | undefined;

async function modelOutputFor(open: ReadStepsInput["open"]): Promise<ModelOutput> {
  if (opened?.opening === open.opening) return opened.output;
  opened?.output.close();
  opened = undefined;
  const output = await openModelOutput(open.path, open.where, { pointGeometry: false, described: open.description });
  opened = { opening: open.opening, output };
  return output;
}

/** The bytes of a PNG, moved to the other thread when they fill their own buffer. */
function png(bytes: Buffer): TaskResult<Uint8Array> {
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return own ? { output: bytes, transfer: [bytes.buffer as ArrayBuffer] } : { output: new Uint8Array(bytes) };
}

export const STEP_TASKS = {
  /** Opens a file as the build's thread would (h5wasm loads here, not there) and describes it; undefined when it changed meanwhile. */
  async describeModelOutput(input: { path: string; where: string }): Promise<TaskResult<WorkerDescription | undefined>> {
    const identity = fileIdentity(input.path);
    const output = await openModelOutput(input.path, input.where);
    let description: SourceDescription;
    try {
      description = output.description();
    } finally {
      output.close();
    }
    return { output: identity !== undefined && identity === fileIdentity(input.path) ? { description, identity } : undefined };
  },
  async readSteps(input: ReadStepsInput): Promise<TaskResult<StepChunk>> {
    const output = await modelOutputFor(input.open);
    const chunk = await analyseSteps(output, input.variable, input.from, input.to, input.thresholds, input.codes);
    const transfer: Transferable[] = [chunk.maximum.buffer as ArrayBuffer];
    for (const step of chunk.steps) if (step.codes) transfer.push(step.codes.cells.buffer as ArrayBuffer, step.codes.values.buffer as ArrayBuffer);
    return { output: chunk, transfer };
  },
  async contourMaximum(input: ContourMaximumInput): Promise<TaskResult<ThresholdBand[]>> {
    const { grid } = await modelOutputFor(input.open);
    return { output: contourBands(input.maximum, grid.nx, grid.ny, input.thresholds, grid.toLonLat) };
  },
  async viewerCoastlines(naturalEarth50m: Uint8Array): Promise<TaskResult<Uint8Array>> {
    const body = (await drawing.coastlines()).coastlinesBody(naturalEarth50m);
    return { output: body, transfer: body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? [body.buffer as ArrayBuffer] : [] };
  },
  encodeBlocks(input: BandCodes): TaskResult<Buffer[]> {
    return { output: encodeBlocks(input) };
  },
  async bandPalette(samples: BandImageInput[]): Promise<TaskResult<Palette>> {
    const chosen = (await drawing.bandImage()).bandImagePalette(samples);
    return { output: chosen, transfer: [chosen.palette.buffer as ArrayBuffer] };
  },
  async bandImage(input: BandImageInput): Promise<TaskResult<Uint8Array>> {
    return png(await (await drawing.bandImage()).renderBandImage(input));
  },
  async runMap(input: RunMapInput): Promise<TaskResult<Uint8Array>> {
    return png(await (await drawing.runMap()).renderRunMap(input));
  },
};

export type StepTasks = typeof STEP_TASKS;
