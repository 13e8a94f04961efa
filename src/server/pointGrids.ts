/**
 * The point-query grids of published runs, loaded on demand and held under a byte bound (a full-size run's
 * grid is about 12 MB). A place's series are decoded straight from the artefact, a few hundred bytes per
 * cell, so nothing inflated is kept. Grid files never change once published (their names carry their hash),
 * so nothing here needs invalidating; a grid not used for a while is dropped and read again when asked for.
 */
import { ashClasses, type AshClass } from "../contract/ashClasses.ts";
import { blockCount, decodeCellSeries, openPointGrid, type OpenedPointGrid, type PointGridHeader } from "../contract/pointGrid.ts";
import { pointGridKeyPrefix } from "../contract/pointGrid.ts";
import type { Artefact, PublishedRun, RunArtefacts, StoredBody } from "../contract/releaseIndex.ts";
import { geographicExtent, smallestSpacing, supportOf, type Cell, type CellSupport } from "../geo/gridCells.ts";
import { bandName } from "./pointQuery.ts";
import { encodeConcentration, MISSING_CODE } from "../formats/concentrationCodes.ts";
import { parseInstant } from "../time/instant.ts";

/** Grid artefacts held in memory by default: 5 full-size runs, with the body cache well under 250 MB of RSS. */
export const DEFAULT_GRID_BYTES = 64 * 1024 * 1024;

/**
 * Cell series decoded lately, per grid (direct-mapped by band and cell): a route's consecutive samples
 * share cells, and a place's four centres are decoded once per band. 256 × 72 steps × 2 bytes = 36 KiB.
 */
const DECODED_SLOTS = 256;

/** Run directories whose grid files the store remembers (cleared when full). */
const MAX_RUNS_REMEMBERED = 10_000;
/**
 * Recent /point answers kept (up to 21 KB each for 3 bands × 72 steps), in slots chosen by their ETag, for
 * places asked for again. Few, and plain arrays, not a Map: answers put into a Map (which lives in the old
 * generation) stayed reachable through its table after they were replaced, so every young-generation
 * collection promoted megabytes of them and V8 ran a full collection several times a second under random
 * places (docs/benchmarks.md, "Point and route queries").
 */
const ANSWER_SLOTS = 32;

/** Codes of every step of a cell with no ash: what an empty block reads as. */
const NO_ASH = new Map<number, Uint16Array>();

/**
 * UTF-8 pieces of a grid's /point answers: per step its head, and the whole step without ash; per band the
 * series' head; per code the step's tail. A step with ash is two copies (each copy costs about as much as the
 * bytes of a short piece): docs/benchmarks.md, "Point and route queries".
 */
export interface AnswerParts {
  /** Per step `,{"time":"…","value":`, from the comma that separates it from the step before. */
  stepHeads: Buffer[];
  /** Every step without ash, comma-separated: a run of such steps is one slice of it. */
  noAshSteps: Buffer;
  /** Where step t starts in noAshSteps (one more entry: the length plus one, as if a comma followed). */
  noAshStarts: Uint32Array;
  seriesHeads: Buffer[];
  /**
   * Per code, `value,"class":"…"}` once made (src/server/pointQuery.ts): shared by the grids with the same
   * thresholds, a slot for every code from the start (an array first written far past its end is a hash
   * table to V8, a look-up several times slower than an index).
   */
  stepTails: Array<Buffer | undefined>;
  /** The class ids a tail names: `none` first, then each class in order. */
  classIds: string[];
}

/** Step tails by thresholds: a few sets at most (a table is 512 KB of slots); grids keep theirs when it is cleared. */
const STEP_TAILS = new Map<string, Array<Buffer | undefined>>();
function stepTailsFor(thresholds: readonly number[]): Array<Buffer | undefined> {
  const key = thresholds.join(" ");
  let tails = STEP_TAILS.get(key);
  if (tails === undefined) {
    if (STEP_TAILS.size >= 8) STEP_TAILS.clear();
    STEP_TAILS.set(key, (tails = new Array<Buffer | undefined>(MISSING_CODE + 1).fill(undefined)));
  }
  return tails;
}

export class ServedGrid {
  readonly header: PointGridHeader;
  readonly classes: AshClass[];
  readonly spacing: { dx: number; dy: number };
  /** Step instants in ms, and the end of the last step. */
  readonly timesMs: number[];
  readonly endMs: number;
  /** The shortest step: a route sampled at least this often in time reads every step it flies through. */
  readonly shortestStepMs: number;
  /** The largest |y| (latitude, or rotated latitude) of the domain, to its outer cells' edge. */
  readonly farthestY: number;
  readonly file: string;
  readonly #opened: OpenedPointGrid;
  readonly #fileBytes: number;
  readonly #blocksX: number;
  readonly #perBand: number;
  /** Which (band, cell) each decoded slot holds (-1: none), and the slots' codes, `steps` each. */
  readonly #slotKeys = new Float64Array(DECODED_SLOTS).fill(-1);
  readonly #slotCodes: Uint16Array;
  #jsonParts: AnswerParts | undefined;
  /** placeSeries' answer when it combines several cells (valid until the next call). */
  readonly #placeCodes: Uint16Array;
  /** The codes of a cell in an empty block (shared, never written): a series that is this array holds no ash. */
  readonly noAsh: Uint16Array;
  /** Per class, the lowest code that reads at or above its lower bound. */
  readonly #classCodes: number[];

  constructor(opened: OpenedPointGrid, file: string, fileBytes = opened.data.length) {
    this.#opened = opened;
    this.#fileBytes = fileBytes;
    this.header = opened.header;
    this.file = file;
    this.classes = ashClasses(opened.header.thresholds);
    this.spacing = smallestSpacing(opened.header.geometry);
    this.timesMs = opened.header.times.map((time) => parseInstant(time)!);
    this.endMs = parseInstant(opened.header.end)!;
    this.shortestStepMs = Math.min(...this.timesMs.map((ms, t) => (this.timesMs[t + 1] ?? this.endMs) - ms));
    const ys = opened.header.geometry.y;
    this.farthestY = Math.max(Math.abs(ys[0]!), Math.abs(ys[ys.length - 1]!)) + this.spacing.dy;
    this.#blocksX = Math.ceil(opened.header.nx / opened.header.block);
    this.#perBand = blockCount(opened.header);
    this.#slotCodes = new Uint16Array(DECODED_SLOTS * opened.header.times.length);
    this.#placeCodes = new Uint16Array(opened.header.times.length);
    this.noAsh = noAsh(opened.header.times.length);
    this.#classCodes = this.classes.map((c) => encodeConcentration(c.lower));
  }

  /** What holding the grid costs, counted against the store's bound: its file, its block table, its decoded slots and its objects (about 4 KB). */
  get bytes(): number {
    return this.#fileBytes + this.#opened.offsets.byteLength + this.#slotCodes.byteLength + 4096;
  }

  /** The UTF-8 pieces the point answer is assembled from, made once per grid (src/server/pointQuery.ts). */
  get jsonParts(): AnswerParts {
    if (this.#jsonParts === undefined) {
      const { header } = this;
      const utf8 = (text: string) => Buffer.from(text, "utf8");
      const stepHeads = header.times.map((time) => `{"time":${JSON.stringify(time)},"value":`);
      this.#jsonParts = {
        stepHeads: stepHeads.map((head) => utf8(`,${head}`)),
        ...noAshSteps(stepHeads.map((head) => utf8(`${head}0,"class":"none"}`))),
        seriesHeads: header.bands.map((band) => {
          return utf8(`{"model":${JSON.stringify(header.model)},"source":${JSON.stringify(header.source)},"band":"${bandName(band.lowerFl, band.upperFl)}","label":${JSON.stringify(band.label)},"lower_fl":${band.lowerFl},"upper_fl":${band.upperFl},`);
        }),
        stepTails: stepTailsFor(header.thresholds),
        classIds: ["none", ...this.classes.map((c) => c.id)],
      };
    }
    return this.#jsonParts;
  }

  /** The class of a code as an index into jsonParts.classIds (0: none): codes grow with values, so thresholds are codes too. */
  classIndexOf(code: number): number {
    let index = 0;
    for (const lowest of this.#classCodes) if (code >= lowest) index++;
    return index;
  }

  #domain: string | undefined;
  /** Where the domain is, for a client whose place is outside it: `lat 24.95 to 74.95, lon -45.05 to 34.95`. */
  get domain(): string {
    if (this.#domain === undefined) {
      const { south, north, west, east } = geographicExtent(this.header.geometry);
      const d = (v: number) => String(Math.round(v * 100) / 100);
      this.#domain = `lat ${d(south)} to ${d(north)}, lon ${d(west)} to ${d(east)}${west > east ? " (across 180°)" : ""}`;
    }
    return this.#domain;
  }

  /** The cell holding a place and the centres its value is taken over (src/geo/gridCells.ts), or undefined outside. */
  supportOf(lon: number, lat: number): CellSupport | undefined {
    return supportOf(this.header.geometry, lon, lat);
  }

  /**
   * The value codes of a place in one band at every step: per step the highest of its support's cells
   * (missing only where all are), so a place never reads less than the ash areas drawn through it.
   * Valid until the next call on this grid.
   */
  placeSeries(band: number, place: CellSupport): Uint16Array {
    const support = place.support;
    if (support.length === 1) return this.series(band, support[0]!);
    // Most places of a domain lie in blocks without ash: nothing to combine.
    let empty = true;
    for (const cell of support) if (this.#blockHoldsAsh(band, cell)) empty = false;
    if (empty) return this.noAsh;
    const steps = this.header.times.length;
    const result = this.#placeCodes.fill(MISSING_CODE);
    for (const cell of support) {
      const codes = this.series(band, cell);
      for (let t = 0; t < steps; t++) {
        const code = codes[t]!;
        const best = result[t]!;
        if (code !== MISSING_CODE && (best === MISSING_CODE || code > best)) result[t] = code;
      }
    }
    return result;
  }

  /** placeSeries at one step only. */
  placeCode(band: number, place: CellSupport, step: number): number {
    let best = MISSING_CODE;
    for (const cell of place.support) {
      const code = this.series(band, cell)[step]!;
      if (code !== MISSING_CODE && (best === MISSING_CODE || code > best)) best = code;
    }
    return best;
  }

  /** The codes of every step of one band at one cell: a view, valid until the next call on this grid. */
  series(band: number, cell: Cell): Uint16Array {
    const { block, nx, ny } = this.header;
    const steps = this.header.times.length;
    const index = this.#blockIndex(band, cell);
    const offsets = this.#opened.offsets;
    const start = offsets[index]!;
    const end = offsets[index + 1]!;
    if (start === end) return this.noAsh;
    const key = band * nx * ny + cell.y * nx + cell.x;
    const slot = (cell.x + cell.y * 61 + band * 17) & (DECODED_SLOTS - 1);
    const codes = this.#slotCodes.subarray(slot * steps, (slot + 1) * steps);
    if (this.#slotKeys[slot] !== key) {
      const bx = Math.floor(cell.x / block);
      const by = Math.floor(cell.y / block);
      const width = Math.min(block, nx - bx * block);
      const height = Math.min(block, ny - by * block);
      this.#slotKeys[slot] = -1;
      decodeCellSeries(this.#opened.data.subarray(start, end), width * height, (cell.y - by * block) * width + (cell.x - bx * block), steps, codes);
      this.#slotKeys[slot] = key;
    }
    return codes;
  }

  /** Where the block of a cell is in the block table (its bytes from offsets[index] to offsets[index + 1]). */
  #blockIndex(band: number, cell: Cell): number {
    const block = this.header.block;
    return band * this.#perBand + Math.floor(cell.y / block) * this.#blocksX + Math.floor(cell.x / block);
  }

  /** Whether the block of a cell holds ash at some step (an empty block is stored as no bytes). */
  #blockHoldsAsh(band: number, cell: Cell): boolean {
    const index = this.#blockIndex(band, cell);
    const offsets = this.#opened.offsets;
    return offsets[index] !== offsets[index + 1];
  }

  /** The step valid at an instant (a step lasts until the next), or -1 before the first and from `end` on. */
  stepAt(ms: number): number {
    const times = this.timesMs;
    if (!(ms >= times[0]!) || !(ms < this.endMs)) return -1;
    let low = 0;
    let high = times.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (times[mid]! <= ms) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

function noAshSteps(steps: Buffer[]): Pick<AnswerParts, "noAshSteps" | "noAshStarts"> {
  const noAshStarts = new Uint32Array(steps.length + 1);
  for (let t = 0; t < steps.length; t++) noAshStarts[t + 1] = noAshStarts[t]! + steps[t]!.length + 1;
  const comma = Buffer.from(",");
  return { noAshSteps: Buffer.concat(steps.flatMap((step, t) => (t ? [comma, step] : [step]))), noAshStarts };
}

function noAsh(steps: number): Uint16Array {
  let codes = NO_ASH.get(steps);
  if (codes === undefined) NO_ASH.set(steps, (codes = new Uint16Array(steps)));
  return codes;
}

/** An ETag's slot (a /point ETag ends in the query: its last characters spread it). */
function answerSlot(etag: string): number {
  let hash = 0;
  for (let i = Math.max(0, etag.length - 24); i < etag.length; i++) hash = (Math.imul(hash, 31) + etag.charCodeAt(i)) | 0;
  return (hash ^ (hash >>> 7)) & (ANSWER_SLOTS - 1);
}

export interface PointGridStoreOptions {
  /** Reads a stored body whole, without keeping it in the body cache. */
  read: (stored: StoredBody) => Promise<Buffer>;
  maxGridBytes?: number;
}

/** The grids of the runs queried, loaded when first asked for and dropped least recently used first. */
/** A run's grid artefacts, in key order. */
function gridBodies(list: RunArtefacts): StoredBody[] {
  const prefix = pointGridKeyPrefix(list.reftime);
  return Object.keys(list.artefacts)
    .filter((key) => key.startsWith(prefix))
    .sort()
    .map((key) => list.artefacts[key]!.identity);
}

export class PointGridStore {
  readonly #read: (stored: StoredBody) => Promise<Buffer>;
  readonly #grids = new Map<string, ServedGrid>();
  readonly #loading = new Map<string, Promise<ServedGrid>>();
  /**
   * The same place asked for again is sent without a look-up (an airport, a volcano). A slot first holds a
   * query's ETag alone, and the answer only when the query comes again while it is there: a place asked
   * once (most of them, when clients spread over a domain) costs no copy of its answer.
   */
  readonly #answerTags: Array<string | undefined> = new Array(ANSWER_SLOTS).fill(undefined);
  readonly #answerBodies: Array<Buffer | undefined> = new Array(ANSWER_SLOTS).fill(undefined);
  readonly #maxGridBytes: number;
  #gridBytes = 0;
  /** The grids' stored bodies by run directory (immutable, named by input hash, shared by releases). */
  readonly #runGrids = new Map<string, StoredBody[]>();

  constructor(options: PointGridStoreOptions) {
    const maxGridBytes = options.maxGridBytes ?? DEFAULT_GRID_BYTES;
    if (!(maxGridBytes > 0)) throw new Error(`PointGridStore: maxGridBytes must be positive, got ${maxGridBytes}`);
    this.#read = options.read;
    this.#maxGridBytes = maxGridBytes;
  }

  /** The grids of a run (none for a run without model output), in artefact-key order. */
  gridsOf(list: RunArtefacts): ServedGrid[] | Promise<ServedGrid[]> {
    return this.#gridsAt(gridBodies(list));
  }

  /**
   * The grids of a published run, its artefacts looked up only the first time: the grids' files are kept by
   * run directory (a few dozen bytes each), so queries spread over 1,000 runs do not read their lists again and
   * again. `read` gives the run's artefacts whose keys start with a prefix.
   */
  gridsOfRun(run: PublishedRun, read: (run: PublishedRun, prefix: string) => Record<string, Artefact> | Promise<Record<string, Artefact>>): ServedGrid[] | Promise<ServedGrid[]> {
    const known = this.#runGrids.get(run.dir);
    if (known !== undefined) return this.#gridsAt(known);
    const remember = (artefacts: Record<string, Artefact>) => {
      const bodies = Object.keys(artefacts).sort().map((key) => artefacts[key]!.identity);
      if (this.#runGrids.size >= MAX_RUNS_REMEMBERED) this.#runGrids.clear();
      this.#runGrids.set(run.dir, bodies);
      return this.#gridsAt(bodies);
    };
    const artefacts = read(run, pointGridKeyPrefix(run.reftime));
    return artefacts instanceof Promise ? artefacts.then(remember) : remember(artefacts);
  }

  #gridsAt(bodies: readonly StoredBody[]): ServedGrid[] | Promise<ServedGrid[]> {
    const grids: ServedGrid[] = [];
    for (const stored of bodies) {
      const grid = this.#cached(stored.file);
      if (grid === undefined) return Promise.all(bodies.map((body) => this.#load(body)));
      grids.push(grid);
    }
    return grids;
  }

  /** A /point answer given lately, by its ETag (which names the run's content and the query). */
  answer(etag: string): Buffer | undefined {
    const slot = answerSlot(etag);
    return this.#answerTags[slot] === etag ? this.#answerBodies[slot] : undefined;
  }

  /** Notes a query just answered (`body`: its answer, which may be a view that the next answer overwrites; copied when kept). */
  rememberAnswer(etag: string, body: Uint8Array): void {
    const slot = answerSlot(etag);
    if (this.#answerTags[slot] === etag) {
      this.#answerBodies[slot] ??= Buffer.from(body);
    } else {
      this.#answerTags[slot] = etag;
      this.#answerBodies[slot] = undefined;
    }
  }

  /** Bytes of grids held now. */
  get bytes(): number {
    return this.#gridBytes;
  }

  /** The grid used last: asked for again (most queries name the latest run), it is already last in the order. */
  #lastUsed: ServedGrid | undefined;

  #cached(file: string): ServedGrid | undefined {
    const last = this.#lastUsed;
    if (last !== undefined && last.file === file) return last;
    const grid = this.#grids.get(file);
    if (grid !== undefined) {
      this.#grids.delete(file);
      this.#grids.set(file, grid);
      this.#lastUsed = grid;
    }
    return grid;
  }

  #load(stored: StoredBody): ServedGrid | Promise<ServedGrid> {
    const cached = this.#cached(stored.file);
    if (cached) return cached;
    let loading = this.#loading.get(stored.file);
    if (loading === undefined) {
      loading = this.#read(stored)
        .then((bytes) => {
          const grid = new ServedGrid(openPointGrid(bytes, stored.file), stored.file, bytes.length);
          this.#remember(grid);
          return grid;
        })
        .finally(() => this.#loading.delete(stored.file));
      this.#loading.set(stored.file, loading);
    }
    return loading;
  }

  #remember(grid: ServedGrid): void {
    this.#grids.set(grid.file, grid);
    this.#gridBytes += grid.bytes;
    for (const [file, old] of this.#grids) {
      // The grid just loaded stays even when alone it is over the bound: it is being asked for.
      if (this.#gridBytes <= this.#maxGridBytes || old === grid) break;
      this.#grids.delete(file);
      this.#gridBytes -= old.bytes;
      if (old === this.#lastUsed) this.#lastUsed = undefined;
    }
  }
}
