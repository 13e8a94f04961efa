/**
 * One image per flight-level band and time step, for viewers: a single panel with the same styling as
 * the run map, the time in the title and the run type marked. Reuses the cached base map of the run's
 * box, so each image costs only the ash areas, the text and the PNG encoding.
 */
import type { Canvas } from "@napi-rs/canvas";
import type { LatLonBoxModel, RunType } from "../contract/ashModel.ts";
import type { ThresholdBand } from "../geo/types.ts";
import { noValueText } from "../contract/missingValues.ts";
import { getBaseMap, offerBaseMaps, shareBaseMap, type BaseMap, type SharedBaseMap } from "./basemap.ts";
import { drawPanel, exactColours, missingNoteExtent, projectAreas, type ProjectedAreas, type Rect, type Volcano } from "./draw.ts";
import { drawFooter, frameMetrics, startImage, MARGIN, panelHeightFor, type DrawnImage, type FrameMetrics } from "./layout.ts";
import { capitalised, formatInstant } from "./style.ts";
import { encodeIndexedPng, encodePng } from "./png.ts";
import { PaletteIndexer, sharedPalette } from "./palette.ts";

export interface BandImageInput {
  type: RunType;
  volcano?: Volcano | undefined;
  reftime: string;
  /** The instant the image is valid for. */
  time: string;
  box: LatLonBoxModel;
  thresholds: readonly number[];
  /** What the field is, from the model output: `maximum of 6-hour mean ash concentration` (src/model/fieldMeaning.ts). */
  quantity: string;
  /** `missingShare`: the share of the grid the model gave no value at this step, when some cells have none. */
  band: { label: string; areas: ThresholdBand[]; missingShare?: number | undefined };
  /** Image width in pixels (default 800). */
  width?: number | undefined;
  /** Image height in pixels (default: from the box's shape). */
  height?: number | undefined;
  /** The palette of the run's band images (bandImagePalette); without one the image gets its own. */
  palette?: Uint32Array | undefined;
  /** Base maps the thread that chose the palette drew (bandImagePalette): used instead of drawing them again. */
  baseMaps?: readonly SharedBaseMap[] | undefined;
}

export interface BandImageLayout {
  width: number;
  height: number;
  metrics: FrameMetrics;
  panel: Rect;
}

export const BAND_IMAGE_WIDTH = 800;

export function bandImageLayout(input: { type: RunType; box: LatLonBoxModel; thresholds: readonly number[]; quantity: string; width?: number | undefined; height?: number | undefined }): BandImageLayout {
  const width = Math.max(320, Math.round(input.width ?? BAND_IMAGE_WIDTH));
  const metrics = frameMetrics(input.type, width, input.thresholds, input.quantity, { banner: 34, title: 64 });
  const top = metrics.bannerHeight + metrics.titleHeight;
  const panelW = width - 2 * MARGIN;
  const panelH =
    input.height === undefined
      ? panelHeightFor(input.box, panelW, 0.6, 1.05)
      : Math.max(80, Math.round(input.height) - top - metrics.footerHeight);
  const height = input.height === undefined ? top + panelH + metrics.footerHeight : Math.max(Math.round(input.height), top + panelH + metrics.footerHeight);
  return { width, height, metrics, panel: { x: MARGIN, y: top, w: panelW, h: panelH } };
}

/** The canvas this thread draws its band images on, one after the other (see startImage). */
let canvasForEncoding: Canvas | undefined;

/**
 * Draws one band at one time step and encodes it; the same input always gives the same bytes.
 *
 * With the run's palette, only the parts that differ from the image's background are painted, read and
 * indexed: the title (it names the time), the ash's extent and the missing-values note; the rest is the
 * background's (backgroundIndices: base map, watermark, labels and footer, drawn once per band). On a full-size
 * run that is a fifth of the pixels, and reading pixels back and indexing them cost more than drawing
 * (docs/benchmarks.md, issue 18). Everything else is drawn as usual, over what the canvas had outside those
 * parts, so each pixel in them is the whole image's: Skia draws a clipped text or path with other coverage, so
 * nothing is clipped (test/render/bandImage.test.ts compares both).
 */
export async function renderBandImage(input: BandImageInput): Promise<Buffer> {
  if (input.baseMaps) offerBaseMaps(input.baseMaps);
  const palette = input.palette;
  if (!palette) {
    const drawn = drawBandImage(input, canvasForEncoding);
    canvasForEncoding = drawn.ctx.canvas;
    return encodePng(drawn.ctx, drawn.width, drawn.height, { keep: drawn.keep });
  }
  const layout = bandImageLayout(input);
  const areas = projectAreas(baseMapOf(input, layout).projection, input.band.areas, input.thresholds);
  const hasAsh = areas.classes.length > 0;
  const indexer = indexerFor(palette);
  const indices = backgroundIndices(input, layout, hasAsh, indexer).slice();
  const changed = changedRects(layout, areas, hasAsh && input.band.missingShare !== undefined);
  const drawn = drawBandImage(input, canvasForEncoding, { layout, areas, only: changed });
  canvasForEncoding = drawn.ctx.canvas;
  // The pixels are read before anything is awaited: the next image may draw on the canvas then.
  const width = drawn.width;
  for (const rect of changed) {
    const part = indexer.index(drawn.ctx.getImageData(rect.x, rect.y, rect.w, rect.h).data);
    for (let row = 0; row < rect.h; row++) indices.set(part.subarray(row * rect.w, (row + 1) * rect.w), (rect.y + row) * width + rect.x);
  }
  // Stripes from the title's top: its rows change in every image, and fill whole stripes.
  return encodeIndexedPng({ width, height: drawn.height, colours: palette, indices, exact: false }, layout.metrics.bannerHeight);
}

/**
 * The parts of an image that can differ from its background, in whole pixels inside the image (they may
 * overlap): the title under the banner, the ash's extent and the missing-values note.
 */
function changedRects(layout: BandImageLayout, areas: ProjectedAreas, missingNote: boolean): Rect[] {
  const { panel, metrics } = layout;
  const rects: Rect[] = [{ x: 0, y: metrics.bannerHeight, w: layout.width, h: panel.y - metrics.bannerHeight }];
  const inPanel = (rect: Rect): void => {
    const x = Math.max(0, rect.x);
    const y = Math.max(0, rect.y);
    const w = Math.min(panel.w, rect.x + rect.w) - x;
    const h = Math.min(panel.h, rect.y + rect.h) - y;
    if (w > 0 && h > 0) rects.push({ x: panel.x + x, y: panel.y + y, w, h });
  };
  if (areas.extent === "all") inPanel({ x: 0, y: 0, w: panel.w, h: panel.h });
  else if (areas.extent) inPanel(areas.extent);
  if (missingNote) inPanel(missingNoteExtent(panel.w, BAND_LABEL_SIZE));
  return rects;
}

/**
 * What a band's images share, indexed with the run's palette: the image without ash and without the note a
 * panel without ash gets (hasAsh), or with that note (it says what share of the grid has no value, so one
 * background per wording). Its header is never used: every image draws its own. Made once per band.
 */
function backgroundIndices(input: BandImageInput, layout: BandImageLayout, hasAsh: boolean, indexer: PaletteIndexer): Uint8Array {
  const band = hasAsh ? { label: input.band.label, areas: [] } : { label: input.band.label, areas: [], missingShare: input.band.missingShare };
  const { width, height, panel } = layout;
  const key = JSON.stringify([width, height, panel, input.type, input.box, input.thresholds, input.quantity, input.volcano ?? null, band, hasAsh]);
  const known = backgrounds.find((background) => background.key === key && background.indexer === indexer);
  if (known) return known.indices;
  const drawn = drawBandImage({ ...input, band }, canvasForEncoding, { layout, withoutNote: hasAsh });
  canvasForEncoding = drawn.ctx.canvas;
  const indices = indexer.index(drawn.ctx.getImageData(0, 0, width, height).data);
  backgrounds.unshift({ key, indexer, indices });
  backgrounds.length = Math.min(backgrounds.length, MAX_BACKGROUNDS);
  return indices;
}

/** Backgrounds this thread made last: a run's bands, with and without ash, and a few wordings of its missing values. */
const backgrounds: Array<{ key: string; indexer: PaletteIndexer; indices: Uint8Array }> = [];
const MAX_BACKGROUNDS = 12;

/**
 * One palette for all the band images of a run, from the images of `samples` (a few steps of it): the same
 * frame, base map and ash classes are in every one, so a palette chosen once serves all, and each image only
 * looks its colours up (src/render/palette.ts, sharedPalette). The class colours are in it whether the samples
 * drew them or not. With it, the base maps the samples drew, for the other threads that draw the images.
 */
export function bandImagePalette(samples: readonly BandImageInput[]): { palette: Uint32Array; baseMaps: SharedBaseMap[] } {
  if (samples.length === 0) throw new RangeError("Internal error: bandImagePalette needs at least one sample image");
  const pixels: Uint8ClampedArray[] = [];
  const keep = new Set<number>();
  const panels = new Map<string, { box: BandImageInput["box"]; panel: Rect }>();
  for (const sample of samples) {
    const layout = bandImageLayout(sample);
    const drawn = drawBandImage(sample, canvasForEncoding, { layout });
    canvasForEncoding = drawn.ctx.canvas;
    pixels.push(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
    for (const colour of drawn.keep) keep.add(colour);
    panels.set(JSON.stringify([sample.box, layout.panel.w, layout.panel.h]), { box: sample.box, panel: layout.panel });
  }
  const baseMaps = [...panels.values()].map(({ box, panel }) => shareBaseMap(box, panel.w, panel.h));
  return { palette: sharedPalette(pixels, { keep }), baseMaps };
}

/** The indexers of the last few palettes this thread used: a worker draws the images of one run after another. */
const indexers: PaletteIndexer[] = [];

function indexerFor(palette: Uint32Array): PaletteIndexer {
  const known = indexers.find((indexer) => indexer.palette.length === palette.length && indexer.palette.every((colour, i) => colour === palette[i]));
  if (known) return known;
  const indexer = new PaletteIndexer(palette);
  indexers.unshift(indexer);
  indexers.length = Math.min(indexers.length, 4);
  return indexer;
}

/** The label size of a band image's panel. */
const BAND_LABEL_SIZE = 16;

function baseMapOf(input: BandImageInput, layout: BandImageLayout): BaseMap {
  return getBaseMap(input.box, layout.panel.w, layout.panel.h);
}

export interface DrawOptions {
  /** bandImageLayout(input), when the caller made it already: it must be that (nothing checks). */
  layout?: BandImageLayout | undefined;
  /** The band's areas already projected (projectAreas with the image's base map). */
  areas?: ProjectedAreas | undefined;
  /** Only these parts of the image are read: its white and its base map go there only (startImage, PanelContent), and its banner and footer only when one reaches them. */
  only?: readonly Rect[] | undefined;
  /** Leave out the note of a panel without ash (PanelContent). */
  withoutNote?: boolean | undefined;
}

/** Draws one band at one time step (renderBandImage encodes it), on a new canvas or on `reuse` (startImage). */
export function drawBandImage(input: BandImageInput, reuse?: Canvas, options: DrawOptions = {}): DrawnImage {
  const layout = options.layout ?? bandImageLayout(input);
  const name = input.volcano?.name ?? "Volcanic ash";
  const { ctx } = startImage(
    layout,
    input.type,
    `${name} · ${input.band.label} · ${formatInstant(input.time)}`,
    `${capitalised(input.quantity)}, model output for ${formatInstant(input.time)}   ·   Model run ${formatInstant(input.reftime)}`,
    { headline: 18, subline: 13 },
    reuse,
    options.only,
  );
  const { panel } = layout;
  const base = baseMapOf(input, layout);
  const { missingShare } = input.band;
  const missing = missingShare === undefined ? undefined : noValueText(missingShare);
  const areas = options.areas ?? projectAreas(base.projection, input.band.areas, input.thresholds);
  drawPanel(ctx, panel, { base, label: input.band.label, areas, thresholds: input.thresholds, type: input.type, volcano: input.volcano, labelSize: BAND_LABEL_SIZE, missing, withoutNote: options.withoutNote, baseOnly: options.only });
  const footerTop = panel.y + panel.h;
  if (!options.only || options.only.some((rect) => rect.y + rect.h > footerTop)) drawFooter(ctx, layout.width, footerTop, layout.metrics, input.thresholds, input.quantity);
  return { ctx, width: layout.width, height: layout.height, keep: exactColours(base.colours, input.thresholds, input.type) };
}
