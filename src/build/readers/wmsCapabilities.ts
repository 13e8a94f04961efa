/**
 * A WMS GetCapabilities document saved in the run folder (1.3.0 `WMS_Capabilities` or 1.1.1
 * `WMT_MS_Capabilities`). Lists every named layer with its time text and extent, inherited from
 * parent layers as the WMS spec says. Time texts are not checked here: only the layer a run
 * publishes matters, and the pipeline expands that one with timesForLayer.
 */
import type { LatLonBoxModel } from "../../contract/ashModel.ts";
import { parseUntrustedXml, XmlInputError } from "../../xml/safeXml.ts";
import type { Issues } from "../issues.ts";
import type { InputReader, RunInputFile, WmsCapabilitiesLayer } from "./types.ts";

const MAX_BYTES = 20 * 1024 * 1024;
const ROOTS = ["WMS_Capabilities", "WMT_MS_Capabilities"] as const;
const FIX_DOCUMENT =
  "save the WMS server's response to SERVICE=WMS&REQUEST=GetCapabilities as it is: well-formed, without ENTITY declarations, under 20 MiB";

type XmlNode = Record<string, unknown>;

/** What a layer passes down to its children (WMS 1.3.0 7.2.4.8: Dimension and bounding box are inherited, a child's own replaces). */
interface Inherited {
  timeDimension?: string;
  extent?: LatLonBoxModel;
}

export const wmsCapabilitiesReader: InputReader = {
  kind: "wms-capabilities",

  accepts(file, head) {
    // UTF-16 documents start with a byte-order mark; everything else is read as ASCII-compatible.
    const text = head[0] === 0xff && head[1] === 0xfe ? head.toString("utf16le") : head.toString("latin1");
    return file.name.toLowerCase().endsWith(".xml") && ROOTS.some((root) => text.includes(root));
  },

  async read(file, issues) {
    const doc = await parseDocument(file, issues);
    if (doc === undefined) return undefined;
    const rootName = ROOTS.find((name) => name in doc);
    if (rootName === undefined) {
      const found = Object.keys(doc).find((key) => !key.startsWith("#")) ?? "none";
      issues.error(file.displayPath, `not a WMS capabilities document: the root element is ${found}, expected WMS_Capabilities or WMT_MS_Capabilities`, FIX_DOCUMENT);
      return undefined;
    }
    const root = isNode(doc[rootName]) ? doc[rootName] : {};
    const version = textOf(root["@_version"]);
    if (version === undefined) {
      issues.error(file.displayPath, `${rootName} has no version attribute`, FIX_DOCUMENT, rootName);
      return undefined;
    }
    const layers: WmsCapabilitiesLayer[] = [];
    const capability = root["Capability"];
    if (isNode(capability)) walkLayers(capability["Layer"], "Capability", {}, layers, file, issues);
    if (layers.length === 0) {
      issues.error(file.displayPath, "the document has no layer with a Name", "Use the capabilities of the WMS service that serves the run's layers; it must list them as Layer elements with a Name.", "Capability/Layer");
      return undefined;
    }
    return { kind: "wms-capabilities", file, capabilities: { version, layers } };
  },
};

async function parseDocument(file: RunInputFile, issues: Issues): Promise<XmlNode | undefined> {
  // Checked before reading so that a huge file is never loaded; same words as parseUntrustedXml.
  if (file.size > MAX_BYTES) {
    issues.error(file.displayPath, `file is ${file.size} bytes, more than the ${MAX_BYTES} accepted`, FIX_DOCUMENT);
    return undefined;
  }
  try {
    const doc = parseUntrustedXml(await file.bytes(), { maxBytes: MAX_BYTES, arrays: new Set(["Layer", "Dimension", "Extent"]) });
    return isNode(doc) ? doc : {};
  } catch (error) {
    if (!(error instanceof XmlInputError)) throw error;
    issues.error(file.displayPath, error.message, FIX_DOCUMENT);
    return undefined;
  }
}

function walkLayers(nodes: unknown, parentPath: string, inherited: Inherited, out: WmsCapabilitiesLayer[], file: RunInputFile, issues: Issues): void {
  const list = Array.isArray(nodes) ? nodes : [];
  list.forEach((layer, i) => {
    if (!isNode(layer)) return;
    const path = list.length === 1 ? `${parentPath}/Layer` : `${parentPath}/Layer[${i + 1}]`;
    const effective: Inherited = {
      timeDimension: ownTime(layer) ?? inherited.timeDimension,
      extent: ownExtent(layer, path, file, issues) ?? inherited.extent,
    };
    const name = textOf(layer["Name"]);
    const title = textOf(layer["Title"]);
    if (name !== undefined) {
      out.push({
        name,
        ...(title !== undefined && { title }),
        ...(effective.timeDimension !== undefined && { timeDimension: effective.timeDimension }),
        ...(effective.extent !== undefined && { extent: effective.extent }),
      });
    }
    walkLayers(layer["Layer"], path, effective, out, file, issues);
  });
}

/** 1.3.0 puts the values in Dimension; 1.1.1 declares Dimension and puts them in Extent. Names are case-insensitive. */
function ownTime(layer: XmlNode): string | undefined {
  for (const element of ["Dimension", "Extent"]) {
    const nodes = layer[element];
    const time = Array.isArray(nodes) ? nodes.find((node) => isNode(node) && textOf(node["@_name"])?.toLowerCase() === "time") : undefined;
    const text = textOf(time);
    if (text !== undefined) return text;
  }
  return undefined;
}

/** EX_GeographicBoundingBox (1.3.0) or LatLonBoundingBox (1.1.1); a box that is not usable is reported and ignored. */
function ownExtent(layer: XmlNode, path: string, file: RunInputFile, issues: Issues): LatLonBoxModel | undefined {
  const found = boxSides(layer);
  if (found === undefined) return undefined;
  const { element, sides } = found;
  const [west, east, south, north] = [degrees(sides.west, 180), degrees(sides.east, 180), degrees(sides.south, 90), degrees(sides.north, 90)];
  if (west === undefined || east === undefined || south === undefined || north === undefined || south > north) {
    const given = Object.entries(sides).map(([side, value]) => `${side}=${textOf(value) ?? "(none)"}`).join(" ");
    issues.warning(file.displayPath, `layer bounding box ignored: ${given} is not a box in degrees`, "Give longitudes within -180..180 and latitudes within -90..90, with south <= north.", `${path}/${element}`);
    return undefined;
  }
  return { north, south, east, west };
}

function boxSides(layer: XmlNode): { element: string; sides: Record<"west" | "east" | "south" | "north", unknown> } | undefined {
  const ex = layer["EX_GeographicBoundingBox"];
  if (isNode(ex)) {
    return { element: "EX_GeographicBoundingBox", sides: { west: ex["westBoundLongitude"], east: ex["eastBoundLongitude"], south: ex["southBoundLatitude"], north: ex["northBoundLatitude"] } };
  }
  const ll = layer["LatLonBoundingBox"];
  if (isNode(ll)) return { element: "LatLonBoundingBox", sides: { west: ll["@_minx"], east: ll["@_maxx"], south: ll["@_miny"], north: ll["@_maxy"] } };
  return undefined;
}

function degrees(value: unknown, limit: number): number | undefined {
  const text = textOf(value);
  const number = text === undefined ? NaN : Number(text);
  return Number.isFinite(number) && Math.abs(number) <= limit ? number : undefined;
}

/** Element text or attribute value, trimmed; undefined when absent or empty. */
function textOf(value: unknown): string | undefined {
  const raw = isNode(value) ? value["#text"] : value;
  const text = typeof raw === "string" || typeof raw === "number" ? String(raw).trim() : "";
  return text === "" ? undefined : text;
}

function isNode(value: unknown): value is XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
