/**
 * The GeoJSON resources against their contract (src/contract/geoJson.ts), as zod states it and as
 * /openapi.json publishes it (checked by ajv, an independent JSON Schema validator): ash areas drawn from
 * model output (with a volcano, across the antimeridian, a step without ash), and forecasters' KML as the
 * build converts it (the bundled runs' advisories and a fixture holding every KML geometry), whole and per time.
 * Bodies that break the contract are refused by both, so neither check is empty.
 */
import { readFile, readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { Issues } from "../../src/build/issues.ts";
import { kmlReader } from "../../src/build/readers/kml.ts";
import type { KmlDocument } from "../../src/build/readers/types.ts";
import { AshAreasGeoJson, ForecasterGeoJson } from "../../src/contract/geoJson.ts";
import { ashAreasGeoJson, type AshGeoJson } from "../../src/geo/ashGeoJson.ts";
import { forecasterGeoJson } from "../../src/geo/forecasterGeoJson.ts";
import type { ThresholdBand } from "../../src/geo/types.ts";
import { openApiDocument } from "../../src/server/openapi.ts";
import { documentAjv } from "../server/documentAjv.ts";

const ROOT = join(import.meta.dirname, "../..");
const DOC_ID = "https://ashcast.test/openapi.json";
const document = openApiDocument() as { components: { schemas: Record<string, unknown> } };
const ajv = documentAjv(document, DOC_ID);
const published = (name: string): ValidateFunction => ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
const ashPublished = published("AshAreasGeoJson");
const forecasterPublished = published("ForecasterGeoJson");

function expectValid(body: unknown, schema: typeof AshAreasGeoJson | typeof ForecasterGeoJson, validate: ValidateFunction, label: string): void {
  const parsed = schema.safeParse(body);
  expect(parsed.success, `${label} (zod): ${parsed.error?.message ?? ""}`).toBe(true);
  expect(validate(body), `${label} (the published document): ${ajv.errorsText(validate.errors)}`).toBe(true);
}

async function readKml(path: string): Promise<KmlDocument> {
  const issues = new Issues();
  const reading = await kmlReader.read({ name: basename(path), displayPath: path, absolutePath: path, size: (await stat(path)).size, bytes: () => readFile(path) }, issues);
  if (reading?.kind !== "kml") throw new Error(`${path}: ${JSON.stringify(issues.list)}`);
  return reading.kml;
}

const plume: ThresholdBand = { lower: 0.2, upper: 2, polygons: [{ outer: [[-20, 60], [-18, 60], [-18, 62], [-20, 62], [-20, 60]], holes: [[[-19.5, 60.5], [-19, 61], [-19.5, 61], [-19.5, 60.5]]] }] };
const core: ThresholdBand = { lower: 4, upper: null, polygons: [{ outer: [[-19.2, 60.8], [-19, 60.8], [-19, 61], [-19.2, 60.8]], holes: [] }] };
const acrossDateLine: ThresholdBand = { lower: 2, upper: 4, polygons: [{ outer: [[179, 50], [181, 50], [181, 51], [179, 51], [179, 50]], holes: [] }] };

const parsedGeoJson = (input: Parameters<typeof ashAreasGeoJson>[0]): AshGeoJson => JSON.parse(ashAreasGeoJson(input).toString("utf8")) as AshGeoJson;

const ashAreas = (bands: ThresholdBand[][], volcano?: { name: string; lat: number; lon: number }, missing: Array<number | undefined> = []): AshGeoJson =>
  parsedGeoJson({
    name: "FL200/350 ash areas, run 2026-06-01T00:00:00Z",
    band: { id: "fl200-350", label: "FL200/350" },
    quantity: "6-hour maximum concentration",
    thresholds: [0.2, 2, 4],
    units: "mg/m³",
    steps: bands.map((areas, t) => ({ time: `2026-06-01T0${t}:00:00Z`, end: `2026-06-01T0${t + 1}:00:00Z`, bands: areas, missingShare: missing[t] })),
    ...(volcano ? { volcano } : {}),
  });

describe("GeoJSON ash areas from model output", () => {
  it("keep their contract: with a volcano, holes, the highest class, a step without ash, and across the antimeridian", () => {
    expectValid(ashAreas([[plume, core], []], { name: "Hekla", lat: 63.98, lon: -19.7 }), AshAreasGeoJson, ashPublished, "Hekla");
    expectValid(ashAreas([[acrossDateLine]], { name: "Kiska", lat: 52.1, lon: 177.6 }), AshAreasGeoJson, ashPublished, "across 180°");
    expectValid(ashAreas([[]]), AshAreasGeoJson, ashPublished, "no ash, no volcano");
    const withMissing = ashAreas([[plume], []], undefined, [0.032, 1 / 12]);
    expect(withMissing.features.map((f) => f.properties.kind)).toEqual(["no-value", "ash", "no-value"]);
    expectValid(withMissing, AshAreasGeoJson, ashPublished, "cells without a value");
  });

  it("are refused when they break it: a longitude past 180, an open ring, an unknown class, a field added, an ash area without geometry", () => {
    const good = ashAreas([[plume]]);
    const broken = [
      (doc: any) => (doc.features[0].geometry.coordinates[0][0][1][0] = 181),
      (doc: any) => doc.features[0].geometry.coordinates[0][0].splice(1, 2),
      (doc: any) => (doc.features[0].properties.class = "purple"),
      (doc: any) => (doc.features[0].properties.colour = "#ff0000"),
      (doc: any) => (doc.features[0].geometry = null),
    ];
    for (const [i, breakIt] of broken.entries()) {
      const doc = structuredClone(good) as unknown;
      breakIt(doc);
      expect(AshAreasGeoJson.safeParse(doc).success, `zod, change ${i}`).toBe(false);
      expect(ashPublished(doc), `the published document, change ${i}`).toBe(false);
    }
    // A step's missing values: a share of the grid strictly between 0 and 1, and no geometry.
    const missing = ashAreas([[]], undefined, [0.25]);
    for (const breakIt of [(doc: any) => (doc.features[0].properties.share = 1), (doc: any) => (doc.features[0].geometry = { type: "Point", coordinates: [0, 0] })]) {
      const doc = structuredClone(missing) as unknown;
      breakIt(doc);
      expect(AshAreasGeoJson.safeParse(doc).success).toBe(false);
      expect(ashPublished(doc)).toBe(false);
    }
  });
});

describe("GeoJSON of forecasters' KML", () => {
  it("keeps its contract for the bundled runs' advisories and every KML geometry, whole and per time", async () => {
    const runs = join(ROOT, "runs");
    const files = [join(ROOT, "test/fixtures/kml/hekla-advisory.kml"), join(ROOT, "test/fixtures/kml/geometries.kml")];
    for (const run of await readdir(runs)) for (const name of await readdir(join(runs, run))) if (name.endsWith(".kml")) files.push(join(runs, run, name));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const kml = await readKml(file);
      for (const time of [undefined, ...kml.times]) {
        const body = forecasterGeoJson(kml.features(time));
        expect(body.features.length + body.left_out.count, `${file} ${time ?? "whole"}: something converted`).toBeGreaterThan(0);
        expectValid(body, ForecasterGeoJson, forecasterPublished, `${basename(file)} ${time ?? "whole"}`);
      }
    }
  });

  it("is refused when it breaks it: a latitude past 90, a time that is no instant", async () => {
    const good = forecasterGeoJson((await readKml(join(ROOT, "test/fixtures/kml/hekla-advisory.kml"))).features());
    const withPoint = good.features.findIndex((f) => f.geometry?.type === "Point");
    expect(withPoint).toBeGreaterThanOrEqual(0);
    const badLatitude = structuredClone(good) as any;
    badLatitude.features[withPoint].geometry.coordinates[1] = 91;
    const badTime = structuredClone(good) as any;
    badTime.features[0].properties.time = "noon";
    for (const doc of [badLatitude, badTime]) {
      expect(ForecasterGeoJson.safeParse(doc).success).toBe(false);
      expect(forecasterPublished(doc)).toBe(false);
    }
  });
});
