// @ts-check
/**
 * The KML of a step, read for the viewer: ashcast's own ash-area KML and forecasters' drawings
 * (polygons with their holes, the volcano's point, styles, the concentration classes of the legend).
 * Pure: text in, plain objects out, through the browser's DOMParser; no request is made, and the
 * KML's icon hrefs are never followed. Shipped before viewer.js in the same script file.
 */

/** @typedef {{ label: string, line: string, fill: string, classId?: string }} LegendEntry */
/** @typedef {{ areas: { latlngs: L.LatLngExpression[][][], line: string, fill: string, name: string }[], volcano?: { name: string, lat: number, lon: number }, legend: LegendEntry[], concentrations: boolean, quantity?: string, missing?: string }} Step */

const ashKml = (() => {
  "use strict";

  /** KML `aabbggrr` to CSS. */
  function kmlColour(/** @type {string | null | undefined} */ text, /** @type {string} */ fallback) {
    const hex = (text ?? "").trim();
    if (!/^[0-9a-fA-F]{8}$/.test(hex)) return fallback;
    const [a, b, g, r] = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16));
    return `rgba(${r},${g},${b},${((a ?? 255) / 255).toFixed(2)})`;
  }

  const child = (/** @type {Element} */ parent, /** @type {string} */ name) => parent.getElementsByTagName(name)[0];
  /** A longitude moved by whole turns to within 180° of `reference` (unchanged without one). */
  const nearTurn = (/** @type {number} */ lon, /** @type {number | undefined} */ reference) => (reference === undefined ? lon : lon - 360 * Math.round((lon - reference) / 360));
  /**
   * A ring's positions as [lat, lon], longitudes made continuous: an edge across 180° (written 179 then
   * -179, as Google Earth reads it: the shorter way round) goes on to 181 instead of round the world.
   */
  const ringOf = (/** @type {Element | undefined} */ ring) => {
    let previous = Number.NaN;
    return (child(ring ?? document.createElement("x"), "coordinates")?.textContent ?? "")
      .trim()
      .split(/\s+/)
      .map((tuple) => tuple.split(",").map(Number))
      .filter((p) => p.length >= 2 && Number.isFinite(p[0]) && Number.isFinite(p[1]))
      .map((p) => {
        previous = nearTurn(/** @type {number} */ (p[0]), Number.isNaN(previous) ? undefined : previous);
        return /** @type {L.LatLngTuple} */ ([/** @type {number} */ (p[1]), previous]);
      });
  };

  const classLabel = (/** @type {number} */ lower, /** @type {string | number | null} */ upper, /** @type {string} */ units) =>
    upper === null ? `≥ ${lower} ${units}` : `${lower} – ${upper} ${units}`;

  /** @returns {Step} */
  function parseKml(/** @type {string} */ text) {
    const doc = new DOMParser().parseFromString(text, "application/xml");
    if (doc.getElementsByTagName("parsererror").length) throw new Error("a KML file of this run could not be read");
    /** @type {Map<string, { line: string, fill: string }>} */
    const styles = new Map();
    for (const style of Array.from(doc.getElementsByTagName("Style"))) {
      const line = child(style, "LineStyle");
      const poly = child(style, "PolyStyle");
      styles.set(`#${style.getAttribute("id")}`, {
        line: kmlColour(line && child(line, "color")?.textContent, "#c00000"),
        fill: kmlColour(poly && child(poly, "color")?.textContent, "rgba(192,0,0,.4)"),
      });
    }
    /** @type {Step} */
    const step = { areas: [], legend: [], concentrations: false };
    /** Concentration classes seen on placemarks (ExtendedData lower/upper/units), by lower bound. */
    /** @type {Map<number, LegendEntry>} */
    const classes = new Map();
    /** Otherwise, one legend entry per style of the areas drawn, named by their first placemark. */
    /** @type {Map<string, LegendEntry>} */
    const named = new Map();
    for (const placemark of Array.from(doc.getElementsByTagName("Placemark"))) {
      const name = child(placemark, "name")?.textContent ?? "";
      const styleUrl = child(placemark, "styleUrl")?.textContent?.trim() ?? "";
      const style = styles.get(styleUrl) ?? { line: "#c00000", fill: "rgba(192,0,0,.4)" };
      const polygons = Array.from(placemark.getElementsByTagName("Polygon"));
      if (polygons.length) {
        const latlngs = polygons.map((polygon) => [
          ringOf(child(child(polygon, "outerBoundaryIs") ?? polygon, "LinearRing")),
          ...Array.from(polygon.getElementsByTagName("innerBoundaryIs")).map((inner) => ringOf(child(inner, "LinearRing"))),
        ]);
        step.areas.push({ latlngs, ...style, name });
        const data = (/** @type {string} */ key) => Array.from(placemark.getElementsByTagName("Data")).find((d) => d.getAttribute("name") === key)?.textContent?.trim();
        const lower = data("lower");
        if (lower !== undefined) classes.set(Number(lower), { label: classLabel(Number(lower), data("upper") || null, data("units") ?? ""), ...style });
        else if (!named.has(styleUrl)) named.set(styleUrl, { label: name || "Area", ...style });
        continue;
      }
      const point = ringOf(placemark.getElementsByTagName("Point")[0])[0];
      if (point && !step.volcano) step.volcano = { name, lat: point[0], lon: point[1] };
    }
    // The legend of a step without ash still lists every class, and says what the field is: ashcast's own
    // KML carries both in the Document's ExtendedData (quantity, units, thresholds; styles ash-0, ash-1 ...).
    const document_ = doc.getElementsByTagName("Document")[0];
    const documentData = Array.from(document_ ? child(document_, "ExtendedData")?.children ?? [] : []);
    const meta = (/** @type {string} */ key) => documentData.find((d) => d.getAttribute("name") === key)?.textContent?.trim();
    const quantity = meta("quantity");
    if (quantity) step.quantity = quantity;
    const thresholds = meta("thresholds");
    if (thresholds) {
      const values = thresholds.split(",").map(Number);
      const names = (meta("classes") ?? "").split(",");
      values.forEach((lower, i) => {
        const upper = values[i + 1] ?? null;
        const label = `${classLabel(lower, upper, meta("units") ?? "")}${names[i] ? ` ${names[i]}` : ""}`;
        classes.set(lower, { label, ...(names[i] ? { classId: names[i] } : {}), ...(styles.get(`#ash-${i}`) ?? { line: "#c00000", fill: "rgba(192,0,0,.4)" }) });
      });
    }
    // Cells the model gave no value at this step: ashcast's KML says how many in the step Folder's ExtendedData,
    // worded as on the maps (src/contract/missingValues.ts).
    for (const folder of Array.from(doc.getElementsByTagName("Folder"))) {
      const folderData = Array.from(child(folder, "ExtendedData")?.children ?? []);
      const missing = folderData.find((d) => d.getAttribute("name") === "missing")?.textContent?.trim();
      if (missing) step.missing = missing;
    }
    step.concentrations = classes.size > 0;
    step.legend = step.concentrations ? [...classes].sort(([a], [b]) => a - b).map(([, entry]) => entry) : [...named.values()];
    return step;
  }

  return { parse: parseKml, nearTurn };
})();
