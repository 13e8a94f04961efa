/**
 * KML 2.2 of contoured ash areas, as forecasters and their tools (Google Earth, QGIS/GDAL) read it:
 * a Document saying what the field is, with one Style per concentration class (the colours of
 * src/contract/ashClasses.ts, as on the PNG maps), the volcano as an untimed Placemark, and per time
 * step a Folder with a TimeSpan holding one Placemark per class (a MultiGeometry of Polygons; band,
 * class and range in ExtendedData). One step gives the per-timestep KML, all steps of a layer the
 * whole-run KML. Pure: bytes in memory, identical for identical input (a polygon's text is kept per polygon
 * object: areas are not changed once contoured).
 */
import { withoutNonXmlCharacters } from "../formats/xmlCharacters.ts";
import { ashClasses, ASH_FILL_OPACITY, classRange, classWithLower, formatThreshold, kmlColour } from "../contract/ashClasses.ts";
import { noValueNote, noValueText } from "../contract/missingValues.ts";
import { rfc7946Polygon } from "./antimeridian.ts";
import { orientRing } from "./rings.ts";
import type { Polygon, Position, Ring, ThresholdBand } from "./types.ts";

export interface AshKmlStep {
  /** Start of the validity period (ISO 8601), written as TimeSpan/begin. */
  time: string;
  /** End of the validity period (ISO 8601), written as TimeSpan/end. */
  end: string;
  /** Banded areas of this step, as contourBands returns them; a step without ash has empty bands (or none). */
  bands: ThresholdBand[];
  /** The share of the grid the model gave no value at this step, when some cells have none (none drawn there). */
  missingShare?: number | undefined;
}

export interface AshKmlInput {
  /** Document name, e.g. "Hekla 2024-05-01T12Z SFC/FL200". */
  name: string;
  /** The flight-level band the areas belong to. */
  band: { id: string; label: string };
  /** The thresholds the bands were contoured at, ascending (each band's lower value is one of them). */
  thresholds: readonly number[];
  units: "mg/m³";
  /** What the field is, e.g. `maximum of 6-hour mean ash concentration` (src/model/fieldMeaning.ts). */
  quantity: string;
  steps: AshKmlStep[];
  volcano?: { name: string; lat: number; lon: number };
}

/** Decimals of written coordinates: 1e-4° is about 11 m, far below any model grid. */
export const KML_DECIMALS = 4;

/** Style id of threshold interval i (KML ids are XML NCNames). */
export const styleId = (i: number): string => `ash-${i}`;

/** Name of a class's Placemark, e.g. `SFC/FL200 low 0.2–2 mg/m³` or `SFC/FL200 high ≥ 4 mg/m³`. */
export function intervalName(bandLabel: string, ashClass: { name: string; lower: number; upper: number | null }): string {
  return `${bandLabel} ${ashClass.name} ${classRange(ashClass)}`;
}

/**
 * The KML document (UTF-8 bytes).
 *
 * @example
 * ashAreasKml({ name: "Hekla SFC/FL200", band: { id: "fl000-200", label: "SFC/FL200" }, thresholds: [0.2, 2, 4],
 *   units: "mg/m³", steps: [{ time: "2024-05-01T12:00:00Z", end: "2024-05-01T18:00:00Z", bands }] });
 */
export function ashAreasKml(input: AshKmlInput): Buffer {
  const { thresholds, units, band } = input;
  const classes = ashClasses(thresholds);
  const out: string[] = [];
  const line = (depth: number, text: string): void => {
    out.push(`${"  ".repeat(depth)}${text}`);
  };

  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  line(0, '<kml xmlns="http://www.opengis.net/kml/2.2">');
  line(1, "<Document>");
  line(2, element("name", input.name));
  const quantity = `${input.quantity.charAt(0).toUpperCase()}${input.quantity.slice(1)}`;
  line(2, element("description", `${quantity}, ${band.label}: ${classes.map((c) => `${c.name} ${classRange(c)}`).join(", ")}.`));
  if (input.volcano) {
    line(2, '<Style id="volcano">');
    line(3, "<IconStyle><scale>1.2</scale><Icon><href>http://maps.google.com/mapfiles/kml/shapes/volcano.png</href></Icon></IconStyle>");
    line(2, "</Style>");
  }
  classes.forEach((c, i) => {
    line(2, `<Style id="${styleId(i)}">`);
    line(3, `<LineStyle><color>${kmlColour(c.outline)}</color><width>2</width></LineStyle>`);
    line(3, `<PolyStyle><color>${kmlColour(c.colour, ASH_FILL_OPACITY)}</color><fill>1</fill><outline>1</outline></PolyStyle>`);
    line(2, "</Style>");
  });
  // The same, for programs (the map viewer's legend): what the field is, and the classes (styles ash-0, ash-1 ... in order);
  // after the Styles, where KML 2.2's schema orders a Feature's ExtendedData.
  line(2, "<ExtendedData>");
  line(3, data("quantity", input.quantity));
  line(3, data("units", units));
  line(3, data("thresholds", thresholds.map(formatThreshold).join(",")));
  line(3, data("classes", classes.map((c) => c.name).join(",")));
  line(2, "</ExtendedData>");
  if (input.volcano) {
    const { name, lat, lon } = input.volcano;
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) throw new RangeError(`volcano position must be finite, got ${lat}, ${lon}`);
    line(2, "<Placemark>");
    line(3, element("name", name));
    line(3, element("description", `${name}, ${Math.abs(lat).toFixed(2)}${lat < 0 ? "S" : "N"} ${Math.abs(lon).toFixed(2)}${lon < 0 ? "W" : "E"}`));
    line(3, "<styleUrl>#volcano</styleUrl>");
    line(3, `<Point><coordinates>${formatPosition([lon, lat])}</coordinates></Point>`);
    line(2, "</Placemark>");
  }
  for (const step of input.steps) {
    line(2, "<Folder>");
    line(3, element("name", step.time));
    // Cells without a value: said in words (Google Earth shows the description) and for programs (the viewer's
    // note: the same words; the share exactly), so that no step reads as "no ash" where nothing is known.
    if (step.missingShare !== undefined) line(3, element("description", noValueNote(step.missingShare)));
    // The Folder's TimeSpan drives a time slider (Google Earth); the same TimeSpan on each Placemark lets
    // readers that look at features only (GDAL/QGIS: begin/end fields) see the time too.
    const timeSpan = `<TimeSpan>${element("begin", step.time)}${element("end", step.end)}</TimeSpan>`;
    line(3, timeSpan);
    if (step.missingShare !== undefined) line(3, `<ExtendedData>${data("missing", noValueText(step.missingShare))}${data("missingShare", String(step.missingShare))}</ExtendedData>`);
    for (const interval of step.bands) {
      const ashClass = classWithLower(interval.lower, classes);
      const polygons = interval.polygons.flatMap(kmlPolygons);
      if (polygons.length === 0) continue;
      line(3, "<Placemark>");
      line(4, element("name", intervalName(band.label, ashClass)));
      line(4, timeSpan);
      line(4, `<styleUrl>#${styleId(classes.indexOf(ashClass))}</styleUrl>`);
      line(4, "<ExtendedData>");
      line(5, data("band", band.label));
      line(5, data("bandId", band.id));
      line(5, data("class", ashClass.id));
      line(5, data("lower", String(interval.lower)));
      if (interval.upper !== null) line(5, data("upper", String(interval.upper)));
      line(5, data("units", units));
      line(4, "</ExtendedData>");
      line(4, "<MultiGeometry>");
      for (const polygon of polygons) out.push(polygonLines(polygon));
      line(4, "</MultiGeometry>");
      line(3, "</Placemark>");
    }
    line(2, "</Folder>");
  }
  line(1, "</Document>");
  line(0, "</kml>");
  return Buffer.from(`${out.join("\n")}\n`, "utf8");
}

/**
 * A polygon's lines in a Placemark's MultiGeometry, written once per polygon: the whole-run KML repeats every
 * step's polygons.
 */
function polygonLines(polygon: RoundedPolygon): string {
  let text = polygonText.get(polygon);
  if (text === undefined) {
    // At the depths ashAreasKml's `line` gives a Placemark's MultiGeometry: 5 for the Polygon, 6 inside it.
    const [polygonIndent, ringIndent] = ["  ".repeat(5), "  ".repeat(6)];
    const rings = [
      `${ringIndent}<outerBoundaryIs><LinearRing><coordinates>${polygon.outer.join(" ")}</coordinates></LinearRing></outerBoundaryIs>`,
      ...polygon.holes.map((hole) => `${ringIndent}<innerBoundaryIs><LinearRing><coordinates>${hole.join(" ")}</coordinates></LinearRing></innerBoundaryIs>`),
    ];
    text = [`${polygonIndent}<Polygon>`, `${ringIndent}<tessellate>1</tessellate>`, ...rings, `${polygonIndent}</Polygon>`].join("\n");
    polygonText.set(polygon, text);
  }
  return text;
}
const polygonText = new WeakMap<RoundedPolygon, string>();

/** A polygon's rings as the KML writes their positions (`lon,lat`, see formatPosition), each ring closed. */
export interface RoundedPolygon {
  outer: string[];
  holes: string[][];
}

/**
 * The positions of each ring as text at KML_DECIMALS, outer ring counter-clockwise and holes clockwise
 * (whatever the input's orientation); rings that rounding collapses are dropped.
 */
export function roundPolygon(polygon: Polygon): RoundedPolygon | undefined {
  if (rounded.has(polygon)) return rounded.get(polygon);
  const outer = roundRing(orientRing(polygon.outer, true));
  const holes = outer === undefined ? [] : polygon.holes.map((hole) => roundRing(orientRing(hole, false)));
  const text = outer === undefined ? undefined : { outer, holes: holes.filter((h): h is string[] => h !== undefined) };
  rounded.set(polygon, text);
  return text;
}

/**
 * The text of polygons written before: a run's whole-run KML repeats every step's polygons, its GeoJSON
 * twins read the same text (ashGeoJson.ts), and writing coordinates is most of their cost. Kept per
 * polygon object; the contoured areas are never changed.
 */
const rounded = new WeakMap<Polygon, RoundedPolygon | undefined>();

/**
 * A polygon as the KML writes it: rounded, and cut at 180° when it reaches past it (a model grid across the
 * antimeridian), as its GeoJSON twin is. KML 2.2 takes longitudes within ±180 only, and a reader that does not
 * unwrap a ring from 179° to -179° draws it the long way round the world.
 */
function kmlPolygons(polygon: Polygon): RoundedPolygon[] {
  let pieces = kmlPieces.get(polygon);
  if (pieces === undefined) {
    const text = roundPolygon(polygon);
    pieces = text === undefined ? [] : pastTheAntimeridian(polygon) ? cutAtTheAntimeridian(text) : [text];
    kmlPieces.set(polygon, pieces);
  }
  return pieces;
}
const kmlPieces = new WeakMap<Polygon, RoundedPolygon[]>();

function pastTheAntimeridian(polygon: Polygon): boolean {
  for (const ring of [polygon.outer, ...polygon.holes]) for (const [lon] of ring) if (lon > 180 || lon < -180) return true;
  return false;
}

/** A rounded polygon's rings, outer first, as numbers again: `[lon, lat]` exactly as written. */
export function roundedRings(text: RoundedPolygon): number[][][] {
  return [text.outer, ...text.holes].map((ring) => ring.map((position) => position.split(",").map(Number)));
}

/** The rounded rings cut at 180° (src/geo/antimeridian.ts), each side's positions within ±180 and rounded again. */
function cutAtTheAntimeridian(text: RoundedPolygon): RoundedPolygon[] {
  return rfc7946Polygon(roundedRings(text)).flatMap((piece) => {
    const [outer, ...holes] = piece.map((ring) => roundRing(ring as Position[]));
    if (outer === undefined) return [];
    return [{ outer, holes: holes.filter((h): h is string[] => h !== undefined) }];
  });
}

function roundRing(ring: Ring): string[] | undefined {
  const texts: string[] = [];
  for (const p of ring) {
    const text = formatPosition(p);
    if (texts[texts.length - 1] !== text) texts.push(text);
  }
  if (texts.length > 1 && texts[0] !== texts[texts.length - 1]) texts.push(texts[0]!);
  // A closed ring needs 3 distinct positions plus the closing one.
  return texts.length >= 4 ? texts : undefined;
}

/**
 * `lon,lat` rounded to KML_DECIMALS and written as JSON writes those numbers (the GeoJSON twin's text): no
 * trailing zeros (`14.4`, not `14.4000`: a sixth fewer bytes of KML), never `-0`.
 */
export function formatPosition(p: Position): string {
  return `${formatNumber(p[0])},${formatNumber(p[1])}`;
}

function formatNumber(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`Internal error: coordinate ${x} is not finite`);
  const text = x.toFixed(KML_DECIMALS);
  let end = text.length;
  while (text.charCodeAt(end - 1) === ZERO) end--;
  if (text.charCodeAt(end - 1) === DOT) end--;
  // Only a number that rounds to zero from below comes out "-0".
  return end === 2 && text.startsWith("-0") ? "0" : end === text.length ? text : text.slice(0, end);
}
const ZERO = 48;
const DOT = 46;

const element = (name: string, text: string): string => `<${name}>${escapeXml(text)}</${name}>`;
const data = (name: string, value: string): string => `<Data name="${escapeXml(name)}"><value>${escapeXml(value)}</value></Data>`;

/**
 * Text escaped for XML content and attribute values; characters XML 1.0 cannot carry (control
 * characters, lone surrogates, U+FFFE/U+FFFF) are dropped.
 */
export function escapeXml(text: string): string {
  return withoutNonXmlCharacters(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
