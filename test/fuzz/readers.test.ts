/**
 * Property tests of the run-input readers (run.json, volcano.xml, KML, WMS capabilities) and of the
 * server's reftime parameter. For any input, generated or a mutation of a real file, a reader either
 * returns a value that keeps its documented invariants or records errors naming the file, and never
 * throws. Valid generated inputs read back to the values they were made from.
 *
 * Replay a failure with ASHCAST_FUZZ_SEED=<seed> (fast-check prints the seed and the shrunk input);
 * ASHCAST_LONG_TESTS=1 runs twenty times as many cases (README.md, Quick start).
 */
import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatLonBoxModel, RUN_TYPES } from "../../src/contract/ashModel.ts";
import { Issues } from "../../src/build/issues.ts";
import { kmlReader } from "../../src/build/readers/kml.ts";
import { forecasterGeoJson } from "../../src/geo/forecasterGeoJson.ts";
import { manifestReader } from "../../src/build/readers/manifest.ts";
import type { InputReader, InputReading, RunInputFile } from "../../src/build/readers/types.ts";
import { volcanoXmlReader } from "../../src/build/readers/volcanoXml.ts";
import { wmsCapabilitiesReader } from "../../src/build/readers/wmsCapabilities.ts";
import { RunManifest } from "../../src/build/runManifest.ts";
import { reftimeParameter } from "../../src/server/select.ts";
import { formatInstant, normaliseInstant, parseInstant } from "../../src/time/instant.ts";
import { fuzzSeed, iterations } from "../stress.ts";

const REAL = "/work/shared/data/real";
const SEED = fuzzSeed();
console.log(`[fuzz readers] seed ${SEED} (rerun with ASHCAST_FUZZ_SEED=${SEED})`);
const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns: iterations(numRuns) });

/** An in-memory run file: these readers only call bytes() and look at size. */
function memoryFile(name: string, content: Buffer | string): RunInputFile {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return { name, displayPath: `2024-05-01-fuzz/${name}`, absolutePath: `/nonexistent/2024-05-01-fuzz/${name}`, size: bytes.length, bytes: async () => bytes };
}

/**
 * Reads `content` as `name` and checks the contract every reader shares: no throw; a reading, or at
 * least one error; every issue names this file and carries a message and a fix.
 */
async function readChecked(reader: InputReader, name: string, content: Buffer | string): Promise<{ reading: InputReading | undefined; issues: Issues }> {
  const file = memoryFile(name, content);
  const issues = new Issues();
  const reading = await reader.read(file, issues);
  for (const issue of issues.list) {
    expect(issue.file).toBe(file.displayPath);
    expect(issue.message).toMatch(/\S/);
    expect(issue.fix).toMatch(/\S/);
  }
  if (reading === undefined) expect(issues.hasErrors).toBe(true);
  else {
    expect(issues.hasErrors).toBe(false);
    expect(reading.kind).toBe(reader.kind);
    expect(reading.file).toBe(file);
  }
  return { reading, issues };
}

// ---- invariants of each reading ------------------------------------------------------------------

const isPublishedInstant = (text: string): boolean => normaliseInstant(text) === text;

function expectBox(box: unknown): void {
  expect(LatLonBoxModel.safeParse(box).success).toBe(true);
  const { south, north } = box as LatLonBoxModel;
  expect(south).toBeLessThanOrEqual(north);
}

function checkReading(reading: InputReading | undefined): void {
  if (reading === undefined) return;
  switch (reading.kind) {
    case "manifest": {
      expect(RunManifest.safeParse(reading.manifest).success).toBe(true);
      if (reading.manifest.reftime !== undefined) expect(parseInstant(reading.manifest.reftime)).toBeDefined();
      return;
    }
    case "volcano": {
      const v = reading.volcano;
      expect(v.name).toMatch(/\S/);
      expect(Math.abs(v.lat)).toBeLessThanOrEqual(90);
      expect(Math.abs(v.lon)).toBeLessThanOrEqual(180);
      expect(v.eruptions.length).toBeGreaterThan(0);
      for (const e of v.eruptions) {
        expect(isPublishedInstant(e.start) && isPublishedInstant(e.end)).toBe(true);
        expect(e.start <= e.end).toBe(true);
        expect(e.bottomM).toBeGreaterThanOrEqual(0);
        expect(e.topM).toBeGreaterThanOrEqual(e.bottomM);
        expect(e.topM).toBeGreaterThan(0);
      }
      if (v.modelStartTime !== undefined) expect(isPublishedInstant(v.modelStartTime)).toBe(true);
      if (v.runTimeHours !== undefined) expect(v.runTimeHours).toBeGreaterThan(0);
      return;
    }
    case "kml": {
      const { times, extent } = reading.kml;
      expect(times.every(isPublishedInstant)).toBe(true);
      expect([...new Set(times)].sort()).toEqual(times);
      if (extent) expectBox(extent);
      // Whatever the reader takes converts to GeoJSON (the twin the build publishes): longitudes within ±180.
      for (const time of [undefined, ...times.slice(0, 3)]) {
        const doc = forecasterGeoJson(reading.kml.features(time));
        expect(doc.left_out.count).toBeGreaterThanOrEqual(0);
        for (const lon of JSON.stringify(doc.features).matchAll(/\[(-?[\d.e+-]+),-?[\d.e+-]+[,\]]/g)) expect(Math.abs(Number(lon[1]))).toBeLessThanOrEqual(180);
      }
      return;
    }
    case "wms-capabilities": {
      expect(reading.capabilities.version).toMatch(/\S/);
      expect(reading.capabilities.layers.length).toBeGreaterThan(0);
      for (const layer of reading.capabilities.layers) {
        expect(layer.name).toMatch(/^\S(.*\S)?$/s);
        if (layer.extent) expectBox(layer.extent);
      }
      return;
    }
    case "model-output":
      throw new Error("not read here");
  }
}

/** A KML reading's split by time must itself be a KML the reader takes, holding no time it did not have. */
async function checkKmlSplit(reading: InputReading | undefined): Promise<void> {
  if (reading?.kind !== "kml") return;
  for (const time of reading.kml.times.slice(0, 3)) {
    const { reading: again } = await readChecked(kmlReader, "split.kml", reading.kml.forTime(time));
    expect(again?.kind).toBe("kml");
    if (again?.kind !== "kml") return;
    expect(again.kml.times.every((t) => reading.kml.times.includes(t))).toBe(true);
  }
}

// ---- generators ---------------------------------------------------------------------------------

/** Text that stresses XML and number parsing, kept short. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("", " ", "NaN", "Infinity", "-0", "1e400", "0x10", "1,2", "65.03", "-16.75", "7000", "&amp;", "&#0;", "&#x110000;", "&lt;", "]]>", "\u0000", "é", "\ud800"),
  fc.integer({ min: -400, max: 400 }).map(String),
  fc.double({ noNaN: false }).map(String),
);

const instantText = fc.oneof(
  fc.integer({ min: Date.UTC(-1, 0, 1), max: Date.UTC(9999, 11, 31) }).map((ms) => formatInstant(ms)),
  fc.constantFrom("2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01", "2024-05-01T12:00:00", "20240501T120000Z", "2024-05-01 12:00+02:00", "2024-05-01T12:00:00.999-00:30", "0000-01-01T00:00:00Z"),
  nastyText,
);

interface XmlElement {
  tag: string;
  attributes: Array<[string, string]>;
  text?: string;
  children: XmlElement[];
}

const escapeXml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function serialise(element: XmlElement): string {
  const attributes = element.attributes.map(([name, value]) => ` ${name}="${escapeXml(value)}"`).join("");
  const body = (element.text === undefined ? "" : escapeXml(element.text)) + element.children.map(serialise).join("");
  return `<${element.tag}${attributes}>${body}</${element.tag}>`;
}

/** Random documents over a reader's own vocabulary, so that generation reaches past the root check (depth at most 4). */
function xmlTree(tags: readonly string[], attributeNames: readonly string[], textOf: fc.Arbitrary<string>, depth = 4): fc.Arbitrary<XmlElement> {
  return fc.record({
    tag: fc.constantFrom(...tags),
    attributes: fc.uniqueArray(fc.tuple(fc.constantFrom(...attributeNames), textOf), { maxLength: 4, selector: ([name]) => name }),
    text: fc.option(textOf, { nil: undefined }),
    children: depth === 0 ? fc.constant([]) : fc.array(xmlTree(tags, attributeNames, textOf, depth - 1), { maxLength: 3 }),
  });
}

/** Mutations of a real file: cut, insert, duplicate, flip; the result stays under the reader's limit. */
function mutated(original: string): fc.Arbitrary<string> {
  const edit = fc.record({
    at: fc.nat({ max: original.length }),
    length: fc.nat({ max: 200 }),
    kind: fc.constantFrom("cut", "insert", "duplicate", "truncate", "swap-quote"),
    text: fc.oneof(nastyText, fc.constantFrom("<", ">", "</", "<!--", "-->", "<![CDATA[", "<!DOCTYPE x>", "<!ENTITY a 'b'>", '"', "'", "&", "<Layer>", "</Layer>", "<Name>x</Name>")),
  });
  return fc.array(edit, { minLength: 1, maxLength: 5 }).map((edits) =>
    edits.reduce((text, { at, length, kind, text: piece }) => {
      const i = Math.min(at, text.length);
      switch (kind) {
        case "cut":
          return text.slice(0, i) + text.slice(i + length);
        case "insert":
          return text.slice(0, i) + piece + text.slice(i);
        case "duplicate":
          return text.slice(0, i) + text.slice(i, i + length) + text.slice(i);
        case "truncate":
          return text.slice(0, i);
        default:
          return text.replace(/"/, "'");
      }
    }, original),
  );
}

// ---- found by these properties ------------------------------------------------------------------

describe("XML readers, regression", () => {
  // fast-xml-parser's validator passes `<?xml version='1.0" ...?>` and its parser then throws a plain Error
  // ("Pi Tag is not closed."): every XML reader let it through, and `ashcast check` ended in "Internal error".
  it.each([
    [volcanoXmlReader, "volcano.xml", "<volcanic_eruption_run/>"],
    [kmlReader, "advisory.kml", '<kml xmlns="http://www.opengis.net/kml/2.2"/>'],
    [wmsCapabilitiesReader, "capabilities.xml", '<WMS_Capabilities version="1.3.0"/>'],
  ] as const)("reports a declaration with mismatched quotes as a problem of the file (%#)", async (reader, name, body) => {
    const { reading, issues } = await readChecked(reader, name, `<?xml version='1.0" encoding="UTF-8"?>\n${body}`);
    expect(reading).toBeUndefined();
    expect(issues.list[0]?.message).toMatch(/not well-formed XML/);
  });
});

// ---- run.json -----------------------------------------------------------------------------------

describe("run.json reader (property)", () => {
  it("never throws, for any bytes, JSON value or near-manifest object", async () => {
    const nearManifest = fc.dictionary(
      fc.constantFrom("type", "description", "reftime", "report_url", "latlonbox", "forecast_hours", "layergroups", "$schema", "extra"),
      fc.oneof(fc.jsonValue({ maxDepth: 3 }), instantText, fc.constantFrom(...RUN_TYPES), fc.constantFrom("http://x.example/a", "https://x", "ftp://x", "javascript:alert(1)")),
      { maxKeys: 6 },
    );
    const input = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ maxLength: 300 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? ""),
      nearManifest.map((value) => JSON.stringify(value)),
    );
    await fc.assert(
      fc.asyncProperty(input, async (content) => {
        const { reading } = await readChecked(manifestReader, "run.json", content);
        checkReading(reading);
      }),
      params(300),
    );
  });

  it("reads a valid manifest back as written", async () => {
    const box = fc
      .record({ a: fc.double({ min: -90, max: 90, noNaN: true }), b: fc.double({ min: -90, max: 90, noNaN: true }), east: fc.double({ min: -180, max: 180, noNaN: true }), west: fc.double({ min: -180, max: 180, noNaN: true }) })
      .map(({ a, b, east, west }) => ({ north: Math.max(a, b), south: Math.min(a, b), east, west }));
    const layer = fc.oneof(
      fc.record({ type: fc.constant("KML" as const), name: fc.string({ minLength: 1, maxLength: 10 }), file: fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,10}$/) }),
      fc.record(
        { type: fc.constant("WMS" as const), name: fc.string({ minLength: 1, maxLength: 10 }), base_url: fc.constantFrom("https://wms.example/ash?LAYERS=a", "http://127.0.0.1:8080/wms"), times: fc.array(fc.integer({ min: 0, max: 4e12 }).map(formatInstant), { minLength: 1, maxLength: 3 }) },
        { requiredKeys: ["type", "name", "base_url"] },
      ),
    );
    const manifest = fc.record(
      {
        type: fc.constantFrom(...RUN_TYPES),
        description: fc.string({ minLength: 1, maxLength: 40 }),
        reftime: fc.integer({ min: 0, max: 4e12 }).map(formatInstant),
        report_url: fc.constantFrom("https://example.org/report", "http://vaac.example/x?y=1"),
        latlonbox: box,
        forecast_hours: fc.integer({ min: 1, max: 240 }),
        layergroups: fc.array(fc.record({ name: fc.string({ minLength: 1, maxLength: 10 }), layers: fc.array(layer, { minLength: 1, maxLength: 3 }) }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(manifest, async (written) => {
        const { reading, issues } = await readChecked(manifestReader, "run.json", JSON.stringify(written, null, 2));
        expect(issues.list).toEqual([]);
        // Through JSON, as a file carries it (-0 is written as 0).
        expect(reading?.kind === "manifest" && reading.manifest).toEqual(JSON.parse(JSON.stringify(written)));
      }),
      params(200),
    );
  });
});

// ---- volcano.xml --------------------------------------------------------------------------------

const VOLCANO_TAGS = ["volcanic_eruption_run", "model_setup", "weather_forecast", "volcano", "eruptions", "eruption", "other"] as const;
const VOLCANO_ATTRIBUTES = ["run_time_hours", "model_start_time", "name", "lat", "lon", "altitude", "start", "end", "bottom", "top", "rate", "m63"] as const;

describe("volcano.xml reader (property)", () => {
  it("never throws, for random documents over its vocabulary, mutations of the real SnapPy file and raw bytes", async () => {
    const real = await readFile(`${REAL}/snappy/volcano.xml`, "utf8");
    const tree = xmlTree(VOLCANO_TAGS, VOLCANO_ATTRIBUTES, fc.oneof(nastyText, instantText)).map((root) => serialise({ ...root, tag: "volcanic_eruption_run" }));
    const input = fc.oneof(tree, mutated(real), fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)));
    await fc.assert(
      fc.asyncProperty(input, async (content) => {
        const { reading } = await readChecked(volcanoXmlReader, "volcano.xml", content);
        checkReading(reading);
      }),
      params(400),
    );
  });

  it("reads a generated valid volcano.xml back to its values", async () => {
    const decimal = (min: number, max: number) => fc.integer({ min: min * 100, max: max * 100 }).map((n) => n / 100);
    const eruption = fc
      .record({ a: fc.integer({ min: 0, max: 4e9 }), b: fc.integer({ min: 0, max: 4e9 }), low: decimal(0, 20000), height: decimal(0.01, 20000), rate: fc.option(decimal(0, 1e7), { nil: undefined }), m63: fc.option(decimal(0, 1), { nil: undefined }) })
      .map(({ a, b, low, height, rate, m63 }) => ({ start: formatInstant(Math.min(a, b) * 1000), end: formatInstant(Math.max(a, b) * 1000), bottomM: low, topM: low + height, rateKgPerS: rate, m63 }));
    const volcano = fc.record({
      name: fc.stringMatching(/^[A-Za-z][A-Za-z &<>'"-]{0,15}[A-Za-z]$/),
      lat: decimal(-90, 90),
      lon: decimal(-180, 180),
      altitudeM: fc.option(decimal(-500, 7000), { nil: undefined }),
      eruptions: fc.array(eruption, { minLength: 1, maxLength: 4 }),
      modelStartTime: fc.option(fc.integer({ min: 0, max: 4e9 }).map((s) => formatInstant(s * 1000)), { nil: undefined }),
      runTimeHours: fc.option(fc.integer({ min: 1, max: 240 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(volcano, async (v) => {
        const attr = (name: string, value: string | number | undefined) => (value === undefined ? "" : ` ${name}="${escapeXml(String(value))}"`);
        const xml = [
          `<?xml version="1.0" encoding="UTF-8"?>`,
          `<volcanic_eruption_run${attr("run_time_hours", v.runTimeHours)}>`,
          `<model_setup><weather_forecast reference_date="best"${attr("model_start_time", v.modelStartTime)}/></model_setup>`,
          `<volcano${attr("name", v.name)}${attr("lat", v.lat)}${attr("lon", v.lon)}${attr("altitude", v.altitudeM)}/>`,
          `<eruptions>`,
          ...v.eruptions.map((e) => `<eruption${attr("start", e.start)}${attr("end", e.end)}${attr("bottom", e.bottomM)}${attr("top", e.topM)}${attr("rate", e.rateKgPerS)}${attr("m63", e.m63)}/>`),
          `</eruptions></volcanic_eruption_run>`,
        ].join("\n");
        const { reading, issues } = await readChecked(volcanoXmlReader, "volcano.xml", xml);
        expect(issues.list).toEqual([]);
        const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
        expect(reading?.kind === "volcano" && reading.volcano).toEqual({ ...defined(v), eruptions: v.eruptions.map(defined) });
      }),
      params(200),
    );
  });
});

// ---- KML ----------------------------------------------------------------------------------------

const KML_TAGS = ["kml", "Document", "Folder", "Placemark", "name", "TimeStamp", "TimeSpan", "when", "begin", "end", "Point", "Polygon", "LineString", "coordinates", "outerBoundaryIs", "LinearRing", "Style", "x:Placemark"] as const;

describe("KML reader (property)", () => {
  const coordinatesText = fc.oneof(
    fc.array(fc.tuple(fc.double({ min: -200, max: 200 }), fc.double({ min: -100, max: 100 })), { maxLength: 4 }).map((pairs) => pairs.map(([x, y]) => `${x},${y}`).join(" ")),
    nastyText,
  );

  it("never throws, for random documents over its vocabulary, mutations of a real advisory and raw bytes; a split by time reads again", async () => {
    const real = await readFile(new URL("../fixtures/kml/hekla-advisory.kml", import.meta.url), "utf8");
    const tree = xmlTree(KML_TAGS, ["id", "xmlns"], fc.oneof(nastyText, instantText, coordinatesText)).map((root) => `<?xml version="1.0"?>\n${serialise({ ...root, tag: "kml" })}`);
    const input = fc.oneof(tree, mutated(real), fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)));
    await fc.assert(
      fc.asyncProperty(input, async (content) => {
        const { reading } = await readChecked(kmlReader, "advisory.kml", content);
        checkReading(reading);
        await checkKmlSplit(reading);
      }),
      params(300),
    );
  });

  it("reads the times and extent of generated placemarks, and splits them by time exactly", async () => {
    const placemark = fc.record({
      when: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
      // Longitudes kept within -60..60, so the smallest box never crosses the antimeridian.
      points: fc.array(fc.tuple(fc.integer({ min: -6000, max: 6000 }), fc.integer({ min: -9000, max: 9000 })), { minLength: 1, maxLength: 4 }),
    });
    const hour = (h: number) => formatInstant(Date.UTC(2024, 4, 1, h));
    await fc.assert(
      fc.asyncProperty(fc.array(placemark, { minLength: 1, maxLength: 6 }), async (placemarks) => {
        const body = placemarks
          .map((p, i) => {
            const time = p.when === undefined ? "" : `<TimeStamp><when>${hour(p.when).replace("Z", "+00:00")}</when></TimeStamp>`;
            const coordinates = p.points.map(([x, y]) => `${x / 100},${y / 100}`).join(" ");
            return `<Placemark><name>p${i}</name>${time}<LineString><coordinates>${coordinates}</coordinates></LineString></Placemark>`;
          })
          .join("");
        const xml = `<?xml version="1.0" encoding="UTF-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>gen</name>${body}</Document></kml>`;
        const { reading, issues } = await readChecked(kmlReader, "gen.kml", xml);
        // A line of one position is said (drawn nowhere), and nothing else.
        const lines = placemarks.filter((p) => p.points.length < 2).map(() => "a line of 1 position(s): it needs 2, so it is drawn nowhere and left out of the GeoJSON");
        expect(issues.list.map((issue) => issue.message)).toEqual(lines);
        if (reading?.kind !== "kml") throw new Error("no KML reading");
        const times = [...new Set(placemarks.flatMap((p) => (p.when === undefined ? [] : [hour(p.when)])))].sort();
        expect(reading.kml.times).toEqual(times);
        expect(reading.kml.name).toBe("gen");
        const xs = placemarks.flatMap((p) => p.points.map(([x]) => x / 100));
        const ys = placemarks.flatMap((p) => p.points.map(([, y]) => y / 100));
        expect(reading.kml.extent).toEqual({ north: Math.max(...ys), south: Math.min(...ys), east: Math.max(...xs), west: Math.min(...xs) });
        for (const time of times) {
          const split = reading.kml.forTime(time).toString("utf8");
          const kept = [...split.matchAll(/<name>(p\d+)<\/name>/g)].map((m) => m[1]);
          const expected = placemarks.flatMap((p, i) => (p.when === undefined || hour(p.when) === time ? [`p${i}`] : []));
          expect(kept).toEqual(expected);
        }
      }),
      params(150),
    );
  });
});

// ---- WMS capabilities ---------------------------------------------------------------------------

const WMS_TAGS = ["WMS_Capabilities", "WMT_MS_Capabilities", "Capability", "Layer", "Name", "Title", "Dimension", "Extent", "EX_GeographicBoundingBox", "westBoundLongitude", "eastBoundLongitude", "southBoundLatitude", "northBoundLatitude", "LatLonBoundingBox"] as const;

describe("WMS capabilities reader (property)", () => {
  it("never throws, for random documents over its vocabulary, mutations of real capabilities and raw bytes", async () => {
    const small = await readFile(`${REAL}/wms-capabilities/mapserver-1.3.0-time-period.xml`, "utf8");
    const large = await readFile(`${REAL}/wms-capabilities/thredds-ncwms-1.3.0-time-list.xml`, "utf8");
    const tree = xmlTree(WMS_TAGS, ["version", "name", "minx", "maxx", "miny", "maxy", "units"], fc.oneof(nastyText, fc.constantFrom("time", "TIME", "1.3.0", "-180", "90", "2024-05-01T00:00:00Z/2024-05-02T00:00:00Z/PT1H"))).map(
      (root) => serialise({ ...root, tag: root.tag === "WMT_MS_Capabilities" ? root.tag : "WMS_Capabilities" }),
    );
    const input = fc.oneof({ arbitrary: tree, weight: 4 }, { arbitrary: mutated(small), weight: 4 }, { arbitrary: mutated(large), weight: 1 }, { arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), weight: 1 });
    await fc.assert(
      fc.asyncProperty(input, async (content) => {
        const { reading } = await readChecked(wmsCapabilitiesReader, "capabilities.xml", content);
        checkReading(reading);
      }),
      params(300),
    );
  });

  it("lists every named layer of a generated tree with the time and box it inherits", async () => {
    interface GenLayer {
      name?: string;
      time?: string;
      box?: [number, number, number, number];
      children: GenLayer[];
    }
    const layerTree = (depth: number): fc.Arbitrary<GenLayer> =>
      fc.record(
        {
          name: fc.stringMatching(/^[a-z][a-z0-9_:.-]{0,8}$/),
          time: fc.constantFrom("2024-05-01T00:00:00Z", "2024-05-01T00:00:00Z/2024-05-02T00:00:00Z/PT6H", "2024-05-01T00:00:00Z,2024-05-01T06:00:00Z"),
          box: fc.tuple(fc.integer({ min: -180, max: 0 }), fc.integer({ min: 0, max: 180 }), fc.integer({ min: -90, max: 0 }), fc.integer({ min: 0, max: 90 })),
          children: depth === 0 ? fc.constant([]) : fc.array(layerTree(depth - 1), { maxLength: 3 }),
        },
        { requiredKeys: ["children"] },
      );
    const layer = layerTree(3);
    const toXml = (l: GenLayer): string =>
      `<Layer>${l.name === undefined ? "" : `<Name>${l.name}</Name>`}<Title>t</Title>` +
      (l.time === undefined ? "" : `<Dimension name="time" units="ISO8601">${l.time}</Dimension>`) +
      (l.box === undefined ? "" : `<EX_GeographicBoundingBox><westBoundLongitude>${l.box[0]}</westBoundLongitude><eastBoundLongitude>${l.box[1]}</eastBoundLongitude><southBoundLatitude>${l.box[2]}</southBoundLatitude><northBoundLatitude>${l.box[3]}</northBoundLatitude></EX_GeographicBoundingBox>`) +
      `${l.children.map(toXml).join("")}</Layer>`;
    const flatten = (l: GenLayer, time: string | undefined, box: GenLayer["box"]): unknown[] => {
      const t = l.time ?? time;
      const b = l.box ?? box;
      const own = l.name === undefined ? [] : [{ name: l.name, title: "t", ...(t === undefined ? {} : { timeDimension: t }), ...(b === undefined ? {} : { extent: { west: b[0], east: b[1], south: b[2], north: b[3] } }) }];
      return [...own, ...l.children.flatMap((child) => flatten(child, t, b))];
    };
    await fc.assert(
      fc.asyncProperty(fc.array(layer, { minLength: 1, maxLength: 3 }), async (layers) => {
        const xml = `<?xml version="1.0"?><WMS_Capabilities version="1.3.0" xmlns="http://www.opengis.net/wms"><Service><Name>WMS</Name></Service><Capability>${layers.map(toXml).join("")}</Capability></WMS_Capabilities>`;
        const expected = layers.flatMap((l) => flatten(l, undefined, undefined));
        const { reading, issues } = await readChecked(wmsCapabilitiesReader, "capabilities.xml", xml);
        if (expected.length === 0) {
          expect(reading).toBeUndefined();
          return;
        }
        expect(issues.list).toEqual([]);
        expect(reading?.kind === "wms-capabilities" && reading.capabilities).toEqual({ version: "1.3.0", layers: expected });
      }),
      params(200),
    );
  });
});

// ---- reftime parameter --------------------------------------------------------------------------

describe("reftime parameter (property)", () => {
  it("reads every spelling of an instant (zones, separators, fractions, basic form, a '+' sent as a space) as that instant", () => {
    const spelling = fc.record({
      seconds: fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) / 1000 }),
      offsetMinutes: fc.integer({ min: -14 * 60, max: 14 * 60 }),
      separator: fc.constantFrom("T", "t", " "),
      colon: fc.boolean(),
      fraction: fc.constantFrom("", ".0", ".5", ".999999"),
      plusAsSpace: fc.boolean(),
    });
    fc.assert(
      fc.property(spelling, ({ seconds, offsetMinutes, separator, colon, fraction, plusAsSpace }) => {
        const local = new Date(seconds * 1000 + offsetMinutes * 60_000).toISOString().slice(0, 19).replace("T", separator);
        const abs = Math.abs(offsetMinutes);
        const sign = offsetMinutes < 0 ? "-" : plusAsSpace ? " " : "+";
        const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${colon ? ":" : ""}${String(abs % 60).padStart(2, "0")}`;
        const text = `${local}${fraction}${zone}`;
        // A space before the zone stands for '+' only when nothing else separates date and time by a space.
        if (sign === " " && separator === " ") return;
        const local0 = new Date(seconds * 1000 + offsetMinutes * 60_000);
        if (local0.getUTCFullYear() > 9999 || local0.getUTCFullYear() < 0) return;
        expect(reftimeParameter([text])).toBe(formatInstant(seconds * 1000));
        expect(reftimeParameter([formatInstant(seconds * 1000).replace(/[-:]/g, "")])).toBe(formatInstant(seconds * 1000));
      }),
      params(500),
    );
  });

  it("never throws, and answers a published instant, nothing, or a 400 problem", () => {
    fc.assert(
      // The server passes c.req.queries("reftime"): undefined when absent, else at least one value.
      fc.property(fc.option(fc.array(fc.oneof(instantText, fc.string({ maxLength: 40 })), { minLength: 1, maxLength: 3 }), { nil: undefined }), (values) => {
        const answer = reftimeParameter(values);
        if (values === undefined) expect(answer).toBeUndefined();
        else if (typeof answer === "string") expect(isPublishedInstant(answer)).toBe(true);
        else expect(answer).toMatchObject({ kind: "problem", status: 400 });
      }),
      params(500),
    );
  });
});
