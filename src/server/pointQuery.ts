/**
 * GET /point: the concentration at a place, per model and band, for every step of a run (or the step
 * valid at `time`), from the run's point-query grids. Parameters are checked here; the answer is plain
 * data (the route turns it into a response). The value of a place is the highest of the cell centres around
 * it (its own cell's at a centre): never less than the model's value for its cell, nor than the ash areas drawn there.
 */
import { decodeConcentration, MISSING_CODE } from "../formats/concentrationCodes.ts";
import { INSTANT_FORM, normaliseInstant, parseInstant } from "../time/instant.ts";
import type { CellSupport } from "../geo/gridCells.ts";
import type { AnswerParts, ServedGrid } from "./pointGrids.ts";

export interface QueryProblem {
  kind: "problem";
  status: 400 | 413 | 422;
  detail: string;
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/** A decimal that is a JSON number as it is written (no `+`, no leading zero, digits both sides of the point). */
const JSON_DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

export interface Coordinate {
  value: number;
  /**
   * The value as JSON and the ETag write it: the client's own spelling when it is a JSON number already (most
   * are), else the number's shortest form. Spelling a double anew was half of a reply's own work outside the
   * answer in a CPU profile at random places, and it was done twice per coordinate.
   */
  json: string;
}

/** One coordinate parameter, a decimal number within ±limit. */
export function coordinateParameter(name: "lat" | "lon", values: readonly string[] | undefined, limit: number): Coordinate | QueryProblem {
  const example = "e.g. ?lat=63.98&lon=-19.7";
  if (!values || values.length === 0) return { kind: "problem", status: 400, detail: `the ${name} parameter is missing: give the place in decimal degrees, ${example}` };
  if (values.length > 1) return { kind: "problem", status: 400, detail: `give the ${name} parameter once` };
  const text = values[0]!.trim();
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value)) return { kind: "problem", status: 400, detail: `${name} "${text.slice(0, 40)}" is not a decimal number of degrees, ${example}` };
  if (Math.abs(value) > limit) return { kind: "problem", status: 400, detail: `${name} ${value} is outside -${limit}..${limit} degrees` };
  return { value, json: text.length <= 24 && JSON_DECIMAL.test(text) ? text : String(value) };
}

/** The optional `time` parameter as an instant (ms), undefined when absent. */
export function timeParameter(values: readonly string[] | undefined): { iso: string; ms: number } | undefined | QueryProblem {
  if (!values) return undefined;
  if (values.length > 1) return { kind: "problem", status: 400, detail: "give the time parameter once" };
  const iso = normaliseInstant(values[0]!.replace(/ (\d{2}:?\d{2})$/, "+$1"));
  if (iso === undefined) return { kind: "problem", status: 400, detail: `time "${values[0]!.slice(0, 100)}" is not a date-time: expected ${INSTANT_FORM}` };
  return { iso, ms: parseInstant(iso)! };
}

/** `FL200-350`, as aviation writes a band. */
export const bandName = (lower: number, upper: number): string => `FL${String(lower).padStart(3, "0")}-${String(upper).padStart(3, "0")}`;

/** A step's tail for a code, `value,"class":"…"}` (formatting numbers cost more than the rest of an answer): made once per code. */
function stepTail(grid: ServedGrid, parts: AnswerParts, code: number): Buffer {
  let tail = parts.stepTails[code];
  if (tail === undefined) {
    const missing = code === MISSING_CODE;
    const value = missing ? "null" : String(decodeConcentration(code));
    const id = missing ? "missing" : parts.classIds[grid.classIndexOf(code)]!;
    parts.stepTails[code] = tail = Buffer.from(`${value},"class":${JSON.stringify(id)}}`, "utf8");
  }
  return tail;
}

/**
 * Answers are written into one buffer, reused from answer to answer: an answer of 3 bands × 72 steps is 216
 * step objects, and building them as strings (then encoding them) cost more than the rest of a request.
 */
class AnswerWriter {
  // As large as the answers (it doubles when one does not fit): a buffer handed over to a socket that cannot
  // take its answer at once stays held until the client reads, so it should not be much larger than that.
  #bytes: Buffer = Buffer.allocUnsafeSlow(16 * 1024);
  at = 0;

  reset(): void {
    this.at = 0;
  }

  #room(length: number): void {
    if (this.at + length <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#bytes.length * 2, this.at + length));
    this.#bytes.copy(grown, 0, 0, this.at);
    this.#bytes = grown;
  }

  bytes(piece: Uint8Array): void {
    const length = piece.length;
    this.#room(length);
    this.#bytes.set(piece, this.at);
    this.at += length;
  }

  /** Bytes `start` to `end` of a piece, copied without a view of them. */
  slice(piece: Buffer, start: number, end: number): void {
    this.#room(end - start);
    this.at += piece.copy(this.#bytes, this.at, start, end);
  }

  /** Bytes `start` to `end` of this answer, written again at its end. */
  again(start: number, end: number): void {
    this.#room(end - start);
    this.#bytes.copyWithin(this.at, start, end);
    this.at += end - start;
  }

  text(text: string): void {
    this.#room(text.length * 3);
    this.at += this.#bytes.write(text, this.at, "utf8");
  }

  /**
   * The answer: a view of the writer's buffer, valid until the next answer. Sent as it is, it is copied once,
   * by the socket's write; a string or a Buffer per answer cost a copy or two more, and 13 KB of garbage a
   * request (docs/benchmarks.md, "Point and route queries").
   */
  answer(): Buffer {
    return this.#bytes.subarray(0, this.at);
  }

  /** Buffers whose answers were sent, to write answers into again (over TLS every answer is handed over). */
  readonly #spare: Buffer[] = [];

  /** The last answer stays with someone else (a write still under way): its buffer; the next answer goes into another. */
  handOver(): Buffer {
    const held = this.#bytes;
    this.#bytes = this.#spare.pop() ?? Buffer.allocUnsafeSlow(held.length);
    this.at = 0;
    return held;
  }

  giveBack(buffer: Buffer): void {
    if (this.#spare.length < MAX_SPARE_BUFFERS) this.#spare.push(buffer);
  }
}
/** Spare answer buffers kept: a few sends under way at once; more are left to the garbage collector. */
const MAX_SPARE_BUFFERS = 8;
const writer = new AnswerWriter();

/**
 * Leaves the last answer's bytes to whoever holds them (a socket that could not send them at once): the
 * next answer is written elsewhere. Call it whenever an answer outlives the request that asked for it;
 * give the buffer it returns to answerSent() once nothing reads it any more (or drop it).
 */
export function keepLastAnswer(): Buffer {
  return writer.handOver();
}

/** A buffer keepLastAnswer() gave, whose answer is sent: later answers may be written into it. */
export function answerSent(buffer: Buffer): void {
  writer.giveBack(buffer);
}

/** The steps of a series (without the brackets): each run of steps without ash (most of a domain most of the time) is one copy. */
function writeAllSteps(grid: ServedGrid, codes: Uint16Array): void {
  const parts = grid.jsonParts;
  const steps = codes.length;
  if (codes === grid.noAsh) return writer.slice(parts.noAshSteps, 0, parts.noAshSteps.length);
  for (let t = 0; t < steps; ) {
    if (codes[t] === 0) {
      let end = t + 1;
      while (end < steps && codes[end] === 0) end++;
      // From the comma before step t (none before the first).
      writer.slice(parts.noAshSteps, t === 0 ? 0 : parts.noAshStarts[t]! - 1, parts.noAshStarts[end]! - 1);
      t = end;
    } else {
      writeStepWithAsh(grid, parts, t, codes[t]!, t !== 0);
      t++;
    }
  }
}

const COMMA = Buffer.from(",", "latin1");
const SERIES_END = Buffer.from("]}", "latin1");
const UNITS = Buffer.from(`"units":"mg/m3","series":[`, "latin1");

/** Per reftime, an answer's first bytes: `{"reftime":"…","location":{"lat":`. */
const answerHeads = new Map<string, Buffer>();
function answerHead(reftime: string): Buffer {
  let head = answerHeads.get(reftime);
  if (head === undefined) {
    if (answerHeads.size >= 1024) answerHeads.clear();
    answerHeads.set(reftime, (head = Buffer.from(`{"reftime":${JSON.stringify(reftime)},"location":{"lat":`, "utf8")));
  }
  return head;
}

/** `"cell":{"x":1,"y":2},"support":[{"x":1,"y":2}],"steps":[`, as JSON.stringify writes cells, without its generic walk. */
function whereJson(place: CellSupport): string {
  const { cell, support } = place;
  let json = `"cell":{"x":${cell.x},"y":${cell.y}},"support":[`;
  for (let i = 0; i < support.length; i++) json += `${i === 0 ? "" : ","}{"x":${support[i]!.x},"y":${support[i]!.y}}`;
  return `${json}],"steps":[`;
}

/** One step, the only one of its series (`time` asked for). */
function writeStep(grid: ServedGrid, t: number, code: number): void {
  const parts = grid.jsonParts;
  if (code === 0) writer.slice(parts.noAshSteps, parts.noAshStarts[t]!, parts.noAshStarts[t + 1]! - 1);
  else writeStepWithAsh(grid, parts, t, code, false);
}

function writeStepWithAsh(grid: ServedGrid, parts: AnswerParts, t: number, code: number, afterAnother: boolean): void {
  const head = parts.stepHeads[t]!;
  if (afterAnother) writer.bytes(head);
  else writer.slice(head, 1, head.length);
  writer.bytes(stepTail(grid, parts, code));
}

/**
 * The 422 for a run without point grids, saying which kind it is: a run with model output has its PNG map
 * (only model output draws one), so its grid is one no place can be looked up in (the build warned).
 */
export function withoutGrids(run: { reftime: string; png?: string | undefined }, action: string): QueryProblem {
  const why = run.png !== undefined ? "its model output is on a grid no place can be looked up in (the build report names the file and why)" : "its ash areas are forecasters' drawings";
  return { kind: "problem", status: 422, detail: `the run ${run.reftime} has no model output to ${action}: ${why}; use /resources for its ash areas` };
}

/** Where a place lies in each grid (undefined outside it), in the grids' order: found once per request. */
export function placesIn(grids: readonly ServedGrid[], lat: number, lon: number): Array<CellSupport | undefined> {
  return grids.map((grid) => grid.supportOf(lon, lat));
}

/**
 * Why a place (and time) has no answer in a run's grids: outside every model's domain, or the time outside
 * every forecast; undefined when it has one. Checked before validators, so that such a request is never a 304.
 */
export function pointProblem(reftime: string, grids: readonly ServedGrid[], places: ReadonlyArray<CellSupport | undefined>, lat: number, lon: number, time: { iso: string; ms: number } | undefined): QueryProblem | undefined {
  let inDomain = false;
  let inForecast = false;
  for (let g = 0; g < grids.length; g++) {
    if (places[g] === undefined) continue;
    inDomain = true;
    if (!time || grids[g]!.stepAt(time.ms) !== -1) inForecast = true;
  }
  if (!inDomain) {
    const domains = grids.map((g) => `${g.header.model} (${g.header.source}: ${g.domain})`).join(", ");
    return { kind: "problem", status: 422, detail: `lat ${lat}, lon ${lon} is outside the domain of every model of run ${reftime}: ${domains}` };
  }
  if (!inForecast) {
    const spans = grids.map((g) => `${g.header.times[0]} to ${g.header.end}`).join(", ");
    return { kind: "problem", status: 422, detail: `time ${time!.iso} is outside the forecast of run ${reftime} (${spans}); leave time out for every step` };
  }
  return undefined;
}

/**
 * The answer as JSON (PointAnswer of src/contract/queries.ts), UTF-8, written piece by piece from bytes each
 * grid made once; grids not empty. The bytes are valid until the next answer: send them at once or copy them,
 * and call keepLastAnswer() when a send holds them longer. `latJson` and `lonJson`: the place as the answer
 * writes it (String() of a finite number is its JSON).
 */
export function answerPoint(reftime: string, grids: readonly ServedGrid[], lat: number, lon: number, time: { iso: string; ms: number } | undefined, latJson = String(lat), lonJson = String(lon)): Buffer | QueryProblem {
  const places = placesIn(grids, lat, lon);
  const problem = pointProblem(reftime, grids, places, lat, lon, time);
  if (problem) return problem;
  const outside: string[] = [];
  let written = 0;
  writer.reset();
  writer.bytes(answerHead(reftime));
  writer.text(`${latJson},"lon":${lonJson}},${time ? `"time":${JSON.stringify(time.iso)},` : ""}`);
  writer.bytes(UNITS);
  for (let g = 0; g < grids.length; g++) {
    const grid = grids[g]!;
    const { header } = grid;
    const place = places[g];
    if (place === undefined) {
      outside.push(JSON.stringify({ model: header.model, source: header.source }));
      continue;
    }
    const step = time ? grid.stepAt(time.ms) : -1;
    // The place's cells, the same for every band: written once, then copied.
    let whereStart = -1;
    let whereEnd = -1;
    for (let b = 0; b < header.bands.length; b++) {
      if (written++) writer.bytes(COMMA);
      writer.bytes(grid.jsonParts.seriesHeads[b]!);
      if (whereStart === -1) {
        whereStart = writer.at;
        writer.text(whereJson(place));
        whereEnd = writer.at;
      } else writer.again(whereStart, whereEnd);
      if (!time) writeAllSteps(grid, grid.placeSeries(b, place));
      else if (step !== -1) writeStep(grid, step, grid.placeCode(b, place, step));
      writer.bytes(SERIES_END);
    }
  }
  writer.text(`],"outside":[${outside.join(",")}]}`);
  return writer.answer();
}
