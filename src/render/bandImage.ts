/**
 * One image per flight-level band and time step, for viewers: a single panel with the same styling as
 * the run map, the time in the title and the run type marked. Reuses the cached base map of the run's
 * box, so each image costs only the ash areas, the text and the PNG encoding.
 */
import type { Canvas } from "@napi-rs/canvas";
import type { LatLonBoxModel, RunType } from "../contract/ashModel.ts";
import type { ThresholdBand } from "../geo/types.ts";
import { noValueText } from "../contract/missingValues.ts";
import { getBaseMap } from "./basemap.ts";
import { drawPanel, exactColours, type Rect, type Volcano } from "./draw.ts";
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

/** Draws one band at one time step and encodes it; the same input always gives the same bytes. */
export async function renderBandImage(input: BandImageInput): Promise<Buffer> {
  const drawn = drawBandImage(input, canvasForEncoding);
  canvasForEncoding = drawn.ctx.canvas;
  // The pixels are read before anything is awaited: the next image may draw on the canvas then.
  // Compressed on libuv's thread pool: several images are compressed while the next ones are drawn.
  if (!input.palette) return encodePng(drawn.ctx, drawn.width, drawn.height, { keep: drawn.keep });
  const { data } = drawn.ctx.getImageData(0, 0, drawn.width, drawn.height);
  return encodeIndexedPng({ width: drawn.width, height: drawn.height, colours: input.palette, indices: indexerFor(input.palette).index(data), exact: false });
}

/**
 * One palette for all the band images of a run, from the images of `samples` (a few steps of it): the same
 * frame, base map and ash classes are in every one, so a palette chosen once serves all, and each image only
 * looks its colours up (src/render/palette.ts, sharedPalette). The class colours are in it whether the samples
 * drew them or not.
 */
export function bandImagePalette(samples: readonly BandImageInput[]): Uint32Array {
  if (samples.length === 0) throw new RangeError("Internal error: bandImagePalette needs at least one sample image");
  const pixels: Uint8ClampedArray[] = [];
  const keep = new Set<number>();
  for (const sample of samples) {
    const drawn = drawBandImage(sample, canvasForEncoding);
    canvasForEncoding = drawn.ctx.canvas;
    pixels.push(drawn.ctx.getImageData(0, 0, drawn.width, drawn.height).data);
    for (const colour of drawn.keep) keep.add(colour);
  }
  return sharedPalette(pixels, { keep });
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

/** Draws one band at one time step (renderBandImage encodes it), on a new canvas or on `reuse` (startImage). */
export function drawBandImage(input: BandImageInput, reuse?: Canvas): DrawnImage {
  const layout = bandImageLayout(input);
  const name = input.volcano?.name ?? "Volcanic ash";
  const { ctx } = startImage(
    layout,
    input.type,
    `${name} · ${input.band.label} · ${formatInstant(input.time)}`,
    `${capitalised(input.quantity)}, model output for ${formatInstant(input.time)}   ·   Model run ${formatInstant(input.reftime)}`,
    { headline: 18, subline: 13 },
    reuse,
  );
  const { panel } = layout;
  const base = getBaseMap(input.box, panel.w, panel.h);
  const { missingShare } = input.band;
  const missing = missingShare === undefined ? undefined : noValueText(missingShare);
  drawPanel(ctx, panel, { base, label: input.band.label, areas: input.band.areas, thresholds: input.thresholds, type: input.type, volcano: input.volcano, labelSize: 16, missing });
  drawFooter(ctx, layout.width, panel.y + panel.h, layout.metrics, input.thresholds, input.quantity);
  return { ctx, width: layout.width, height: layout.height, keep: exactColours(base.colours, input.thresholds, input.type) };
}
