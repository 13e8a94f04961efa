/**
 * The point-query grids of a run (src/contract/pointGrid.ts): recorded while the model output reader
 * goes through the fields (each field is read once, for the ash areas and for this), written as one
 * content-addressed artefact per model output file. The server answers /point and /route from them
 * without ever opening a NetCDF file.
 */
import { createHash } from "node:crypto";
import { assemblePointGrid, blockCount, BLOCK, encodeBlock, POINT_GRID_FORMAT, pointGridKey, type PointGridBand, type PointGridHeader } from "../contract/pointGrid.ts";
import type { GridGeometry } from "../geo/gridCells.ts";
import { encodeFloat32Concentration } from "../formats/concentrationCodes.ts";
import type { FlightLevelBand, ModelGrid } from "../model/types.ts";
import { InternalError } from "../errors.ts";
import type { ArtefactDraft } from "./artefacts.ts";
import { slugify } from "./artefactNames.ts";
import type { AssembledRun } from "./assembleRun.ts";

/** What the reader keeps of a file for its grid: the geometry and the compressed blocks of every band. */
export interface RecordedPointGrid {
  geometry: GridGeometry;
  nx: number;
  ny: number;
  bands: PointGridBand[];
  /** Band-major, then block order. */
  blocks: Buffer[];
}

/** A band's codes, `codes[(y * nx + x) * steps + t]`, for encodeBlocks. */
export interface BandCodes {
  codes: Uint16Array;
  nx: number;
  ny: number;
  steps: number;
  /** Per block (block order), 1 when some cell of it has a code that is not 0 at some step. */
  blocksWithCodes: Uint8Array;
}

const NO_BYTES = Buffer.alloc(0);

/** A band's blocks, in block order (src/contract/pointGrid.ts); a block no code reached is empty without reading its 4,608 codes. */
export function encodeBlocks({ codes, nx, ny, steps, blocksWithCodes }: BandCodes): Buffer[] {
  return Array.from({ length: blockCount({ nx, ny, block: BLOCK }) }, (_, k) => (blocksWithCodes[k] ? encodeBlock(codes, nx, ny, steps, BLOCK, k) : NO_BYTES));
}

/** The codes of one field's cells that are not 0 (missing ones included), row-major cell indices. */
export interface StepCodes {
  cells: Uint32Array;
  values: Uint16Array;
}

/** Scratch for stepCodes, grown to the largest field seen on this thread. */
let scratchCells = new Uint32Array(0);
let scratchValues = new Uint16Array(0);

/**
 * A field (mg/m³, row-major) as the codes of its cells that are not 0: most cells hold no ash, and 0 needs no
 * coding. One pass over the field, or only over `nonZero` (FieldCells.nonZero) when given.
 */
export function stepCodes(field: Float32Array, nonZero?: Uint32Array): StepCodes {
  if (scratchCells.length < field.length) {
    scratchCells = new Uint32Array(field.length);
    scratchValues = new Uint16Array(field.length);
  }
  let count = 0;
  const visited = nonZero?.length ?? field.length;
  for (let k = 0; k < visited; k++) {
    const i = nonZero ? nonZero[k]! : k;
    const value = field[i]!;
    if (value !== 0) {
      scratchCells[count] = i;
      scratchValues[count++] = encodeFloat32Concentration(value);
    }
  }
  return { cells: scratchCells.slice(0, count), values: scratchValues.slice(0, count) };
}

export const POINT_GRID_CONTENT_TYPE = "application/vnd.ashcast.point-grid";

/**
 * Collects one band at a time: the codes of every step of the band (2 bytes per cell and step, 58 MB for
 * 800 × 500 cells × 72 steps), compressed into blocks when the band ends, so memory holds one band.
 */
export class PointGridRecorder {
  readonly #grid: ModelGrid;
  readonly #geometry: GridGeometry;
  readonly #steps: number;
  readonly #bands: PointGridBand[] = [];
  /** Per band, its blocks, or their making. */
  readonly #blocks: Array<Buffer[] | Promise<Buffer[]>> = [];
  #codes: Uint16Array | undefined;
  #blocksWithCodes: Uint8Array | undefined;
  readonly #blocksX: number;

  /** Undefined when the grid has no geometry a point can be looked up in (a curvilinear grid not made of two axes). */
  static for(grid: ModelGrid, steps: number): PointGridRecorder | undefined {
    return grid.geometry ? new PointGridRecorder(grid, grid.geometry, steps) : undefined;
  }

  private constructor(grid: ModelGrid, geometry: GridGeometry, steps: number) {
    this.#grid = grid;
    this.#geometry = geometry;
    this.#steps = steps;
    this.#blocksX = Math.ceil(grid.nx / BLOCK);
  }

  startBand(band: FlightLevelBand): void {
    const [, lower, upper] = /^fl(\d+)-(\d+)$/.exec(band.id) ?? [];
    this.#bands.push({ id: band.id, label: band.label, lowerFl: Number(lower), upperFl: Number(upper) });
    this.#codes = new Uint16Array(this.#grid.nx * this.#grid.ny * this.#steps);
    this.#blocksWithCodes = new Uint8Array(blockCount({ nx: this.#grid.nx, ny: this.#grid.ny, block: BLOCK }));
  }

  /** One step of the current band, mg/m³, row-major. */
  addStep(t: number, field: Float32Array): void {
    this.addCodes(t, stepCodes(field));
  }

  /** One step of the current band, coded by stepCodes (the model output reader codes its fields in its worker threads). */
  addCodes(t: number, step: StepCodes): void {
    const codes = this.#codes!;
    const blocksWithCodes = this.#blocksWithCodes!;
    const steps = this.#steps;
    const nx = this.#grid.nx;
    const blocksX = this.#blocksX;
    const { cells, values } = step;
    for (let k = 0; k < cells.length; k++) {
      const cell = cells[k]!;
      codes[cell * steps + t] = values[k]!;
      const y = Math.floor(cell / nx);
      blocksWithCodes[Math.floor(y / BLOCK) * blocksX + Math.floor((cell - y * nx) / BLOCK)] = 1;
    }
  }

  endBand(): void {
    this.#blocks.push(encodeBlocks(this.#bandCodes()));
  }

  #bandCodes(): BandCodes {
    const { nx, ny } = this.#grid;
    const band = { codes: this.#codes!, nx, ny, steps: this.#steps, blocksWithCodes: this.#blocksWithCodes! };
    this.#codes = undefined;
    this.#blocksWithCodes = undefined;
    return band;
  }

  /**
   * Ends the band with its blocks made by `encode` (the model output reader hands them to a worker thread:
   * this thread goes on merging steps meanwhile, and the band's codes are moved there, not copied).
   */
  endBandWith(encode: (band: BandCodes) => Promise<Buffer[]>): void {
    const pending = encode(this.#bandCodes());
    pending.catch(() => {}); // awaited in finish()
    this.#blocks.push(pending);
  }

  /** The grid, once every band's blocks are made. */
  async finish(): Promise<RecordedPointGrid> {
    const blocks = (await Promise.all(this.#blocks)).flat();
    return { geometry: this.#geometry, nx: this.#grid.nx, ny: this.#grid.ny, bands: this.#bands, blocks };
  }

  /** The grid, when every band was ended by endBand(). */
  result(): RecordedPointGrid {
    const blocks = this.#blocks.map((band) => {
      if (!Array.isArray(band)) throw new InternalError("PointGridRecorder.result() with blocks still being made: await finish()");
      return band;
    });
    return { geometry: this.#geometry, nx: this.#grid.nx, ny: this.#grid.ny, bands: this.#bands, blocks: blocks.flat() };
  }
}

/** The run's grid artefacts, one per model output file that has a grid. */
export function renderPointGrids(run: AssembledRun): Promise<ArtefactDraft[]> {
  const reftime = run.model.meta.reftime;
  const grids = (run.pointGrids ?? []).map(async ({ source, model }): Promise<ArtefactDraft> => {
    const recorded = await model.pointGrid!;
    const header: PointGridHeader = {
      format: POINT_GRID_FORMAT,
      model: model.layout,
      source,
      reftime,
      times: model.times,
      end: model.bands[0]?.steps.at(-1)?.end ?? model.times.at(-1)!,
      thresholds: [...model.thresholds],
      bands: recorded.bands,
      nx: recorded.nx,
      ny: recorded.ny,
      block: BLOCK,
      geometry: recorded.geometry,
    };
    const body = assemblePointGrid(header, recorded.blocks);
    const slug = slugify(source.replace(/\.nc$/i, ""));
    // Named by content: a changed grid is a new file, never the old name with new bytes.
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    return { key: pointGridKey(reftime, slug), file: `grids/${slug}-${hash}.ashgrid`, contentType: POINT_GRID_CONTENT_TYPE, body, precompress: false as const };
  });
  return Promise.all(grids);
}
