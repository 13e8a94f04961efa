/**
 * A forecaster's KML as GeoJSON: exact output for each geometry (Polygon with holes, MultiGeometry of one
 * type and of several, LineString, LinearRing, Point, altitudes), rings closed and oriented, the
 * antimeridian cut, properties read and never guessed (band, time, description), what is left out counted.
 */
import { describe, expect, it } from "vitest";
import { readStatedBand } from "../../src/geo/flightLevel.ts";
import { forecasterGeoJson, type KmlPlacemark } from "../../src/geo/forecasterGeoJson.ts";

const placemark = (fields: Partial<KmlPlacemark>): KmlPlacemark => ({ containers: [], ...fields });
const only = (p: KmlPlacemark) => forecasterGeoJson({ placemarks: [p], leftOut: [] }).features[0]!;
const NO_PROPERTIES = { source: "forecaster", name: null, description: null, band: null, lower_fl: null, upper_fl: null, time: null, end: null, timestamp: null };

describe("forecasterGeoJson geometry", () => {
  it("closes a Polygon's rings and turns the exterior counter-clockwise and holes clockwise, positions as given", () => {
    const feature = only(
      placemark({
        geometry: {
          kind: "Polygon",
          // Clockwise and unclosed; the holes counter-clockwise (closed) and clockwise (unclosed).
          outer: [[0, 0], [0, 10], [10, 10], [10, 0]],
          inner: [[[2, 2], [4, 2], [4, 4], [2, 4], [2, 2]], [[6, 6], [6, 8], [8, 8]]],
        },
      }),
    );
    expect(feature.geometry).toEqual({
      type: "Polygon",
      coordinates: [
        [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
        [[2, 2], [2, 4], [4, 4], [4, 2], [2, 2]],
        [[6, 6], [6, 8], [8, 8], [6, 6]],
      ],
    });
    expect(feature.properties).toEqual(NO_PROPERTIES);
  });

  it("keeps an altitude only where the KML gives one", () => {
    expect(only(placemark({ geometry: { kind: "Point", positions: [[-19.62, 63.63, 1666]] } })).geometry).toEqual({ type: "Point", coordinates: [-19.62, 63.63, 1666] });
    expect(only(placemark({ geometry: { kind: "LineString", positions: [[40, 0, 5], [41, 1]] } })).geometry).toEqual({ type: "LineString", coordinates: [[40, 0, 5], [41, 1]] });
  });

  it("makes a MultiGeometry of one type a Multi*, of several a GeometryCollection, flattening nested ones", () => {
    const square = (x: number) => ({ kind: "Polygon" as const, outer: [[x, 0], [x + 1, 0], [x + 1, 1], [x, 1], [x, 0]], inner: [] });
    expect(only(placemark({ geometry: { kind: "MultiGeometry", geometries: [square(0), { kind: "MultiGeometry", geometries: [square(2)] }] } })).geometry).toEqual({
      type: "MultiPolygon",
      coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]], [[[2, 0], [3, 0], [3, 1], [2, 1], [2, 0]]]],
    });
    expect(only(placemark({ geometry: { kind: "MultiGeometry", geometries: [{ kind: "Point", positions: [[1, 2]] }, { kind: "Point", positions: [[3, 4]] }] } })).geometry).toEqual({
      type: "MultiPoint",
      coordinates: [[1, 2], [3, 4]],
    });
    expect(only(placemark({ geometry: { kind: "MultiGeometry", geometries: [{ kind: "Point", positions: [[30, 5]] }, { kind: "LinearRing", positions: [[0, 0], [1, 0], [1, 1], [0, 0]] }] } })).geometry).toEqual({
      type: "GeometryCollection",
      geometries: [
        { type: "Point", coordinates: [30, 5] },
        { type: "LineString", coordinates: [[0, 0], [1, 0], [1, 1], [0, 0]] },
      ],
    });
  });

  it("cuts a polygon the KML draws across the antimeridian into a MultiPolygon within ±180, and says so in the bbox", () => {
    const doc = forecasterGeoJson({ placemarks: [placemark({ geometry: { kind: "Polygon", outer: [[179, 50], [-179, 50], [-179, 51], [179, 51], [179, 50]], inner: [] } })], leftOut: [] });
    expect(doc.features[0]!.geometry).toEqual({
      type: "MultiPolygon",
      coordinates: [[[[180, 51], [179, 51], [179, 50], [180, 50], [180, 51]]], [[[-180, 50], [-179, 50], [-179, 51], [-180, 51], [-180, 50]]]],
    });
    expect(doc.bbox).toEqual([179, 50, -179, 51]);
    expect(only(placemark({ geometry: { kind: "LineString", positions: [[179, 0], [-179, 2]] } })).geometry).toEqual({ type: "MultiLineString", coordinates: [[[179, 0], [180, 1]], [[-180, 1], [-179, 2]]] });
  });

  it("leaves out and counts what has no GeoJSON counterpart, keeping the Placemark with what remains (or no geometry)", () => {
    const doc = forecasterGeoJson({
      name: " Advisory ",
      placemarks: [
        placemark({ name: "track", geometry: { kind: "other", element: "Track" } }),
        placemark({ name: "mixed", geometry: { kind: "MultiGeometry", geometries: [{ kind: "Point", positions: [[1, 2]] }, { kind: "other", element: "Model" }] } }),
        placemark({ name: "degenerate", geometry: { kind: "Polygon", outer: [[0, 0], [1, 1], [0, 0]], inner: [] } }),
        placemark({ name: "bare" }),
      ],
      leftOut: ["ScreenOverlay", "NetworkLink", "ScreenOverlay"],
    });
    expect(doc.name).toBe("Advisory");
    expect(doc.left_out).toEqual({ count: 6, kinds: { Model: 1, NetworkLink: 1, Polygon: 1, ScreenOverlay: 2, Track: 1 } });
    expect(doc.features.map((f) => [f.properties.name, f.geometry])).toEqual([
      ["track", null],
      ["mixed", { type: "MultiPoint", coordinates: [[1, 2]] }],
      ["degenerate", null],
      ["bare", null],
    ]);
    expect(doc.bbox).toEqual([1, 2, 1, 2]);
  });

  it("gives a bbox with the altitudes when positions have one", () => {
    const doc = forecasterGeoJson({
      placemarks: [placemark({ geometry: { kind: "Point", positions: [[-19.7, 63.98, 1491]] } }), placemark({ geometry: { kind: "LineString", positions: [[-20, 63], [-18, 64, 12]] } })],
      leftOut: [],
    });
    expect(doc.bbox).toEqual([-20, 63, 12, -18, 64, 1491]);
  });
});

describe("forecasterGeoJson properties", () => {
  it("reads the band from ExtendedData alone when it has one, else the Placemark's name, else the nearest container stating one", () => {
    const band = (p: Partial<KmlPlacemark>) => {
      const { band, lower_fl, upper_fl } = only(placemark(p)).properties;
      return [band, lower_fl, upper_fl];
    };
    expect(band({ extendedBand: "FL200/350", name: "SFC/FL200" })).toEqual(["FL200/350", 200, 350]);
    expect(band({ extendedBand: "upper", name: "SFC/FL200" })).toEqual([null, null, null]);
    expect(band({ name: "SFC/FL200", containers: ["FL350-550 areas"] })).toEqual(["SFC/FL200", 0, 200]);
    expect(band({ name: "Area A", containers: ["FL200-350 areas", "FL350/550"] })).toEqual(["FL200/350", 200, 350]);
    expect(band({ name: "Area A", containers: ["Forecast +6H", "Hekla advisory"] })).toEqual([null, null, null]);
    // Two bands in one name: which one is meant cannot be read.
    expect(band({ name: "FL200/350 and FL350/550", containers: ["FL200/350"] })).toEqual([null, null, null]);
  });

  it("gives TimeSpan begin and end as time and end, a TimeStamp as timestamp, null where absent", () => {
    expect(only(placemark({ time: { begin: "2024-05-01T12:00:00Z", end: "2024-05-01T18:00:00Z" } })).properties).toMatchObject({ time: "2024-05-01T12:00:00Z", end: "2024-05-01T18:00:00Z", timestamp: null });
    expect(only(placemark({ time: { end: "2024-05-01T18:00:00Z" } })).properties).toMatchObject({ time: null, end: "2024-05-01T18:00:00Z", timestamp: null });
    expect(only(placemark({ time: { when: "2024-05-01T12:00:00Z" } })).properties).toMatchObject({ time: null, end: null, timestamp: "2024-05-01T12:00:00Z" });
  });

  it("gives the name trimmed and the description as plain text", () => {
    const p = only(placemark({ name: "  Hekla\n", description: "<p>Ash <b>cloud</b> &amp; gas<br/>to FL350</p>" })).properties;
    expect(p).toEqual({ ...NO_PROPERTIES, name: "Hekla", description: "Ash cloud & gas\nto FL350" });
    expect(only(placemark({ name: "", description: "   " })).properties).toEqual(NO_PROPERTIES);
  });

  it("is deterministic: the same input gives the same JSON", () => {
    const input = { name: "x", placemarks: [placemark({ name: "a", geometry: { kind: "Point", positions: [[1, 2]] } })], leftOut: ["NetworkLink"] };
    expect(JSON.stringify(forecasterGeoJson(input))).toBe(
      '{"type":"FeatureCollection","name":"x","source":"forecaster","left_out":{"count":1,"kinds":{"NetworkLink":1}},"bbox":[1,2,1,2],"features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"source":"forecaster","name":"a","description":null,"band":null,"lower_fl":null,"upper_fl":null,"time":null,"end":null,"timestamp":null}}]}',
    );
  });
});

describe("readStatedBand", () => {
  it("reads the ways forecasters write a flight-level band, and nothing else", () => {
    expect(readStatedBand("SFC/FL200")).toEqual({ label: "SFC/FL200", lowerFl: 0, upperFl: 200 });
    expect(readStatedBand("FL200/350")).toEqual({ label: "FL200/350", lowerFl: 200, upperFl: 350 });
    for (const text of ["FL200-350", "FL200-FL350", "FL 200/350", "fl200–350 areas", "Band FL200/FL350 (forecast)"]) expect(readStatedBand(text)?.label, text).toBe("FL200/350");
    expect(readStatedBand("sfc-fl200")?.label).toBe("SFC/FL200");
    expect(readStatedBand("FL050/150")).toEqual({ label: "FL050/150", lowerFl: 50, upperFl: 150 });
    for (const text of ["Observation", "Forecast +6H", "2024-05-01T12:00:00Z", "200/350", "FL200", "AFL200/350", "FL200/3500"]) expect(readStatedBand(text), text).toBeUndefined();
    expect(readStatedBand("SFC/FL200, FL200/350")).toBeNull();
    expect(readStatedBand("FL350/200")).toBeNull();
    expect(readStatedBand("FL200/350 (FL200-350)")?.label).toBe("FL200/350");
  });
});
