/**
 * The base map of a panel: Natural Earth land, coastlines and country borders (world-atlas TopoJSON,
 * public domain), a graticule and its labels, projected with d3-geo into a panel fitted to a lon/lat box.
 *
 * Projection: Lambert conformal conic, rotated so the central meridian is the middle of the box (so a
 * box crossing the antimeridian is drawn in one piece: the projection's cut is on the far side of the
 * globe), standard parallels at 1/6 and 5/6 of the box's latitude range (the classic choice; it is
 * conformal, good at high latitudes, and turns into Mercator for a box centred on the equator).
 *
 * Projecting 50m coastlines costs a few hundred milliseconds, and a run has hundreds of images of the
 * same extent: a base map is drawn once per (box, size) into an offscreen canvas, kept in a small
 * cache, and copied into every image.
 */
import { readFileSync } from "node:fs";
import { createCanvas, Path2D, type Canvas, type SKRSContext2D } from "@napi-rs/canvas";
import { geoConicConformal, geoGraticule, geoPath, type GeoProjection } from "d3-geo";
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { inSharedMemory } from "../flow/sharedMemory.ts";
import { font } from "./fonts.ts";
import { decodeNaturalEarth, type NaturalEarth, type Piece } from "./naturalEarthData.ts";
import { packHex, quantise } from "./palette.ts";
import { BASE_COLOURS } from "./style.ts";

export type Resolution = "50m" | "110m";

/** A box as a span: `west` plus `lonSpan` degrees eastwards (so east < west, across the antimeridian, works). */
export interface BoxSpan {
  west: number;
  lonSpan: number;
  south: number;
  north: number;
  centreLon: number;
  centreLat: number;
}

/** Normalises a box: longitudes eastwards from west (crossing the antimeridian when east < west), at least 1°×1°. */
export function boxSpan(box: LatLonBoxModel): BoxSpan {
  let lonSpan = box.east - box.west;
  if (lonSpan <= 0) lonSpan += 360;
  let west = box.west;
  if (lonSpan < 1) {
    west -= (1 - lonSpan) / 2;
    lonSpan = 1;
  }
  let south = Math.max(-89.5, Math.min(box.south, box.north));
  let north = Math.min(89.5, Math.max(box.south, box.north));
  if (north - south < 1) {
    const mid = (north + south) / 2;
    south = Math.max(-89.5, mid - 0.5);
    north = Math.min(89.5, mid + 0.5);
  }
  return { west, lonSpan, south, north, centreLon: normaliseLon(west + lonSpan / 2), centreLat: (south + north) / 2 };
}

export const normaliseLon = (lon: number): number => {
  const l = ((((lon + 180) % 360) + 360) % 360) - 180;
  return l === -180 && lon > 0 ? 180 : l;
};

/** Points along the edge of the box (for fitting: points have no winding order to get wrong). */
function boxOutline(span: BoxSpan): GeoJSON.MultiPoint {
  const points: Array<[number, number]> = [];
  const n = 48;
  for (let i = 0; i <= n; i++) {
    const lon = span.west + (span.lonSpan * i) / n;
    points.push([lon, span.south], [lon, span.north]);
  }
  for (let i = 1; i < n; i++) {
    const lat = span.south + ((span.north - span.south) * i) / n;
    points.push([span.west, lat], [span.west + span.lonSpan, lat]);
  }
  return { type: "MultiPoint", coordinates: points };
}

/** The unfitted projection of a box: conformal conic centred on it. */
function boxProjection(span: BoxSpan): GeoProjection {
  const latRange = span.north - span.south;
  const p1 = span.south + latRange / 6;
  const p2 = span.north - latRange / 6;
  return geoConicConformal().rotate([-span.centreLon, 0]).parallels([p1, p2]).precision(0.5);
}

/** Aspects worked out, by box: each of a run's hundreds of band images asks for its box's (~0.15 ms of projecting). */
const aspects = new Map<string, number>();

/** Height / width of the box once projected: panels are sized from it. */
export function boxAspect(box: LatLonBoxModel): number {
  const key = boxKey(box);
  let aspect = aspects.get(key);
  if (aspect === undefined) {
    aspect = projectedAspect(box);
    if (aspects.size >= CACHE_LIMIT) aspects.clear();
    aspects.set(key, aspect);
  }
  return aspect;
}

function projectedAspect(box: LatLonBoxModel): number {
  const span = boxSpan(box);
  const projection = boxProjection(span);
  const [[x0, y0], [x1, y1]] = geoPath(projection).bounds(boxOutline(span));
  const w = x1 - x0;
  const h = y1 - y0;
  return w > 0 && h > 0 && Number.isFinite(w / h) ? h / w : 1;
}

/** The projection of a box fitted into a `width`×`height` panel (pixel origin at the panel's top left), clipped to it. */
export function panelProjection(box: LatLonBoxModel, width: number, height: number, padding = 4): GeoProjection {
  const span = boxSpan(box);
  const projection = boxProjection(span);
  projection.fitExtent(
    [
      [padding, padding],
      [width - padding, height - padding],
    ],
    boxOutline(span),
  );
  return projection.clipExtent([
    [0, 0],
    [width, height],
  ]);
}

/** 50m Natural Earth for regional maps; 110m when the box is very large (continents and more). */
export function resolutionFor(box: LatLonBoxModel): Resolution {
  const span = boxSpan(box);
  const midLat = (span.centreLat * Math.PI) / 180;
  const widthDeg = span.lonSpan * Math.max(0.2, Math.cos(midLat));
  return widthDeg > 75 || span.north - span.south > 55 ? "110m" : "50m";
}

/**
 * Natural Earth land polygons and country borders at a resolution (src/render/naturalEarthData.ts), read anew
 * for each base map drawn (under a millisecond; a piece's GeoJSON is made only when the map shows it). Not
 * kept: its small arrays made every full garbage collection of a thread that draws hundreds of maps mark
 * them again, a fifth of the CPU of a band image.
 */
export function naturalEarth(resolution: Resolution): NaturalEarth {
  return decodeNaturalEarth(readFileSync(new URL(`./natural-earth-${resolution}.bin`, import.meta.url)));
}

/** What a panel shows, in lon/lat: latitudes, and longitudes relative to the box's centre (may pass ±180). */
interface VisibleRegion {
  south: number;
  north: number;
  /** Relative to `centreLon`, within [-180, 180]. */
  relWest: number;
  relEast: number;
  centreLon: number;
}

/** The region of the globe inside a panel: the panel's edges inverted through the projection, plus a margin. */
function visibleRegion(projection: GeoProjection, span: BoxSpan, width: number, height: number): VisibleRegion {
  let south = Infinity;
  let north = -Infinity;
  let relWest = Infinity;
  let relEast = -Infinity;
  const add = (x: number, y: number): void => {
    const p = projection.invert?.([x, y]);
    if (!p || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) return;
    const rel = normaliseLon(p[0] - span.centreLon);
    south = Math.min(south, p[1]);
    north = Math.max(north, p[1]);
    relWest = Math.min(relWest, rel);
    relEast = Math.max(relEast, rel);
  };
  const step = 4;
  for (let x = 0; x <= width; x += step) {
    add(x, 0);
    add(x, height);
  }
  for (let y = 0; y <= height; y += step) {
    add(0, y);
    add(width, y);
  }
  const inside = (lat: number): boolean => {
    const p = projection([span.centreLon, lat]);
    return !!p && p[0] >= 0 && p[0] <= width && p[1] >= 0 && p[1] <= height;
  };
  const margin = 2;
  const region = { south: south - margin, north: north + margin, relWest: relWest - margin * 2, relEast: relEast + margin * 2, centreLon: span.centreLon };
  if (inside(90) || inside(-90) || !(relEast - relWest < 300)) {
    region.relWest = -180;
    region.relEast = 180;
    if (inside(90)) region.north = 90;
    if (inside(-90)) region.south = -90;
  }
  return region;
}

function intersects(piece: Piece<unknown>, region: VisibleRegion): boolean {
  if (piece.north < region.south || piece.south > region.north) return false;
  if (region.relEast - region.relWest >= 360) return true;
  const west = region.centreLon + region.relWest;
  const east = region.centreLon + region.relEast;
  for (const shift of [-360, 0, 360]) if (piece.west + shift <= east && piece.east + shift >= west) return true;
  return false;
}

/** A graticule label, drawn over the data by the image (so ash never hides it). */
export interface GraticuleLabel {
  text: string;
  x: number;
  y: number;
  align: "left" | "center" | "right";
  baseline: "top" | "middle" | "bottom";
}

export interface BaseMap {
  width: number;
  height: number;
  resolution: Resolution;
  /** Fitted to the panel; shared by every image that uses this base map: do not change it. */
  projection: GeoProjection;
  /** Sea, land, graticule, borders and coastlines, `width`×`height`, in the colours of `colours` only. */
  canvas: Canvas;
  /** The base map's palette (packed RGBA, src/render/palette.ts): sea and land, then line and edge shades. */
  colours: Uint32Array;
  labels: GraticuleLabel[];
  lonStep: number;
  latStep: number;
}

function gridSteps(span: BoxSpan): { lonStep: number; latStep: number } {
  const latRange = span.north - span.south;
  const width = span.lonSpan * Math.max(0.2, Math.cos((span.centreLat * Math.PI) / 180));
  const pick = (range: number): number => (range <= 12 ? 2 : range <= 30 ? 5 : range <= 70 ? 10 : range <= 140 ? 20 : 30);
  const latStep = pick(latRange);
  // Meridians converge at high latitudes: space them by their true width on the ground, in 5° multiples.
  const lonStep = Math.max(latStep, pick(width));
  return { lonStep: lonStep === 2 ? 2 : lonStep, latStep };
}

export const formatLon = (lon: number): string => {
  const l = normaliseLon(Math.round(lon * 1000) / 1000);
  if (l === 0) return "0°";
  if (Math.abs(l) === 180) return "180°";
  return l < 0 ? `${-l}°W` : `${l}°E`;
};
export const formatLat = (lat: number): string => (lat === 0 ? "0°" : lat < 0 ? `${-lat}°S` : `${lat}°N`);

/**
 * Where grid lines cross the panel edges: meridians on the bottom edge, parallels on the left edge;
 * found by inverting the projection along each edge.
 */
function graticuleLabels(projection: GeoProjection, span: BoxSpan, width: number, height: number, lonStep: number, latStep: number): GraticuleLabel[] {
  const labels: GraticuleLabel[] = [];
  const corner = 22;
  const unwrap = (lon: number): number => span.centreLon + normaliseLon(lon - span.centreLon);
  const scan = (
    edge: (t: number) => [number, number],
    length: number,
    value: (lonLat: [number, number]) => number,
    step: number,
    make: (v: number, t: number) => GraticuleLabel,
  ): void => {
    let prev: { t: number; v: number } | undefined;
    let lastT = -Infinity;
    for (let t = 0; t <= length; t += 1) {
      const inv = projection.invert?.(edge(t));
      if (!inv || !Number.isFinite(inv[0]) || !Number.isFinite(inv[1])) {
        prev = undefined;
        continue;
      }
      const v = value(inv as [number, number]);
      if (prev && Math.abs(v - prev.v) < 90) {
        const lo = Math.min(prev.v, v);
        const hi = Math.max(prev.v, v);
        const k = Math.ceil(lo / step);
        const line = k * step;
        if (line <= hi && line > lo - 1e-9 && hi > lo) {
          const at = prev.t + ((line - prev.v) / (v - prev.v)) * (t - prev.t);
          if (at > corner && at < length - corner && at - lastT > 40) {
            labels.push(make(line, at));
            lastT = at;
          }
        }
      }
      prev = { t, v };
    }
  };
  // Meridians on the bottom edge (they cross it whatever the hemisphere), parallels on the left edge
  // below the band label that panels carry in their top left corner.
  scan(
    (t) => [t, height - 1],
    width,
    ([lon]) => unwrap(lon),
    lonStep,
    (v, t) => ({ text: formatLon(v), x: Math.round(t), y: height - 3, align: "center", baseline: "bottom" }),
  );
  scan(
    (t) => [1, t],
    height,
    ([, lat]) => lat,
    latStep,
    (v, t) => ({ text: formatLat(Math.round(v * 1000) / 1000), x: 4, y: Math.round(t), align: "left", baseline: "middle" }),
  );
  return labels.filter((l) => !(l.align === "left" && l.y < TOP_LEFT_RESERVED));
}

/** Height of the top left corner kept free of graticule labels (panels put the band label there). */
const TOP_LEFT_RESERVED = 48;


function drawBase(box: LatLonBoxModel, width: number, height: number, resolution: Resolution): BaseMap {
  const span = boxSpan(box);
  const projection = panelProjection(box, width, height);
  const { lonStep, latStep } = gridSteps(span);
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext("2d");
  const path = geoPath(projection, ctx);
  const data = naturalEarth(resolution);
  const region = visibleRegion(projection, span, width, height);

  ctx.fillStyle = BASE_COLOURS.sea;
  ctx.fillRect(0, 0, width, height);

  // Land is projected once into a Path2D, then filled and (after the graticule and borders) stroked.
  const land = new Path2D();
  const landPath = geoPath(projection, {
    beginPath: () => {},
    moveTo: (x, y) => land.moveTo(x, y),
    lineTo: (x, y) => land.lineTo(x, y),
    closePath: () => land.closePath(),
    arc: (x, y, r, a0, a1, ccw) => land.arc(x, y, r, a0, a1, ccw),
  });
  for (const p of data.land) if (intersects(p, region)) landPath(p.geometry());
  ctx.fillStyle = BASE_COLOURS.land;
  ctx.fill(land);

  const graticule = geoGraticule()
    .step([lonStep, latStep])
    .extentMinor([
      [region.centreLon + region.relWest, Math.max(-89.999, region.south)],
      [region.centreLon + region.relEast, Math.min(89.999, region.north)],
    ])
    .extentMajor([
      [region.centreLon + region.relWest, Math.max(-89.999, region.south)],
      [region.centreLon + region.relEast, Math.min(89.999, region.north)],
    ])
    .precision(1);
  ctx.beginPath();
  path(graticule());
  ctx.strokeStyle = BASE_COLOURS.graticule;
  ctx.lineWidth = 0.7;
  ctx.stroke();

  ctx.beginPath();
  for (const b of data.borders) if (intersects(b, region)) path(b.geometry());
  ctx.strokeStyle = BASE_COLOURS.border;
  ctx.lineWidth = 0.7;
  ctx.stroke();

  ctx.strokeStyle = BASE_COLOURS.coast;
  ctx.lineWidth = 0.8;
  ctx.lineJoin = "round";
  ctx.stroke(land);

  const colours = reduceColours(ctx, width, height);
  const labels = graticuleLabels(projection, span, width, height, lonStep, latStep);
  return { width, height, resolution, projection, canvas, colours, labels, lonStep, latStep };
}

/**
 * How many colours a base map keeps. Its anti-aliased coastlines, borders and graticule give thousands of
 * shades, and they are what the PNGs spend their bytes on: 12 colours (sea, land and ten line shades,
 * chosen by median cut and k-means) make the band images 17 % smaller, with a mean change of 0.4 of 255
 * per channel where no one sees it (docs/decisions.md, docs/benchmarks.md).
 */
export const BASE_MAP_COLOURS = 12;

/** Redraws the canvas in at most BASE_MAP_COLOURS colours, sea and land exact; returns them. */
function reduceColours(ctx: SKRSContext2D, width: number, height: number): Uint32Array {
  const image = ctx.getImageData(0, 0, width, height);
  const reduced = quantise(image.data, width, height, { maxColours: BASE_MAP_COLOURS, keep: [packHex(BASE_COLOURS.sea), packHex(BASE_COLOURS.land)], refine: 6 });
  const pixels = new Uint32Array(image.data.buffer, image.data.byteOffset, width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = reduced.colours[reduced.indices[i]!]!;
  ctx.putImageData(image, 0, 0);
  return reduced.colours;
}

const CACHE_LIMIT = 16;
const baseCache = new Map<string, BaseMap>();

const boxKey = (box: LatLonBoxModel): string => `${box.west},${box.south},${box.east},${box.north}`;
const cacheKey = (box: LatLonBoxModel, width: number, height: number, resolution: Resolution): string => `${boxKey(box)}|${width}x${height}|${resolution}`;

/** The base map of a box at a panel size: drawn on first use (or installed from one offered), then served from a small LRU cache. */
export function getBaseMap(box: LatLonBoxModel, width: number, height: number): BaseMap {
  const w = Math.max(16, Math.round(width));
  const h = Math.max(16, Math.round(height));
  const resolution = resolutionFor(box);
  const key = cacheKey(box, w, h, resolution);
  const hit = baseCache.get(key);
  if (hit) {
    baseCache.delete(key);
    baseCache.set(key, hit);
    return hit;
  }
  const offered = offeredBaseMaps.get(key);
  const base = offered ? installBaseMap(offered, box) : drawBase(box, w, h, resolution);
  baseCache.set(key, base);
  while (baseCache.size > CACHE_LIMIT) {
    const oldest = baseCache.keys().next().value;
    if (oldest === undefined) break;
    baseCache.delete(oldest);
  }
  return base;
}

/** Empties the base map cache and forgets the base maps offered (benchmarks measure the first, uncached call with it). */
export function clearBaseMapCache(): void {
  baseCache.clear();
  offeredBaseMaps.clear();
}

/**
 * A base map as data another thread can install instead of drawing it: its pixels (already in the base map's
 * few colours) in shared memory, so that offering it with every task copies nothing. Projecting Natural
 * Earth and choosing the colours took one build worker ~0.2 s for the band images' base map, which the worker
 * that chose the run's palette had drawn already.
 */
export interface SharedBaseMap {
  key: string;
  width: number;
  height: number;
  resolution: Resolution;
  pixels: Uint8ClampedArray;
  colours: Uint32Array;
  labels: GraticuleLabel[];
  lonStep: number;
  latStep: number;
}

/** The base map of a box at a panel size (getBaseMap), as data to offer other threads. */
export function shareBaseMap(box: LatLonBoxModel, width: number, height: number): SharedBaseMap {
  const base = getBaseMap(box, width, height);
  const pixels = inSharedMemory(base.canvas.getContext("2d").getImageData(0, 0, base.width, base.height).data);
  const { width: w, height: h, resolution, colours, labels, lonStep, latStep } = base;
  return { key: cacheKey(box, w, h, resolution), width: w, height: h, resolution, pixels, colours, labels, lonStep, latStep };
}

/** Base maps other threads drew, by cache key: getBaseMap installs one instead of drawing it. */
const offeredBaseMaps = new Map<string, SharedBaseMap>();

export function offerBaseMaps(shared: readonly SharedBaseMap[]): void {
  for (const base of shared) offeredBaseMaps.set(base.key, base);
  // Keys name a box and a size: a long-lived worker keeps the last few runs' offers only.
  for (const key of offeredBaseMaps.keys()) {
    if (offeredBaseMaps.size <= CACHE_LIMIT) break;
    offeredBaseMaps.delete(key);
  }
}

/** A BaseMap from the pixels of one drawn by drawBase: the same canvas pixel for pixel (every pixel is opaque). */
function installBaseMap(shared: SharedBaseMap, box: LatLonBoxModel): BaseMap {
  const { width, height } = shared;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(width, height);
  image.data.set(shared.pixels);
  ctx.putImageData(image, 0, 0);
  return { width, height, resolution: shared.resolution, projection: panelProjection(box, width, height), canvas, colours: shared.colours, labels: shared.labels, lonStep: shared.lonStep, latStep: shared.latStep };
}

export const baseMapCacheSize = (): number => baseCache.size;

/** Copies a base map into an image at (x, y) and draws its graticule labels on top later with `drawGraticuleLabels`. */
export function drawBaseMap(ctx: SKRSContext2D, base: BaseMap, x: number, y: number): void {
  ctx.drawImage(base.canvas, x, y);
}

/** Graticule labels with a white halo, over everything else in the panel. */
export function drawGraticuleLabels(ctx: SKRSContext2D, base: BaseMap, x: number, y: number): void {
  ctx.save();
  ctx.font = font(10);
  ctx.lineWidth = 3;
  ctx.lineJoin = "round";
  ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
  ctx.fillStyle = BASE_COLOURS.graticuleLabel;
  for (const label of base.labels) {
    ctx.textAlign = label.align;
    ctx.textBaseline = label.baseline;
    ctx.strokeText(label.text, x + label.x, y + label.y);
    ctx.fillText(label.text, x + label.x, y + label.y);
  }
  ctx.restore();
}
