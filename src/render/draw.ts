/**
 * Drawing pieces shared by the run map (three panels) and the band images (one panel): the ash areas,
 * the volcano marker, panel labels, the run-type banner and badges, the legend and the attribution.
 */
import { createCanvas, type SKRSContext2D } from "@napi-rs/canvas";
import { geoArea, geoPath, type GeoProjection } from "d3-geo";
import type { RunType } from "../contract/ashModel.ts";
import type { Polygon, Position, Ring, ThresholdBand } from "../geo/types.ts";
import { drawBaseMap, drawGraticuleLabels, type BaseMap } from "./basemap.ts";
import { font } from "./fonts.ts";
import { ashClasses, ASH_FILL_OPACITY, classWithLower, CONCENTRATION_UNITS, rgbOf } from "../contract/ashClasses.ts";
import { packedPixels, packHex } from "./palette.ts";
import { ATTRIBUTION, BASE_COLOURS, capitalised, legendEntries, noAshText, rgb, rgba, runTypeStyle, type RunTypeStyle } from "./style.ts";

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Volcano {
  name: string;
  lat: number;
  lon: number;
}

const TEXT = "#1d2630";
/** The volcano marker's fill, the VAAC charts' black triangle. */
export const VOLCANO_COLOUR = "#000000";
const MUTED = "#55606b";

/** A closed copy of a ring with at least 4 positions, or undefined. */
function closedRing(ring: Ring): Position[] | undefined {
  const points: Position[] = [];
  for (const p of ring) if (Number.isFinite(p[0]) && Number.isFinite(p[1])) points.push(p);
  if (points.length < 3) return undefined;
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const closed = first[0] === last[0] && first[1] === last[1] ? points : [...points, first];
  return closed.length >= 4 ? closed : undefined;
}

/**
 * d3-geo reads rings on the sphere: an exterior ring must be clockwise (seen from above, north up), or it
 * means "the whole globe except this". Our polygons follow KML (outer counter-clockwise), and contouring
 * may give either: each ring is oriented here by its spherical area, whatever it came with.
 */
function ringForD3(ring: Position[], exterior: boolean): Position[] {
  const area = geoArea({ type: "Polygon", coordinates: [ring] });
  const small = area <= 2 * Math.PI;
  return small === exterior ? ring : [...ring].reverse();
}

export function polygonsForD3(polygons: readonly Polygon[]): GeoJSON.MultiPolygon {
  const coordinates: Position[][][] = [];
  for (const polygon of polygons) {
    const outer = closedRing(polygon.outer);
    if (!outer) continue;
    const rings = [ringForD3(outer, true)];
    for (const hole of polygon.holes) {
      const h = closedRing(hole);
      if (h) rings.push(ringForD3(h, false));
    }
    coordinates.push(rings);
  }
  return { type: "MultiPolygon", coordinates };
}

/**
 * Ash areas ready to draw: per class present, lowest first, its colours and its polygons' rings in panel
 * coordinates (those crossing the projection's cut kept for d3-geo), and the part of the panel they can change.
 */
export interface ProjectedAreas {
  classes: Array<{ fill: string; outline: string; rings: Float64Array[]; acrossTheCut: Polygon[] }>;
  /** The panel's pixels they can change (outlines and anti-aliasing included), in whole pixels; "all" when d3-geo draws a polygon, undefined without ash. */
  extent: Rect | "all" | undefined;
}

/** Pixels beyond a ring's extreme points an area's drawing can reach: its outline's half width and anti-aliasing, with room to spare. */
const AREA_MARGIN = 3;

/**
 * Projects the threshold areas for drawAreas. Each position is projected and joined by straight lines:
 * contoured areas have no edge longer than 4 grid cells (src/geo/contourBands.ts), far below a pixel of
 * curvature. d3-geo's path (resampling, clipping, orientation by spherical area) cost a third of the drawing;
 * only a polygon that crosses the projection's cut, 180° from the map's centre (a map of the whole world), is
 * left to it, which cuts it there.
 */
export function projectAreas(projection: GeoProjection, areas: readonly ThresholdBand[], thresholds: readonly number[]): ProjectedAreas {
  const ashClassesOf = ashClasses(thresholds);
  const centre = -projection.rotate()[0];
  const projected: ProjectedAreas = { classes: [], extent: undefined };
  let left = Infinity;
  let right = -Infinity;
  let top = Infinity;
  let bottom = -Infinity;
  const ordered = [...areas].sort((a, b) => a.lower - b.lower);
  for (const band of ordered) {
    if (band.polygons.length === 0) continue;
    const ashClass = classWithLower(band.lower, ashClassesOf);
    const rings: Float64Array[] = [];
    const acrossTheCut: Polygon[] = [];
    for (const polygon of band.polygons) {
      const polygonRings = projectedRings(projection, centre, polygon);
      if (!polygonRings) {
        acrossTheCut.push(polygon);
        continue;
      }
      for (const ring of polygonRings) {
        rings.push(ring);
        for (let k = 0; k < ring.length; k += 2) {
          const x = ring[k]!;
          const y = ring[k + 1]!;
          if (x < left) left = x;
          if (x > right) right = x;
          if (y < top) top = y;
          if (y > bottom) bottom = y;
        }
      }
    }
    projected.classes.push({ fill: rgba(rgbOf(ashClass.colour), ASH_FILL_OPACITY), outline: ashClass.outline, rings, acrossTheCut });
    if (acrossTheCut.length > 0) projected.extent = "all";
  }
  if (projected.extent === undefined && top <= bottom) {
    const x = Math.floor(left) - AREA_MARGIN;
    const y = Math.floor(top) - AREA_MARGIN;
    projected.extent = { x, y, w: Math.ceil(right) + AREA_MARGIN + 1 - x, h: Math.ceil(bottom) + AREA_MARGIN + 1 - y };
  }
  return projected;
}

/** Fills the projected areas, lowest class first, in their class colours (src/contract/ashClasses.ts), each outlined; the even-odd fill needs no orientation. */
export function drawAreas(ctx: SKRSContext2D, projection: GeoProjection, projected: ProjectedAreas): void {
  let path: ReturnType<typeof geoPath> | undefined;
  for (const ashClass of projected.classes) {
    ctx.beginPath();
    for (const ring of ashClass.rings) {
      ctx.moveTo(ring[0]!, ring[1]!);
      for (let k = 2; k < ring.length; k += 2) ctx.lineTo(ring[k]!, ring[k + 1]!);
      ctx.closePath();
    }
    if (ashClass.acrossTheCut.length > 0) {
      path ??= geoPath(projection, ctx);
      path(polygonsForD3(ashClass.acrossTheCut));
    }
    ctx.fillStyle = ashClass.fill;
    ctx.fill("evenodd");
    ctx.strokeStyle = ashClass.outline;
    ctx.lineWidth = 1;
    ctx.lineJoin = "round";
    ctx.stroke();
  }
}

/**
 * A polygon's rings as panel coordinates (x, y pairs), or undefined when a ring crosses the projection's cut
 * (two positions more than 180° apart around the map's centre) or a position does not project to a finite point.
 */
function projectedRings(projection: GeoProjection, centre: number, polygon: Polygon): Float64Array[] | undefined {
  const out: Float64Array[] = [];
  // Holes without their outer ring would be filled by the even-odd rule: a polygon without one is not drawn.
  if (polygon.outer.length < 3) return out;
  for (const ring of [polygon.outer, ...polygon.holes]) {
    if (ring.length < 3) continue;
    const xy = new Float64Array(ring.length * 2);
    let previous = Number.NaN;
    for (let k = 0; k < ring.length; k++) {
      const [lon, lat] = ring[k]!;
      const around = ((((lon - centre + 180) % 360) + 360) % 360) - 180;
      if (Math.abs(around - previous) > 180) return undefined;
      previous = around;
      const p = projection([lon, lat]);
      if (!p || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) return undefined;
      xy[k * 2] = p[0];
      xy[k * 2 + 1] = p[1];
    }
    out.push(inOneTurn(xy));
  }
  return out;
}

/** Pairs of a ring turned one way round on the screen: the same area drawn either way gives the same pixels. */
function inOneTurn(xy: Float64Array): Float64Array {
  let twiceArea = 0;
  for (let k = 0; k + 3 < xy.length; k += 2) twiceArea += xy[k]! * xy[k + 3]! - xy[k + 2]! * xy[k + 1]!;
  if (twiceArea >= 0) return xy;
  const reversed = new Float64Array(xy.length);
  for (let k = 0; k < xy.length; k += 2) {
    reversed[k] = xy[xy.length - 2 - k]!;
    reversed[k + 1] = xy[xy.length - 1 - k]!;
  }
  return reversed;
}

/**
 * The colours an image must keep exactly through quantisation (src/render/png.ts): the base map's own, and
 * each ash class as drawn: its outline, and its fill over white (the legend) and over every base map colour,
 * blended by the same drawing code as the map (Skia's rounding, not ours). For a run type with a watermark,
 * also the base map under the watermark's fill and each class over that: a run's shared palette is chosen
 * from a few of its images, which may have no ash where the watermark is.
 */
export function exactColours(baseColours: Uint32Array, thresholds: readonly number[], type: RunType): readonly number[] {
  // Every image of a base map asks (it draws blends on a canvas of its own): made once per base map, type and thresholds.
  let known = exactColoursOf.get(baseColours);
  if (known === undefined) exactColoursOf.set(baseColours, (known = new Map()));
  const key = `${type}|${thresholds.join(",")}`;
  let colours = known.get(key);
  if (colours === undefined) known.set(key, (colours = Object.freeze(blendedColours(baseColours, thresholds, type))));
  return colours;
}
const exactColoursOf = new WeakMap<Uint32Array, Map<string, readonly number[]>>();

function blendedColours(baseColours: Uint32Array, thresholds: readonly number[], type: RunType): number[] {
  const classes = ashClasses(thresholds);
  const style = runTypeStyle(type);
  const watermarked = style.banner ? fillOver(baseColours, [watermarkFill(style)])[0]! : new Uint32Array(0);
  const under = [packHex("#ffffff"), ...baseColours, ...watermarked];
  const blended = fillOver(new Uint32Array(under), classes.map((ashClass) => rgba(rgbOf(ashClass.colour), ASH_FILL_OPACITY)));
  return [...baseColours, ...watermarked, ...blended.flatMap((row) => [...row]), ...classes.map((c) => packHex(c.outline)), packHex(VOLCANO_COLOUR)];
}

/** Each fill drawn over every colour of `under`, by Skia as the map draws it: one row of results per fill. */
function fillOver(under: Uint32Array, fills: readonly string[]): Uint32Array[] {
  const ctx = createCanvas(under.length, fills.length).getContext("2d");
  fills.forEach((fill, row) => {
    const line = ctx.createImageData(under.length, 1);
    packedPixels(line.data).set(under);
    ctx.putImageData(line, 0, row);
    ctx.fillStyle = fill;
    ctx.fillRect(0, row, under.length, 1);
  });
  const pixels = packedPixels(ctx.getImageData(0, 0, under.length, fills.length).data);
  return fills.map((_, row) => pixels.slice(row * under.length, (row + 1) * under.length));
}

const watermarkFill = (style: RunTypeStyle): string => rgba(style.colour, 0.16);

/** Text with a white halo, readable over land, sea and ash. */
export function haloText(ctx: SKRSContext2D, text: string, x: number, y: number, fill = TEXT, halo = 3): void {
  ctx.lineWidth = halo;
  ctx.lineJoin = "round";
  ctx.strokeStyle = "rgba(255, 255, 255, 0.92)";
  ctx.strokeText(text, x, y);
  ctx.fillStyle = fill;
  ctx.fillText(text, x, y);
}

/** The volcano: a black triangle (no ash class is black) and its name (to the right, or to the left near the panel's right edge). */
export function drawVolcano(ctx: SKRSContext2D, projection: GeoProjection, volcano: Volcano, panel: Rect, size = 8): [number, number] | undefined {
  const p = projection([volcano.lon, volcano.lat]);
  if (!p || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) return undefined;
  const [x, y] = p;
  if (x < 0 || y < 0 || x > panel.w || y > panel.h) return undefined;
  const h = size * 1.6;
  ctx.beginPath();
  ctx.moveTo(x, y - h * 0.62);
  ctx.lineTo(x + size, y + h * 0.38);
  ctx.lineTo(x - size, y + h * 0.38);
  ctx.closePath();
  ctx.lineJoin = "round";
  ctx.lineWidth = 3.5;
  ctx.strokeStyle = "#ffffff";
  ctx.stroke();
  ctx.fillStyle = VOLCANO_COLOUR;
  ctx.fill();

  ctx.font = font(12, "bold");
  ctx.textBaseline = "middle";
  const width = ctx.measureText(volcano.name).width;
  const right = x + size + 5 + width < panel.w - 4;
  ctx.textAlign = right ? "left" : "right";
  haloText(ctx, volcano.name, right ? x + size + 5 : x - size - 5, y, TEXT, 3.5);
  return [x, y];
}

/** A filled rounded rectangle. */
function roundRect(ctx: SKRSContext2D, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

/** The band label ("SFC/FL200") in a white box at the panel's top left. */
export function drawPanelLabel(ctx: SKRSContext2D, text: string, sizePx = 15): void {
  ctx.font = font(sizePx, "bold");
  const w = ctx.measureText(text).width + 16;
  const h = sizePx + 12;
  roundRect(ctx, 6, 6, w, h, 4);
  ctx.fillStyle = "rgba(255, 255, 255, 0.92)";
  ctx.fill();
  ctx.strokeStyle = BASE_COLOURS.frame;
  ctx.lineWidth = 1;
  ctx.stroke();
  ctx.fillStyle = TEXT;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(text, 14, 6 + h / 2 + 0.5);
}

/**
 * A note across the middle of a panel without ash, in the half away from the volcano: "No ash above 0.2 mg/m³",
 * and the share of the grid the model gave no value (src/contract/missingValues.ts) where it has some; the first
 * line bold, smaller where the panel is too narrow for the widest line.
 */
export function drawPanelNote(ctx: SKRSContext2D, panel: Rect, lines: ReadonlyArray<{ text: string; bold: boolean }>, volcanoAt?: [number, number], sizePx = 14): void {
  if (lines.length === 0) return;
  const widest = (size: number) => Math.max(...lines.map((line) => textWidth(ctx, line.text, size, line.bold ? "bold" : "normal")));
  const size = fittingSize(widest, sizePx, panel.w - 32);
  const lineHeight = Math.round(size * 1.35);
  const w = Math.min(panel.w - 8, widest(size) + 24);
  const h = lineHeight * lines.length + 16 - (lineHeight - size);
  const x = Math.round((panel.w - w) / 2);
  const centre = volcanoAt === undefined ? 0.5 : volcanoAt[1] < panel.h / 2 ? 0.72 : 0.28;
  const y = Math.round(panel.h * centre - h / 2);
  roundRect(ctx, x, y, w, h, 5);
  ctx.fillStyle = "rgba(255, 255, 255, 0.9)";
  ctx.fill();
  ctx.strokeStyle = "#8a96a3";
  ctx.lineWidth = 1;
  ctx.stroke();
  ctx.fillStyle = MUTED;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  lines.forEach((line, i) => {
    ctx.font = font(size, line.bold ? "bold" : "normal");
    ctx.fillText(line.text, panel.w / 2, y + 8 + size / 2 + i * lineHeight + 0.5);
  });
}

/** The largest font size from `sizePx` down to 9 px at which `widthAt` fits `room`. */
function fittingSize(widthAt: (size: number) => number, sizePx: number, room: number): number {
  let size = sizePx;
  while (size > 9 && widthAt(size) > room) size--;
  return size;
}

/** What the note of a panel without ash says: "No ash above ...", and the model's missing values where it has some. */
export function noAshNoteLines(thresholds: readonly number[], missing: string | undefined): Array<{ text: string; bold: boolean }> {
  const lines = [{ text: noAshText(thresholds), bold: true }];
  if (missing !== undefined) lines.push({ text: missing, bold: false });
  return lines;
}

/**
 * The model's missing values in a panel with ash: haloed text under the band label, not a box, so that no ash
 * is hidden under it; smaller where the panel is too narrow for it.
 */
function drawMissingNote(ctx: SKRSContext2D, panel: Rect, text: string, labelSize: number): void {
  const size = fittingSize((candidate) => textWidth(ctx, text, candidate, MISSING_NOTE.weight), MISSING_NOTE.size, panel.w - 20);
  ctx.font = font(size, MISSING_NOTE.weight);
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  haloText(ctx, text, 10, MISSING_NOTE.top + labelSize + size / 2, MUTED, MISSING_NOTE.halo);
}
const MISSING_NOTE = { size: 13, weight: "bold", top: 6 + 12 + 6, halo: 3.5 } as const;

/** The part of a panel `width` wide that the missing-values note of a panel with ash can change: its line at the largest size, halo and all, across the panel. */
export function missingNoteExtent(width: number, labelSize: number): Rect {
  const reach = MISSING_NOTE.size + MISSING_NOTE.halo;
  const y = Math.floor(MISSING_NOTE.top + labelSize - reach);
  return { x: 0, y, w: width, h: Math.ceil(MISSING_NOTE.top + labelSize + MISSING_NOTE.size + reach) + 1 - y };
}

/** The run type written big and diagonally across a panel, semi-transparent (Exercise and Rehearsal only). */
export function drawWatermark(ctx: SKRSContext2D, panel: Rect, type: RunType): void {
  const style = runTypeStyle(type);
  if (!style.banner) return;
  ctx.save();
  const diagonal = Math.hypot(panel.w, panel.h);
  const size = Math.max(18, Math.min(96, Math.round((diagonal * 0.62) / (style.word.length * 0.68))));
  ctx.translate(panel.w / 2, panel.h / 2);
  ctx.rotate(-Math.atan2(panel.h, panel.w));
  ctx.font = font(size, "bold");
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.lineWidth = 2;
  ctx.strokeStyle = rgba(style.colour, 0.45);
  ctx.strokeText(style.word, 0, 0);
  ctx.fillStyle = watermarkFill(style);
  ctx.fillText(style.word, 0, 0);
  ctx.restore();
}

export interface PanelContent {
  base: BaseMap;
  label: string;
  /** The ash areas, projected with the base map's projection (projectAreas). */
  areas: ProjectedAreas;
  thresholds: readonly number[];
  type: RunType;
  volcano?: Volcano | undefined;
  labelSize?: number;
  /** Where the model gave no value in some cells: what the panel says of them (src/contract/missingValues.ts). */
  missing?: string | undefined;
  /** Leaves out the note of a panel without ash: the background that band images are composed on has none (src/render/bandImage.ts). */
  withoutNote?: boolean | undefined;
  /** Copy the base map only into these rectangles of the image (whole pixels): the rest is not read (startImage). */
  baseOnly?: readonly Rect[] | undefined;
}

/** One map panel at `panel`: base map, ash, watermark, volcano, graticule labels, band label, frame. */
export function drawPanel(ctx: SKRSContext2D, panel: Rect, content: PanelContent): void {
  ctx.save();
  ctx.translate(panel.x, panel.y);
  ctx.beginPath();
  ctx.rect(0, 0, panel.w, panel.h);
  ctx.clip();
  if (content.baseOnly) drawBaseMapParts(ctx, content.base, panel, content.baseOnly);
  else drawBaseMap(ctx, content.base, 0, 0);
  // The watermark goes under the ash, so ash colours stay true where they cover it.
  drawWatermark(ctx, panel, content.type);
  const hasAsh = content.areas.classes.length > 0;
  if (hasAsh) drawAreas(ctx, content.base.projection, content.areas);
  drawGraticuleLabels(ctx, content.base, 0, 0);
  const volcanoAt = content.volcano ? drawVolcano(ctx, content.base.projection, content.volcano, panel) : undefined;
  if (!hasAsh && !content.withoutNote) drawPanelNote(ctx, panel, noAshNoteLines(content.thresholds, content.missing), volcanoAt);
  drawPanelLabel(ctx, content.label, content.labelSize);
  if (hasAsh && content.missing !== undefined) drawMissingNote(ctx, panel, content.missing, content.labelSize ?? 15);
  ctx.restore();
  ctx.strokeStyle = BASE_COLOURS.frame;
  ctx.lineWidth = 1;
  ctx.strokeRect(panel.x + 0.5, panel.y + 0.5, panel.w - 1, panel.h - 1);
}

/** The parts of the base map inside `rects` (image coordinates) into a panel at `panel` whose origin is the context's: a copy of whole pixels, the same as that part of drawBaseMap. */
function drawBaseMapParts(ctx: SKRSContext2D, base: BaseMap, panel: Rect, rects: readonly Rect[]): void {
  for (const rect of rects) {
    const x = Math.max(0, rect.x - panel.x);
    const y = Math.max(0, rect.y - panel.y);
    const w = Math.min(base.width, rect.x + rect.w - panel.x) - x;
    const h = Math.min(base.height, rect.y + rect.h - panel.y) - y;
    if (w > 0 && h > 0) ctx.drawImage(base.canvas, x, y, w, h, x, y, w, h);
  }
}

/** The full-width banner of an Exercise or Rehearsal, in the type's strong colour. */
export function drawBanner(ctx: SKRSContext2D, type: RunType, width: number, height: number): void {
  const style = runTypeStyle(type);
  if (!style.banner) return;
  ctx.fillStyle = rgb(style.colour);
  ctx.fillRect(0, 0, width, height);
  // Hazard stripes at both ends.
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, 0, width, height);
  ctx.clip();
  ctx.fillStyle = "rgba(255, 255, 255, 0.22)";
  const stripe = Math.max(8, Math.round(height / 3));
  for (const [from, to] of [
    [0, height * 1.6],
    [width - height * 1.6, width],
  ] as const) {
    for (let x = from - height; x < to; x += stripe * 2) {
      ctx.beginPath();
      ctx.moveTo(x, height);
      ctx.lineTo(x + stripe, height);
      ctx.lineTo(x + stripe + height, 0);
      ctx.lineTo(x + height, 0);
      ctx.closePath();
      ctx.fill();
    }
  }
  ctx.restore();
  const size = Math.round(height * 0.55);
  ctx.font = font(size, "bold");
  ctx.fillStyle = "#ffffff";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  let text = style.bannerText;
  if (ctx.measureText(text).width > width - height * 3.4) text = `${style.word} · NOT A REAL ERUPTION`;
  if (ctx.measureText(text).width > width - height * 3.4) text = style.word;
  ctx.fillText(text, width / 2, height / 2 + 1);
}

/** A badge with the run type (white on the type's colour); returns its width. `align` is the side x refers to. */
export function drawTypeBadge(ctx: SKRSContext2D, type: RunType, x: number, y: number, height: number, align: "left" | "right"): number {
  const style = runTypeStyle(type);
  const size = Math.round(height * 0.56);
  ctx.font = font(size, "bold");
  const w = Math.ceil(ctx.measureText(style.word).width) + Math.round(height * 0.7);
  const left = align === "left" ? x : x - w;
  roundRect(ctx, left, y, w, height, 4);
  ctx.fillStyle = rgb(style.colour);
  ctx.fill();
  ctx.fillStyle = "#ffffff";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(style.word, left + w / 2, y + height / 2 + 1);
  return w;
}

/**
 * The legend: what the field is ("Maximum of 6-hour mean ash concentration (mg/m³)") and one swatch per
 * class with its range and name, from x at the text middle line y. A swatch is the class's fill over white,
 * as on the map, inside its outline. Returns the x after the last entry.
 */
export function drawLegend(ctx: SKRSContext2D, thresholds: readonly number[], quantity: string, x: number, y: number, sizePx = 13): number {
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  ctx.font = font(sizePx, "bold");
  ctx.fillStyle = TEXT;
  const title = `${capitalised(quantity)} (${CONCENTRATION_UNITS})`;
  ctx.fillText(title, x, y);
  let cx = x + ctx.measureText(title).width + 14;
  const sw = Math.round(sizePx * 1.7);
  const sh = Math.round(sizePx * 1.05);
  for (const { ashClass, range } of legendEntries(thresholds)) {
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(cx, y - sh / 2, sw, sh);
    ctx.fillStyle = rgba(rgbOf(ashClass.colour), ASH_FILL_OPACITY);
    ctx.fillRect(cx, y - sh / 2, sw, sh);
    ctx.strokeStyle = ashClass.outline;
    ctx.lineWidth = 1;
    ctx.strokeRect(cx + 0.5, y - sh / 2 + 0.5, sw - 1, sh - 1);
    cx += sw + 6;
    ctx.font = font(sizePx, "bold");
    ctx.fillStyle = TEXT;
    ctx.fillText(range, cx, y);
    cx += ctx.measureText(range).width;
    ctx.font = font(sizePx);
    ctx.fillStyle = MUTED;
    const name = ` ${ashClass.name}`;
    ctx.fillText(name, cx, y);
    cx += ctx.measureText(name).width;
    cx += 16;
  }
  return cx;
}

/** The attribution line, right-aligned at (x, y). */
export function drawAttribution(ctx: SKRSContext2D, x: number, y: number, sizePx = 11): void {
  ctx.font = font(sizePx);
  ctx.fillStyle = MUTED;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  ctx.fillText(ATTRIBUTION, x, y);
}

/** Width of `text` in a font (for layout decisions). */
export function textWidth(ctx: SKRSContext2D, text: string, sizePx: number, weight: "normal" | "bold" = "normal"): number {
  ctx.font = font(sizePx, weight);
  return ctx.measureText(text).width;
}

export const COLOURS = { TEXT, MUTED };
