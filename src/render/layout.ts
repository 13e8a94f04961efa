/**
 * The frame around the map panels, shared by the run map and the band images: banner, title block,
 * legend and attribution. Heights are decided before drawing (text widths are measured on a scratch
 * canvas), so a layout function can tell tests and callers where each panel is.
 */
import { createCanvas, type Canvas, type SKRSContext2D } from "@napi-rs/canvas";
import type { LatLonBoxModel, RunType } from "../contract/ashModel.ts";
import { boxAspect } from "./basemap.ts";
import { drawAttribution, drawBanner, drawLegend, drawTypeBadge, textWidth, COLOURS, type Rect } from "./draw.ts";
import { font } from "./fonts.ts";
import { ATTRIBUTION, runTypeStyle } from "./style.ts";

let scratch: SKRSContext2D | undefined;
/** A 1×1 context for measuring text. */
export function measureContext(): SKRSContext2D {
  scratch ??= createCanvas(1, 1).getContext("2d");
  return scratch;
}

export interface FrameMetrics {
  bannerHeight: number;
  titleHeight: number;
  /** Legend and attribution on one line when they fit, else two. */
  footerHeight: number;
  footerTwoLines: boolean;
}

/** An image drawn and not yet encoded: its canvas, and the colours its PNG keeps exactly (src/render/png.ts). */
export interface DrawnImage {
  ctx: SKRSContext2D;
  width: number;
  height: number;
  keep: readonly number[];
}

export const LEGEND_SIZE = 13;
export const ATTRIBUTION_SIZE = 11;
const MARGIN = 12;

/** A legend's width without drawing it (same arithmetic as drawLegend). */
export function legendWidth(thresholds: readonly number[], quantity: string): number {
  return drawLegend(measureContext(), thresholds, quantity, 0, 0, LEGEND_SIZE);
}

/** Metrics already measured, by everything they depend on: a run's hundreds of band images share one. */
const measured = new Map<string, FrameMetrics>();

export function frameMetrics(type: RunType, width: number, thresholds: readonly number[], quantity: string, opts: { banner: number; title: number }): FrameMetrics {
  const key = `${type}|${width}|${thresholds.join(",")}|${quantity}|${opts.banner}|${opts.title}`;
  const known = measured.get(key);
  if (known) return known;
  const bannerHeight = runTypeStyle(type).banner ? opts.banner : 0;
  const attribution = textWidth(measureContext(), ATTRIBUTION, ATTRIBUTION_SIZE);
  const footerTwoLines = legendWidth(thresholds, quantity) + 24 + attribution > width - 2 * MARGIN;
  const metrics = Object.freeze({ bannerHeight, titleHeight: opts.title, footerHeight: footerTwoLines ? 56 : 38, footerTwoLines });
  if (measured.size >= 64) measured.clear();
  measured.set(key, metrics);
  return metrics;
}

/** Panel height for a box: its projected aspect, kept between `min` and `max` times the width. */
export function panelHeightFor(box: LatLonBoxModel, panelWidth: number, min: number, max: number): number {
  const aspect = Math.min(max, Math.max(min, boxAspect(box)));
  return Math.round(panelWidth * aspect);
}

/**
 * A white canvas of the layout's size with its header (banner, type badge, title, subline) drawn. On
 * `reuse`, when it has that size, after a reset of all its state: a thread drawing hundreds of maps saves
 * a 2 MB surface per map and the garbage collections they bring (renderBandImage passes it, and reads
 * the pixels before anything else draws). With `only`, only those rectangles of whole pixels are made white:
 * the rest of a reused canvas keeps what it had, for a caller that reads only them (renderBandImage).
 */
export function startImage(
  layout: { width: number; height: number; metrics: FrameMetrics },
  type: RunType,
  headline: string,
  subline: string,
  sizes: { headline: number; subline: number },
  reuse?: Canvas,
  only?: readonly Rect[],
): { canvas: Canvas; ctx: SKRSContext2D } {
  const fits = reuse !== undefined && reuse.width === layout.width && reuse.height === layout.height;
  const canvas = fits ? reuse : createCanvas(layout.width, layout.height);
  const ctx = canvas.getContext("2d");
  if (fits) ctx.reset();
  ctx.fillStyle = "#ffffff";
  if (only) for (const rect of only) ctx.fillRect(rect.x, rect.y, rect.w, rect.h);
  else ctx.fillRect(0, 0, layout.width, layout.height);
  // A banner outside every part read is not drawn.
  const banner = !only || only.some((rect) => rect.y < layout.metrics.bannerHeight);
  drawHeader(ctx, layout.width, layout.metrics, type, headline, subline, sizes, banner);
  return { canvas, ctx };
}

export function drawHeader(
  ctx: SKRSContext2D,
  width: number,
  metrics: FrameMetrics,
  type: RunType,
  headline: string,
  subline: string,
  sizes: { headline: number; subline: number },
  banner = true,
): void {
  if (banner) drawBanner(ctx, type, width, metrics.bannerHeight);
  const top = metrics.bannerHeight;
  const badgeH = Math.round(sizes.headline * 1.45);
  const line1 = top + 8 + badgeH / 2;
  const badgeW = drawTypeBadge(ctx, type, MARGIN, top + 8, badgeH, "left");
  ctx.font = font(sizes.headline, "bold");
  ctx.fillStyle = COLOURS.TEXT;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(fitText(ctx, headline, width - 2 * MARGIN - badgeW - 12), MARGIN + badgeW + 12, line1 + 1);
  ctx.font = font(sizes.subline);
  ctx.fillStyle = COLOURS.TEXT;
  ctx.fillText(fitText(ctx, subline, width - 2 * MARGIN), MARGIN, top + 8 + badgeH + 6 + sizes.subline * 0.7);
}

/** Shortens text with an ellipsis until it fits (in the context's current font). */
export function fitText(ctx: SKRSContext2D, text: string, maxWidth: number): string {
  if (ctx.measureText(text).width <= maxWidth) return text;
  let t = text;
  while (t.length > 1 && ctx.measureText(`${t}…`).width > maxWidth) t = t.slice(0, -1);
  return `${t.trimEnd()}…`;
}

/** Legend at the left and attribution at the right (or below when they do not fit on one line). */
export function drawFooter(ctx: SKRSContext2D, width: number, top: number, metrics: FrameMetrics, thresholds: readonly number[], quantity: string): void {
  const legendY = top + 19;
  drawLegend(ctx, thresholds, quantity, MARGIN, legendY, LEGEND_SIZE);
  drawAttribution(ctx, width - MARGIN, metrics.footerTwoLines ? legendY + 22 : legendY, ATTRIBUTION_SIZE);
}

export { MARGIN };
