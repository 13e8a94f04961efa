/**
 * Reads a forecaster's KML: its name, the times it holds, the extent of its coordinates, a split by time
 * so that each published timestep serves only the features valid then, and its Placemarks as read for
 * the GeoJSON twin (src/geo/forecasterGeoJson.ts), split by time the same way.
 */
import { XMLBuilder } from "fast-xml-parser";
import type { LatLonBoxModel } from "../../contract/ashModel.ts";
import { closedRing, type KmlGeometry, type KmlPlacemark, type KmlTime } from "../../geo/forecasterGeoJson.ts";
import type { GeoPosition } from "../../geo/antimeridian.ts";
import { ringCrossing } from "../../geo/rings.ts";
import { wrapLongitude } from "../../model/gridMapping.ts";
import type { Position } from "../../geo/types.ts";
import { formatInstant, parseInstant } from "../../time/instant.ts";
import { parseUntrustedXml, utf8Xml, XmlInputError } from "../../xml/safeXml.ts";
import type { Issues } from "../issues.ts";
import type { InputReader, InputReading, KmlDocument, RunInputFile } from "./types.ts";

const MAX_KML_BYTES = 50 * 1024 * 1024;
const KML_NAMESPACE = "http://www.opengis.net/kml/2.2";
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const FILE_FIX = "export the KML again as plain KML 2.2: well-formed XML without ENTITY declarations, at most 50 MiB";
const TIME_FIX = "write the time as an ISO 8601 date-time with its zone, e.g. 2024-05-01T12:00:00Z";
const COORDINATES_FIX = "write each position as lon,lat or lon,lat,alt in decimal degrees (longitude -180 to 180, latitude -90 to 90), positions separated by spaces";
const FEATURES = new Set(["Placemark", "Folder", "Document", "GroundOverlay", "ScreenOverlay", "PhotoOverlay", "NetworkLink"]);
/** Features with no GeoJSON counterpart: left out of the twin, and counted. */
const NOT_GEOJSON = new Set(["GroundOverlay", "ScreenOverlay", "PhotoOverlay", "NetworkLink"]);
const GEOMETRIES = new Set(["Point", "LineString", "LinearRing", "Polygon", "MultiGeometry", "Model", "Track", "MultiTrack"]);
/** A broken export repeats one mistake thousands of times: list the first ones, count the rest. */
const MAX_LISTED_PROBLEMS = 20;

// The builder escapes & < > " ' in text and attributes; the parser has decoded them, so nothing is escaped twice.
const BUILDER = new XMLBuilder({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: "@_", suppressEmptyNode: false, format: true });

/** fast-xml-parser's preserveOrder node: `{ [tag]: children, ":@"?: attributes }`, or `{ "#text": text }`. */
type OrderedNode = Record<string, unknown>;
/** Whether a TimeSpan or TimeStamp holds an instant (epoch ms, whole seconds). */
type ValidAt = (ms: number) => boolean;

interface Problem {
  field: string;
  message: string;
  fix: string;
}

interface Scan {
  documentName?: string;
  folderName?: string;
  times: Set<string>;
  /** Keyed by the TimeSpan or TimeStamp node, so forTime finds a feature's own time among its children. */
  validity: Map<OrderedNode, ValidAt>;
  /** The instants of each TimeSpan or TimeStamp node, as published. */
  instants: Map<OrderedNode, KmlTime>;
  extent: Extent;
  problems: Problem[];
  /** Geometries too small to be what they say (a ring of 2 positions): published as drawn, but said. */
  warnings: Problem[];
}

export const kmlReader: InputReader = {
  kind: "kml",
  accepts: (file) => /\.kml$/i.test(file.name),
  async read(file: RunInputFile, issues: Issues): Promise<InputReading | undefined> {
    if (file.size > MAX_KML_BYTES) {
      issues.error(file.displayPath, `file is ${file.size} bytes, more than the ${MAX_KML_BYTES} accepted`, FILE_FIX);
      return undefined;
    }
    const whole = await file.bytes();
    let tree: OrderedNode[];
    try {
      tree = parseUntrustedXml(whole, { maxBytes: MAX_KML_BYTES, preserveOrder: true }) as OrderedNode[];
    } catch (error) {
      if (!(error instanceof XmlInputError)) throw error;
      issues.error(file.displayPath, error.message, FILE_FIX);
      return undefined;
    }
    const root = tree[0];
    if (!root || tagOf(root) !== "kml") {
      issues.error(file.displayPath, `root element is <${root ? tagOf(root) : ""}>, expected <kml>`, `save the file as KML 2.2, whose root is <kml xmlns="${KML_NAMESPACE}">`);
      return undefined;
    }
    const scan: Scan = { times: new Set(), validity: new Map(), instants: new Map(), extent: new Extent(), problems: [], warnings: [] };
    walk(root, "kml", scan);
    for (const warning of scan.warnings.slice(0, MAX_LISTED_PROBLEMS)) issues.warning(file.displayPath, warning.message, warning.fix, warning.field);
    for (const problem of scan.problems.slice(0, MAX_LISTED_PROBLEMS)) issues.error(file.displayPath, problem.message, problem.fix, problem.field);
    if (scan.problems.length > MAX_LISTED_PROBLEMS) {
      issues.error(file.displayPath, `${scan.problems.length - MAX_LISTED_PROBLEMS} more problems like these are not listed`, "fix the problems above and check the file again");
    }
    if (scan.problems.length) return undefined;

    const extent = scan.extent.box();
    if (!extent) {
      issues.warning(file.displayPath, "the KML has no coordinates, so it adds nothing to the run's extent", "check that its placemarks carry their geometry (nothing to do if it only holds overlays or links)");
    }
    const name = scan.documentName ?? scan.folderName;
    const { validity, instants } = scan;
    let found: FoundFeature[] | undefined;
    const kml: KmlDocument = {
      ...(name === undefined ? {} : { name }),
      times: [...scan.times].sort(),
      ...(extent ? { extent } : {}),
      // Served as UTF-8 (its content type says so): a Latin-1 or UTF-16 drawing is re-encoded.
      whole: utf8Xml(whole),
      forTime: (time: string) => kmlAt(root, validity, time),
      features: (time?: string) => {
        found ??= findFeatures(root, validity, instants);
        const t = time === undefined ? undefined : instantOf(time);
        const valid = t === undefined ? found : found.filter((feature) => feature.validity.every((validAt) => validAt(t)));
        return {
          ...(name === undefined ? {} : { name }),
          placemarks: valid.flatMap((feature) => (typeof feature.feature === "string" ? [] : [feature.feature])),
          leftOut: valid.flatMap((feature) => (typeof feature.feature === "string" ? [feature.feature] : [])),
        };
      },
    };
    return { kind: "kml", file, kml };
  },
};

/** Visits every element once: names, time primitives, coordinates. */
function walk(node: OrderedNode, path: string, scan: Scan): void {
  const tag = tagOf(node);
  const children = childrenOf(node);
  if (tag === "Document") scan.documentName ??= childText(children, "name") || undefined;
  if (tag === "Folder") scan.folderName ??= childText(children, "name") || undefined;
  if (tag === "TimeStamp") readTimeStamp(node, children, path, scan);
  if (tag === "TimeSpan") readTimeSpan(node, children, path, scan);
  if (tag === "coordinates") readCoordinates(textOf(children), path, scan);

  // Paths name a child by position among its same-named siblings, XPath style, only when it has some.
  const tags = children.map(tagOf);
  const counts = new Map<string | undefined, number>();
  for (const childTag of tags) counts.set(childTag, (counts.get(childTag) ?? 0) + 1);
  const seen = new Map<string, number>();
  children.forEach((child, i) => {
    const childTag = tags[i];
    if (childTag === undefined) return;
    const index = (seen.get(childTag) ?? 0) + 1;
    seen.set(childTag, index);
    walk(child, `${path}/${childTag}${(counts.get(childTag) ?? 0) > 1 ? `[${index}]` : ""}`, scan);
  });
}

function readTimeStamp(node: OrderedNode, children: OrderedNode[], path: string, scan: Scan): void {
  const when = readTime(children, "when", path, scan);
  if (when === undefined) return;
  scan.times.add(formatInstant(when));
  scan.validity.set(node, (t) => t === when);
  scan.instants.set(node, { when: formatInstant(when) });
}

function readTimeSpan(node: OrderedNode, children: OrderedNode[], path: string, scan: Scan): void {
  const begin = readTime(children, "begin", path, scan);
  const end = readTime(children, "end", path, scan);
  if (begin !== undefined) scan.times.add(formatInstant(begin));
  if (begin !== undefined && end !== undefined && end < begin) {
    scan.problems.push({ field: `${path}/end`, message: `the TimeSpan ends (${formatInstant(end)}) before it begins (${formatInstant(begin)})`, fix: "give the end of the TimeSpan after its begin" });
  }
  // A span that ends where it begins is an instant (what some tools write for an observation): valid at that
  // time, as a TimeStamp is, rather than at no time at all.
  if (begin !== undefined && end === begin) scan.validity.set(node, (t) => t === begin);
  else scan.validity.set(node, (t) => (begin === undefined || begin <= t) && (end === undefined || t < end));
  scan.instants.set(node, { ...(begin === undefined ? {} : { begin: formatInstant(begin) }), ...(end === undefined ? {} : { end: formatInstant(end) }) });
}

/** The instant in child `name` to the whole second, as published; undefined when absent or unparseable (reported). */
function readTime(children: OrderedNode[], name: string, path: string, scan: Scan): number | undefined {
  const text = childText(children, name);
  if (text === undefined) return undefined;
  const ms = parseInstant(text);
  if (ms === undefined) scan.problems.push({ field: `${path}/${name}`, message: `"${text}" is not an ISO 8601 date-time with a zone`, fix: TIME_FIX });
  return ms === undefined ? undefined : wholeSecond(ms);
}

/** `lon,lat[,alt]` tuples separated by whitespace; the first bad tuple of an element is reported. */
function readCoordinates(text: string, path: string, scan: Scan): void {
  const tuples = text.split(/\s+/).filter(Boolean);
  const positions: number[][] = [];
  for (const [i, tuple] of tuples.entries()) {
    const numbers = tuple.split(",").map(parseDecimal);
    const [lon, lat] = numbers;
    if (lon === undefined || lat === undefined || numbers.length > 3 || numbers.includes(undefined)) {
      scan.problems.push({ field: path, message: `position ${i + 1} "${tuple}" is not lon,lat or lon,lat,alt`, fix: COORDINATES_FIX });
      return;
    }
    if (Math.abs(lon) > 180 || Math.abs(lat) > 90) {
      scan.problems.push({ field: path, message: `position ${i + 1} "${tuple}" is outside longitude -180 to 180, latitude -90 to 90`, fix: COORDINATES_FIX });
      return;
    }
    scan.extent.add(lon, lat);
    positions.push(numbers as number[]);
  }
  warnOfTooFewPositions(positions, path, scan);
}

/**
 * A Point without its one position, a line of fewer than 2, a polygon ring of fewer than 3 distinct ones: Google
 * Earth draws nothing there, and the GeoJSON twin leaves it out (src/geo/forecasterGeoJson.ts, the same rule).
 */
function warnOfTooFewPositions(positions: ReadonlyArray<readonly number[]>, path: string, scan: Scan): void {
  const geometry = path.replace(/\[\d+\]/g, "");
  const fix = "draw it again with its positions, or remove it";
  if (/\/(outerBoundaryIs|innerBoundaryIs)\/LinearRing\/coordinates$/.test(geometry)) {
    const ring = closedRing(positions as GeoPosition[]);
    if (!ring) scan.warnings.push({ field: path, message: `a polygon ring of ${positions.length} position(s): it needs 3 besides the closing one, so it is drawn nowhere and left out of the GeoJSON`, fix });
    else warnOfCrossing(ring, path, scan);
  } else if (/\/(LineString|LinearRing)\/coordinates$/.test(geometry)) {
    if (positions.length < 2) scan.warnings.push({ field: path, message: `a line of ${positions.length} position(s): it needs 2, so it is drawn nowhere and left out of the GeoJSON`, fix });
  } else if (/\/Point\/coordinates$/.test(geometry) && positions.length !== 1) {
    scan.warnings.push({ field: path, message: `a Point with ${positions.length} positions: it needs exactly one, so it is left out of the GeoJSON`, fix });
  }
}

/**
 * A ring that crosses itself (a bow tie, a notch drawn through the edge): Google Earth, GDAL and web maps fill
 * such a shape each their own way, so part of what was drawn as ash may show as clear. Longitudes are followed
 * across the antimeridian first; a ring around a pole is left alone.
 */
function warnOfCrossing(ring: readonly GeoPosition[], path: string, scan: Scan): void {
  const unwrapped: Position[] = [];
  let lon = ring[0]![0]!;
  for (const position of ring) {
    lon = wrapLongitude(position[0]!, lon);
    unwrapped.push([lon, position[1]!]);
  }
  if (Math.abs(lon - unwrapped[0]![0]) > 180) return;
  const crossing = ringCrossing(unwrapped);
  if (!crossing) return;
  const near = crossing.at ? ` near ${decimal(wrapLongitude(crossing.at[0], 0))},${decimal(crossing.at[1])}` : "";
  scan.warnings.push({
    field: path,
    message: `a polygon ring that crosses itself${near}: viewers fill such a shape differently, so part of it may show as clear air`,
    fix: "draw it again as rings that do not cross (two areas as two polygons)",
  });
}
const decimal = (value: number): string => String(Math.round(value * 1e4) / 1e4);

/** An instant to the whole second, as validity functions take it. */
function instantOf(time: string): number {
  const ms = parseInstant(time);
  if (ms === undefined) throw new RangeError(`forTime needs an ISO 8601 instant, got "${time}"`);
  return wholeSecond(ms);
}

/** The document with only the features valid at `time` (see KmlDocument.forTime). */
function kmlAt(root: OrderedNode, validity: ReadonlyMap<OrderedNode, ValidAt>, time: string): Buffer {
  const t = instantOf(time);
  const keep = (nodes: OrderedNode[]): OrderedNode[] =>
    nodes.flatMap((node) => {
      const tag = tagOf(node);
      if (tag === undefined) return [node];
      const children = childrenOf(node);
      if (FEATURES.has(tag)) {
        const own = children.find((child) => validity.has(child));
        if (own && !validity.get(own)!(t)) return [];
      }
      return [{ ...node, [tag]: keep(children) }];
    });
  // Prefixes were stripped on parsing, so the root declares only the KML namespace.
  const body = BUILDER.build([{ kml: keep(childrenOf(root)), ":@": { "@_xmlns": KML_NAMESPACE } }]) as string;
  return Buffer.from(`${XML_DECLARATION}\n${body.trim()}\n`, "utf8");
}

/** A Placemark as read, or the element name of a feature with no GeoJSON counterpart; valid when all of `validity` hold (its own time and its containers'). */
interface FoundFeature {
  feature: KmlPlacemark | string;
  validity: ValidAt[];
}

/**
 * The features of a checked document in document order, through Documents and Folders as forTime walks
 * them: a feature is kept at a time when its own time primitive and every container's hold it.
 */
function findFeatures(root: OrderedNode, validity: ReadonlyMap<OrderedNode, ValidAt>, instants: ReadonlyMap<OrderedNode, KmlTime>): FoundFeature[] {
  const found: FoundFeature[] = [];
  const visit = (nodes: OrderedNode[], containers: string[], chain: ValidAt[], inherited: KmlTime | undefined): void => {
    for (const node of nodes) {
      const tag = tagOf(node);
      if (tag === undefined || !FEATURES.has(tag)) continue;
      const children = childrenOf(node);
      const own = children.find((child) => validity.has(child));
      const ownChain = own ? [...chain, validity.get(own)!] : chain;
      const time = (own && instants.get(own)) ?? inherited;
      if (tag === "Document" || tag === "Folder") {
        const name = childText(children, "name")?.trim();
        visit(children, name ? [name, ...containers] : containers, ownChain, time);
      } else if (tag === "Placemark") {
        found.push({ feature: placemarkOf(children, containers, time), validity: ownChain });
      } else if (NOT_GEOJSON.has(tag)) {
        found.push({ feature: tag, validity: ownChain });
      }
    }
  };
  visit(childrenOf(root), [], [], undefined);
  return found;
}

function placemarkOf(children: OrderedNode[], containers: string[], time: KmlTime | undefined): KmlPlacemark {
  const name = childText(children, "name");
  const description = childText(children, "description");
  const extendedBand = bandData(children.find((child) => tagOf(child) === "ExtendedData"));
  const geometryNode = children.find((child) => GEOMETRIES.has(tagOf(child) ?? ""));
  return {
    ...(name === undefined ? {} : { name }),
    ...(description === undefined ? {} : { description }),
    ...(time ? { time } : {}),
    ...(extendedBand === undefined ? {} : { extendedBand }),
    containers,
    ...(geometryNode ? { geometry: geometryOf(geometryNode) } : {}),
  };
}

/** The value of ExtendedData's Data (or SchemaData's SimpleData) named `band`, in any case. */
function bandData(extendedData: OrderedNode | undefined): string | undefined {
  if (!extendedData) return undefined;
  const named = (node: OrderedNode): boolean => /^band$/i.test(String((node[":@"] as Record<string, unknown> | undefined)?.["@_name"] ?? ""));
  for (const child of childrenOf(extendedData)) {
    const tag = tagOf(child);
    if (tag === "Data" && named(child)) return childText(childrenOf(child), "value") ?? "";
    if (tag === "SchemaData") {
      const simple = childrenOf(child).find((node) => tagOf(node) === "SimpleData" && named(node));
      if (simple) return textOf(childrenOf(simple));
    }
  }
  return undefined;
}

function geometryOf(node: OrderedNode): KmlGeometry {
  const tag = tagOf(node)!;
  const children = childrenOf(node);
  switch (tag) {
    case "Point":
    case "LineString":
    case "LinearRing":
      return { kind: tag, positions: positionsOf(children) };
    case "Polygon": {
      const rings = (boundary: string): OrderedNode[] =>
        children.filter((child) => tagOf(child) === boundary).flatMap((child) => childrenOf(child).filter((ring) => tagOf(ring) === "LinearRing"));
      const outer = rings("outerBoundaryIs")[0];
      return { kind: "Polygon", ...(outer ? { outer: positionsOf(childrenOf(outer)) } : {}), inner: rings("innerBoundaryIs").map((ring) => positionsOf(childrenOf(ring))) };
    }
    case "MultiGeometry":
      return { kind: "MultiGeometry", geometries: children.filter((child) => GEOMETRIES.has(tagOf(child) ?? "")).map(geometryOf) };
    default:
      return { kind: "other", element: tag };
  }
}

/** The positions of a geometry's `coordinates`, as written (checked by readCoordinates: strict decimals, 2 or 3 each). */
function positionsOf(children: OrderedNode[]): number[][] {
  const text = childText(children, "coordinates") ?? "";
  return text.split(/\s+/).filter(Boolean).map((tuple) => tuple.split(",").map(Number));
}

/** Bounding box of positions; it crosses the antimeridian (east < west) when that box is narrower. */
class Extent {
  private south = Infinity;
  private north = -Infinity;
  private west = Infinity;
  private east = -Infinity;
  /** Westmost longitude of the eastern hemisphere and eastmost of the western: the edges of a box across the antimeridian. */
  private westOfEast = Infinity;
  private eastOfWest = -Infinity;

  add(lon: number, lat: number): void {
    this.south = Math.min(this.south, lat);
    this.north = Math.max(this.north, lat);
    this.west = Math.min(this.west, lon);
    this.east = Math.max(this.east, lon);
    if (lon >= 0) this.westOfEast = Math.min(this.westOfEast, lon);
    else this.eastOfWest = Math.max(this.eastOfWest, lon);
  }

  box(): LatLonBoxModel | undefined {
    if (this.south > this.north) return undefined;
    const across = this.west < 0 && this.east >= 0 && 360 + this.eastOfWest - this.westOfEast < this.east - this.west;
    return { north: this.north, south: this.south, east: across ? this.eastOfWest : this.east, west: across ? this.westOfEast : this.west };
  }
}

const wholeSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

function tagOf(node: OrderedNode): string | undefined {
  return Object.keys(node).find((key) => key !== ":@" && key !== "#text");
}

function childrenOf(node: OrderedNode): OrderedNode[] {
  const tag = tagOf(node);
  const children = tag === undefined ? undefined : node[tag];
  return Array.isArray(children) ? (children as OrderedNode[]) : [];
}

function textOf(children: OrderedNode[]): string {
  return children.map((child) => child["#text"]).filter((text) => typeof text === "string").join("");
}

function childText(children: OrderedNode[], name: string): string | undefined {
  const child = children.find((node) => tagOf(node) === name);
  return child && textOf(childrenOf(child));
}

// Strict decimal: Number() alone would accept "", "0x10" and "Infinity".
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
function parseDecimal(text: string): number | undefined {
  const value = Number(text);
  return DECIMAL.test(text) && Number.isFinite(value) ? value : undefined;
}
