/**
 * Colour quantisation for indexed-colour PNG: the colours of an RGBA image reduced to a palette of at most
 * 256 entries, with the colours that matter kept exactly.
 *
 * - An image with no more colours than the palette holds keeps every colour: lossless.
 * - Otherwise the palette is the colours asked to be kept (`keep`: the ash classes over the base map, the
 *   legend's swatches) and every colour covering at least `exactShare` of the image (flat fills: sea, land,
 *   ash areas, banner, text), exactly; the other entries come from a median cut of the remaining colours,
 *   weighted by their pixel counts, each the mean of its group (moved by `refine` rounds of k-means). Each
 *   colour is drawn as its nearest palette entry (squared distance in RGBA), never dithered: only
 *   anti-aliased edges and blends change, by a little, and a colour in the palette is always itself.
 * - Deterministic: the same pixels give the same palette and indices (ties broken by where a colour first
 *   appears; no randomness, nothing that depends on hash-table order).
 * - Many images of one frame (a run's band images) share a palette (sharedPalette: chosen as above from a few
 *   of them, every `keep` colour in it) and are indexed against it (PaletteIndexer): there a frequent colour
 *   the samples lacked (ash over the watermark) goes to its nearest entry too; the kept colours stay exact.
 *
 * Pure: no canvas, no files. About 5 ms for an 800 × 620 map with 4,000 colours.
 */

/** A palette and one index per pixel. */
export interface IndexedImage {
  width: number;
  height: number;
  /** Packed RGBA, r in the low byte (a little-endian Uint32Array view of RGBA bytes), as unsigned numbers. */
  colours: Uint32Array;
  indices: Uint8Array;
  /** True when every pixel kept its colour. */
  exact: boolean;
}

export interface QuantiseOptions {
  /** Palette size, 2 to 256 (default 256). */
  maxColours?: number;
  /** Colours (packed, see packHex) kept exactly wherever they occur. */
  keep?: Iterable<number>;
  /** Colours covering at least this share of the pixels stay exact (default 0.0005: 248 pixels of an 800 × 620 image). */
  exactShare?: number;
  /** Rounds of k-means after the median cut (default 0: worth it for small palettes, drawn once). */
  refine?: number;
}

/** `#rrggbb` as packed opaque RGBA (see IndexedImage.colours). */
export function packHex(hex: string): number {
  if (!/^#[0-9a-f]{6}$/i.test(hex)) throw new RangeError(`Internal error: not a #rrggbb colour: ${hex}`);
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  return (r | (g << 8) | (b << 16) | (255 << 24)) >>> 0;
}

/** The pixels of RGBA bytes as packed colours (a view when the bytes are 4-aligned, else a copy). */
export function packedPixels(rgba: Uint8Array | Uint8ClampedArray): Uint32Array {
  if (rgba.byteOffset % 4 === 0) return new Uint32Array(rgba.buffer, rgba.byteOffset, rgba.length >>> 2);
  return new Uint32Array(Uint8Array.from(rgba).buffer);
}

/**
 * The distinct colours of an image, each with an id in order of first appearance, and the id of every
 * pixel (an open-addressing hash table; colours repeat in runs, so a run costs one look-up).
 */
/** Where a colour's probe starts in a table of mask + 1 slots (its bits mixed: neighbouring colours spread). */
function firstSlot(colour: number, mask: number): number {
  let h = Math.imul(colour ^ (colour >>> 15), 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & mask;
}

class ColourTable {
  /** Per id: the colour and its pixel count. */
  colours = new Uint32Array(1024);
  counts = new Uint32Array(1024);
  size = 0;
  #slots = new Int32Array(4096).fill(-1);

  constructor(pixels: Uint32Array) {
    for (let i = 0; i < pixels.length; ) {
      const colour = pixels[i]!;
      let j = i + 1;
      while (j < pixels.length && pixels[j] === colour) j++;
      // The id first: a new colour may grow the arrays, and `this.counts[...] +=` would add to the old one.
      const id = this.#id(colour);
      this.counts[id]! += j - i;
      i = j;
    }
  }

  /** The id of a colour the table has. */
  idOf(colour: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let s = firstSlot(colour, mask); ; s = (s + 1) & mask) if (this.colours[slots[s]!] === colour) return slots[s]!;
  }

  /** The id of a colour, a new one the first time it is seen. */
  #id(colour: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let s = firstSlot(colour, mask); ; s = (s + 1) & mask) {
      const id = slots[s]!;
      if (id < 0) break;
      if (this.colours[id] === colour) return id;
    }
    const id = this.size++;
    if (id === this.colours.length) {
      const colours = new Uint32Array(id * 2);
      colours.set(this.colours);
      this.colours = colours;
      const counts = new Uint32Array(id * 2);
      counts.set(this.counts);
      this.counts = counts;
    }
    this.colours[id] = colour;
    if (this.size * 2 > slots.length) this.#rehash(slots.length * 2);
    else this.#place(id);
    return id;
  }

  #place(id: number): void {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let s = firstSlot(this.colours[id]!, mask);
    while (slots[s]! >= 0) s = (s + 1) & mask;
    slots[s] = id;
  }

  #rehash(capacity: number): void {
    this.#slots = new Int32Array(capacity).fill(-1);
    for (let id = 0; id < this.size; id++) this.#place(id);
  }

  /** Ids, most pixels first, ties in order of first appearance (a numeric sort of count × 2²² − id: no comparator to call). */
  ordered(): Int32Array {
    const { size, counts } = this;
    if (size >= 1 << 22) return Int32Array.from({ length: size }, (_, id) => id).sort((a, b) => counts[b]! - counts[a]! || a - b);
    const keys = new Float64Array(size);
    for (let id = 0; id < size; id++) keys[id] = counts[id]! * 4194304 + (4194303 - id);
    keys.sort();
    const order = new Int32Array(size);
    for (let k = 0; k < size; k++) order[k] = 4194303 - (keys[size - 1 - k]! % 4194304);
    return order;
  }
}

/** The distinct colours of packed pixels and their counts, most frequent first (ties: the one that appears first). */
export function colourHistogram(pixels: Uint32Array): { colours: Uint32Array; counts: Uint32Array } {
  const table = new ColourTable(pixels);
  const order = table.ordered();
  return { colours: Uint32Array.from(order, (id) => table.colours[id]!), counts: Uint32Array.from(order, (id) => table.counts[id]!) };
}

/** Reduces an RGBA image (4 bytes per pixel, not premultiplied) to at most `maxColours` colours. */
export function quantise(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number, options: QuantiseOptions = {}): IndexedImage {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || rgba.length !== width * height * 4) {
    throw new RangeError(`Internal error: quantise got ${rgba.length} bytes for ${width} × ${height} pixels`);
  }
  const maxColours = Math.min(256, Math.max(2, Math.floor(options.maxColours ?? 256)));
  const pixels = packedPixels(rgba);
  const table = new ColourTable(pixels);
  const order = table.ordered();
  const colours = new Uint32Array(order.length);
  const counts = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) {
    colours[k] = table.colours[order[k]!]!;
    counts[k] = table.counts[order[k]!]!;
  }
  const entryOf = new Uint8Array(table.size);
  let palette: Uint32Array;
  if (colours.length <= maxColours) {
    palette = colours;
    for (let k = 0; k < order.length; k++) entryOf[order[k]!] = k;
  } else {
    palette = choosePalette(colours, counts, maxColours, width * height, options);
    const nearest = nearestEntries(colours, palette);
    for (let k = 0; k < order.length; k++) entryOf[order[k]!] = nearest[k]!;
  }
  // Runs of one colour again: one look-up each.
  const indices = new Uint8Array(pixels.length);
  for (let i = 0; i < pixels.length; ) {
    const colour = pixels[i]!;
    const entry = entryOf[table.idOf(colour)]!;
    indices[i++] = entry;
    while (i < pixels.length && pixels[i] === colour) indices[i++] = entry;
  }
  return { width, height, colours: palette, indices, exact: palette === colours };
}

/** For each colour, the index of the nearest palette entry (see NearestEntry). */
function nearestEntries(colours: Uint32Array, palette: Uint32Array): Uint8Array {
  const nearest = new NearestEntry(palette);
  const out = new Uint8Array(colours.length);
  for (let i = 0; i < colours.length; i++) out[i] = nearest.of(colours[i]!);
  return out;
}

/**
 * The nearest entry of a palette to a colour: squared RGBA distance, of equals the lowest index; a colour in
 * the palette is its own entry. Entries are searched outwards from the colour's green in green order, stopping
 * where green alone is farther.
 */
class NearestEntry {
  readonly #n: number;
  /** Per entry in green order: r, g, b, a, index. */
  readonly #rows: Int32Array;
  readonly #exact = new Map<number, number>();

  constructor(palette: Uint32Array) {
    const n = palette.length;
    this.#n = n;
    // Entries in green order, of equals the lowest index first: sorted as numbers green × n + index (plain
    // loops and no comparator here: V8 compiled this function's closures again on every call).
    const byGreen = new Int32Array(n);
    for (let j = 0; j < n; j++) byGreen[j] = ((palette[j]! >>> 8) & 255) * n + j;
    byGreen.sort();
    const rows = new Int32Array(n * 5);
    for (let k = 0; k < n; k++) {
      const j = byGreen[k]! % n;
      const c = palette[j]!;
      const row = k * 5;
      rows[row] = c & 255;
      rows[row + 1] = (c >>> 8) & 255;
      rows[row + 2] = (c >>> 16) & 255;
      rows[row + 3] = c >>> 24;
      rows[row + 4] = j;
    }
    this.#rows = rows;
    for (let i = 0; i < n; i++) if (!this.#exact.has(palette[i]!)) this.#exact.set(palette[i]!, i);
  }

  of(c: number): number {
    const hit = this.#exact.get(c);
    if (hit !== undefined) return hit;
    const n = this.#n;
    const rows = this.#rows;
    const r = c & 255;
    const g = (c >>> 8) & 255;
    const b = (c >>> 16) & 255;
    const a = c >>> 24;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid * 5 + 1]! < g) lo = mid + 1;
      else hi = mid;
    }
    let best = n;
    let bestDistance = 0x7fffffff;
    // Outwards from green g, one step up and one down in turn; a direction ends where green alone is farther.
    for (let up = lo, down = lo - 1; up < n || down >= 0; ) {
      for (let side = 0; side < 2; side++) {
        const k = side === 0 ? up : down;
        if (k < 0 || k >= n) continue;
        const dg = rows[k * 5 + 1]! - g;
        if (dg * dg > bestDistance) {
          if (side === 0) up = n;
          else down = -1;
          continue;
        }
        const dr = rows[k * 5]! - r;
        const db = rows[k * 5 + 2]! - b;
        const da = rows[k * 5 + 3]! - a;
        const d = dr * dr + dg * dg + db * db + da * da;
        const j = rows[k * 5 + 4]!;
        if (d < bestDistance || (d === bestDistance && j < best)) {
          bestDistance = d;
          best = j;
        }
        if (side === 0) up++;
        else down--;
      }
    }
    return best;
  }
}

/**
 * One palette for many images of the same frame and base map (a run's band images): chosen from the pixels
 * of `samples` as quantise chooses an image's, every `keep` colour in it whether a sample has it or not, so
 * an image the samples left out still has its class colours exact. Images then index against it
 * (PaletteIndexer) without choosing a palette each: a third of quantise's work, and the same colour is the
 * same entry in every image of the run.
 */
export function sharedPalette(samples: ReadonlyArray<Uint8Array | Uint8ClampedArray>, options: QuantiseOptions = {}): Uint32Array {
  const keep = Uint32Array.from(options.keep ?? [], (colour) => colour >>> 0);
  let length = keep.length;
  for (const sample of samples) {
    if (sample.length % 4 !== 0) throw new RangeError(`Internal error: sharedPalette got ${sample.length} bytes, not whole RGBA pixels`);
    length += sample.length >>> 2;
  }
  const pixels = new Uint32Array(length);
  let at = 0;
  for (const sample of samples) {
    pixels.set(packedPixels(sample), at);
    at += sample.length >>> 2;
  }
  // The kept colours as pixels of their own: in the table even when no sample drew them.
  pixels.set(keep, at);
  return quantise(new Uint8Array(pixels.buffer), pixels.length, 1, options).colours;
}

/** Indexes images against one palette, remembering the entry of every colour it has seen (one hash look-up per run of a colour). */
export class PaletteIndexer {
  readonly palette: Uint32Array;
  readonly #nearest: NearestEntry;
  #colours = new Uint32Array(1024);
  #entries = new Uint8Array(1024);
  #slots = new Int32Array(4096).fill(-1);
  #size = 0;

  constructor(palette: Uint32Array) {
    if (palette.length < 1 || palette.length > 256) throw new RangeError(`Internal error: a palette of ${palette.length} colours`);
    this.palette = palette;
    this.#nearest = new NearestEntry(palette);
  }

  /** The entry of each pixel of RGBA bytes: the nearest palette colour, as quantise draws a colour it left out. */
  index(rgba: Uint8Array | Uint8ClampedArray): Uint8Array {
    const pixels = packedPixels(rgba);
    const indices = new Uint8Array(pixels.length);
    for (let i = 0; i < pixels.length; ) {
      const colour = pixels[i]!;
      const entry = this.#entryOf(colour);
      indices[i++] = entry;
      while (i < pixels.length && pixels[i] === colour) indices[i++] = entry;
    }
    return indices;
  }

  #entryOf(colour: number): number {
    const mask = this.#slots.length - 1;
    for (let s = firstSlot(colour, mask); ; s = (s + 1) & mask) {
      const id = this.#slots[s]!;
      if (id < 0) break;
      if (this.#colours[id] === colour) return this.#entries[id]!;
    }
    const entry = this.#nearest.of(colour);
    const id = this.#size++;
    if (id === this.#colours.length) {
      const colours = new Uint32Array(id * 2);
      colours.set(this.#colours);
      this.#colours = colours;
      const entries = new Uint8Array(id * 2);
      entries.set(this.#entries);
      this.#entries = entries;
    }
    this.#colours[id] = colour;
    this.#entries[id] = entry;
    if (this.#size * 2 > this.#slots.length) {
      this.#slots = new Int32Array(this.#slots.length * 2).fill(-1);
      for (let k = 0; k < this.#size; k++) this.#place(k);
    } else this.#place(id);
    return entry;
  }

  #place(id: number): void {
    const mask = this.#slots.length - 1;
    let s = firstSlot(this.#colours[id]!, mask);
    while (this.#slots[s]! >= 0) s = (s + 1) & mask;
    this.#slots[s] = id;
  }
}

/** The row of `rows` (4 numbers each, `n` of them) nearest to colour `i` of the RGBA bytes `channels`. */
function nearestCentre(channels: Uint8Array, i: number, rows: Float64Array, n: number): number {
  const r = channels[i * 4]!;
  const g = channels[i * 4 + 1]!;
  const b = channels[i * 4 + 2]!;
  const a = channels[i * 4 + 3]!;
  let best = 0;
  let bestDistance = Infinity;
  for (let j = 0, k = 0; j < n; j++, k += 4) {
    const dr = rows[k]! - r;
    const dg = rows[k + 1]! - g;
    const db = rows[k + 2]! - b;
    const da = rows[k + 3]! - a;
    const d = dr * dr + dg * dg + db * db + da * da;
    if (d < bestDistance) {
      bestDistance = d;
      best = j;
    }
  }
  return best;
}

function choosePalette(colours: Uint32Array, counts: Uint32Array, maxColours: number, pixelCount: number, options: QuantiseOptions): Uint32Array {
  // Exact: the colours asked for (when the image has them), then the most frequent, up to half the palette.
  const rank = new Map<number, number>();
  for (let i = 0; i < colours.length; i++) rank.set(colours[i]!, i);
  const fixed: number[] = [];
  const isFixed = new Uint8Array(colours.length);
  for (const colour of options.keep ?? []) {
    const i = rank.get(colour >>> 0);
    if (i !== undefined && isFixed[i] === 0 && fixed.length < maxColours - 1) {
      isFixed[i] = 1;
      fixed.push(colours[i]!);
    }
  }
  const minCount = Math.max(2, (options.exactShare ?? 0.0005) * pixelCount);
  for (let i = 0; i < colours.length && counts[i]! >= minCount && fixed.length < Math.ceil(maxColours / 2); i++) {
    if (isFixed[i] === 0) {
      isFixed[i] = 1;
      fixed.push(colours[i]!);
    }
  }
  const rest: number[] = [];
  for (let i = 0; i < colours.length; i++) if (isFixed[i] === 0) rest.push(i);

  const channels = new Uint8Array(colours.buffer, colours.byteOffset, colours.length * 4);
  const centres = medianCut(rest, channels, counts, maxColours - fixed.length).map((group) => centroid(group, channels, counts));
  // k-means over the free entries: fixed entries attract colours but never move.
  const n = fixed.length + centres.length;
  for (let round = 0; round < (options.refine ?? 0) && centres.length > 0; round++) {
    const rows = new Float64Array(n * 4);
    rows.set(new Uint8Array(Uint32Array.from(fixed).buffer));
    centres.forEach((c, j) => rows.set(c, (fixed.length + j) * 4));
    const sums = new Float64Array(centres.length * 5);
    for (const i of rest) {
      const j = nearestCentre(channels, i, rows, n) - fixed.length;
      if (j < 0) continue;
      const w = counts[i]!;
      for (let k = 0; k < 4; k++) sums[j * 5 + k]! += channels[i * 4 + k]! * w;
      sums[j * 5 + 4]! += w;
    }
    centres.forEach((_, j) => {
      const w = sums[j * 5 + 4]!;
      if (w > 0) centres[j] = Float64Array.from({ length: 4 }, (_, k) => sums[j * 5 + k]! / w);
    });
  }
  const palette = [...fixed];
  const inPalette = new Set(fixed);
  for (const c of centres) {
    const packed = (Math.round(c[0]!) | (Math.round(c[1]!) << 8) | (Math.round(c[2]!) << 16) | (Math.round(c[3]!) << 24)) >>> 0;
    if (!inPalette.has(packed)) {
      inPalette.add(packed);
      palette.push(packed);
    }
  }
  return Uint32Array.from(palette);
}

/** A median-cut group: its colours, and the channel it is widest along, with that channel's range and score. */
interface Group {
  items: number[];
  score: number;
  axis: number;
  lo: number;
  hi: number;
}

/** A group of colours measured: the channel with the largest spread² × pixels (a module function: as a closure made per image, V8 compiled it afresh for each). */
function measureGroup(list: number[], channels: Uint8Array, counts: Uint32Array): Group {
  let weight = 0;
  const lo = [255, 255, 255, 255];
  const hi = [0, 0, 0, 0];
  for (const i of list) {
    weight += counts[i]!;
    for (let k = 0; k < 4; k++) {
      const v = channels[i * 4 + k]!;
      if (v < lo[k]!) lo[k] = v;
      if (v > hi[k]!) hi[k] = v;
    }
  }
  let score = 0;
  let axis = 0;
  for (let k = 0; k < 4; k++) {
    const spread = hi[k]! - lo[k]!;
    if (spread * spread * weight > score) {
      score = spread * spread * weight;
      axis = k;
    }
  }
  return { items: list, score, axis, lo: lo[axis]!, hi: hi[axis]! };
}

/**
 * Splits colours (indices into the RGBA bytes `channels`) into at most `boxes` groups: the group with the
 * largest spread² × pixels is halved by pixel count along its widest channel.
 */
function medianCut(items: number[], channels: Uint8Array, counts: Uint32Array, boxes: number): number[][] {
  if (items.length === 0 || boxes <= 0) return [];
  const groups = [measureGroup(items, channels, counts)];
  const weights = new Float64Array(256);
  while (groups.length < boxes) {
    let pick = -1;
    for (let g = 0; g < groups.length; g++) if (groups[g]!.score > 0 && (pick < 0 || groups[g]!.score > groups[pick]!.score)) pick = g;
    if (pick < 0) break;
    const { items: list, axis, lo, hi } = groups[pick]!;
    // The value of the axis where half the pixels are at or below it (at most hi - 1: both halves have colours).
    weights.fill(0, lo, hi + 1);
    let total = 0;
    for (const i of list) {
      weights[channels[i * 4 + axis]!]! += counts[i]!;
      total += counts[i]!;
    }
    let cut = lo;
    for (let v = lo, sum = 0; v < hi; v++) {
      sum += weights[v]!;
      cut = v;
      if (sum * 2 >= total) break;
    }
    const left: number[] = [];
    const right: number[] = [];
    for (const i of list) (channels[i * 4 + axis]! <= cut ? left : right).push(i);
    groups[pick] = measureGroup(left, channels, counts);
    groups.push(measureGroup(right, channels, counts));
  }
  return groups.map((g) => g.items);
}

function centroid(items: number[], channels: Uint8Array, counts: Uint32Array): Float64Array {
  const s = new Float64Array(4);
  let n = 0;
  for (const i of items) {
    const w = counts[i]!;
    for (let k = 0; k < 4; k++) s[k]! += channels[i * 4 + k]! * w;
    n += w;
  }
  return s.map((v) => v / n);
}
