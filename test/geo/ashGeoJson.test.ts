/** GeoJSON ash areas: exact output for a small input, the KML's rounding and orientation, the class table's ids. */
import { describe, expect, it } from "vitest";
import { ashAreasGeoJson, type AshGeoJson } from "../../src/geo/ashGeoJson.ts";
import type { AshKmlInput } from "../../src/geo/ashKml.ts";
import type { ThresholdBand } from "../../src/geo/types.ts";

/** The document, parsed; its bytes must be JSON.stringify's of it, with one trailing newline (as every JSON body of the build). */
function written(input: AshKmlInput): AshGeoJson {
  const text = ashAreasGeoJson(input).toString("utf8");
  const doc = JSON.parse(text) as AshGeoJson;
  expect(text).toBe(`${JSON.stringify(doc)}\n`);
  return doc;
}

// A clockwise square with a counter-clockwise hole: both must come out the other way round (RFC 7946 §3.1.6).
const square: ThresholdBand = {
  lower: 0.2,
  upper: 2,
  polygons: [{ outer: [[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]], holes: [[[0.25, 0.25], [0.75, 0.25], [0.75, 0.75], [0.25, 0.25]]] }],
};
const high: ThresholdBand = { lower: 4, upper: null, polygons: [{ outer: [[0.123456, 0.5], [0.200001, 0.5], [0.2, 0.6], [0.123456, 0.5]], holes: [] }] };
const tiny: ThresholdBand = { lower: 2, upper: 4, polygons: [{ outer: [[5, 5], [5.00001, 5], [5, 5.00001], [5, 5]], holes: [] }] };

const INPUT: AshKmlInput = {
  name: "FL200/350 ash areas",
  band: { id: "fl200-350", label: "FL200/350" },
  quantity: "6-hour maximum concentration",
  thresholds: [0.2, 2, 4],
  units: "mg/m³",
  steps: [],
};

describe("ashAreasGeoJson", () => {
  const doc = written({
    name: "FL200/350 ash areas",
    band: { id: "fl200-350", label: "FL200/350" },
    quantity: "6-hour maximum concentration",
    thresholds: [0.2, 2, 4],
    units: "mg/m³",
    steps: [
      { time: "2026-06-01T00:00:00Z", end: "2026-06-01T01:00:00Z", bands: [square, tiny, high] },
      { time: "2026-06-01T01:00:00Z", end: "2026-06-01T02:00:00Z", bands: [] },
    ],
    volcano: { name: "Hekla", lat: 63.98, lon: -19.7 },
  });

  it("is a FeatureCollection with the band, thresholds and units, the volcano first", () => {
    expect(doc).toMatchObject({ type: "FeatureCollection", band: { id: "fl200-350", label: "FL200/350" }, thresholds: [0.2, 2, 4], units: "mg/m3" });
    expect(doc.features[0]).toEqual({ type: "Feature", geometry: { type: "Point", coordinates: [-19.7, 63.98] }, properties: { kind: "volcano", name: "Hekla" } });
  });

  it("one feature per interval with ash: exterior counter-clockwise, holes clockwise, 4 decimals, collapsed rings dropped", () => {
    expect(doc.features).toHaveLength(3);
    expect(doc.features[1]).toEqual({
      type: "Feature",
      geometry: { type: "MultiPolygon", coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0.25, 0.25], [0.75, 0.75], [0.75, 0.25], [0.25, 0.25]]]] },
      properties: { kind: "ash", quantity: "6-hour maximum concentration", band: "FL200/350", lower: 0.2, upper: 2, class: "low", units: "mg/m3", time: "2026-06-01T00:00:00Z", end: "2026-06-01T01:00:00Z" },
    });
    expect(doc.features[2]!.geometry!.coordinates).toEqual([[[[0.1235, 0.5], [0.2, 0.5], [0.2, 0.6], [0.1235, 0.5]]]]);
    expect(doc.features[2]!.properties).toMatchObject({ lower: 4, upper: null, class: "high", quantity: "6-hour maximum concentration" });
    expect(doc.quantity).toBe("6-hour maximum concentration");
  });

  it("gives the collection the bbox of the written positions and the volcano, exactly", () => {
    // The volcano at (-19.7, 63.98) and the areas between (0, 0) and (1, 1): the positions as written, 0.1235 among them.
    expect(doc.bbox).toEqual([-19.7, 0, 1, 63.98]);
    const small = written({ ...INPUT, volcano: undefined, steps: [{ time: "2026-06-01T00:00:00Z", end: "2026-06-01T01:00:00Z", bands: [high] }] });
    expect(small.bbox).toEqual([0.1235, 0.5, 0.2, 0.6]);
  });
});

describe("ashAreasGeoJson across the antimeridian", () => {
  // As the build gives a grid across 180°: longitudes running on past it.
  const across: ThresholdBand = { lower: 0.2, upper: 2, polygons: [{ outer: [[179, 50], [181, 50], [181, 51], [179, 51], [179, 50]], holes: [] }] };
  const doc = written({
    name: "SFC/FL200 ash areas",
    band: { id: "fl000-200", label: "SFC/FL200" },
    quantity: "6-hour maximum concentration",
    thresholds: [0.2, 2, 4],
    units: "mg/m³",
    steps: [{ time: "2026-01-01T00:00:00Z", end: "2026-01-01T01:00:00Z", bands: [across] }],
    volcano: { name: "Kiska", lat: 52.1, lon: 177.6 },
  });

  it("cuts a polygon crossing 180° into a MultiPolygon of one part per side, every longitude within ±180 (RFC 7946 §3.1.9)", () => {
    expect(doc.features[1]!.geometry).toEqual({
      type: "MultiPolygon",
      coordinates: [[[[180, 51], [179, 51], [179, 50], [180, 50], [180, 51]]], [[[-180, 50], [-179, 50], [-179, 51], [-180, 51], [-180, 50]]]],
    });
  });

  it("gives the collection a bbox crossing the antimeridian west > east (§5.2), the volcano inside it", () => {
    expect(doc.bbox).toEqual([177.6, 50, -179, 52.1]);
  });
});
