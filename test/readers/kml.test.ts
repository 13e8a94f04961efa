import { readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { forecasterGeoJson } from "../../src/geo/forecasterGeoJson.ts";
import { Issues } from "../../src/build/issues.ts";
import { kmlReader } from "../../src/build/readers/kml.ts";
import type { KmlDocument, RunInputFile } from "../../src/build/readers/types.ts";
import { parseUntrustedXml } from "../../src/xml/safeXml.ts";

const FIXTURES = join(import.meta.dirname, "../fixtures/kml");
const HEKLA = join(FIXTURES, "hekla-advisory.kml");
const TIME_FIX = "write the time as an ISO 8601 date-time with its zone, e.g. 2024-05-01T12:00:00Z";
const COORDINATES_FIX =
  "write each position as lon,lat or lon,lat,alt in decimal degrees (longitude -180 to 180, latitude -90 to 90), positions separated by spaces";

async function fixture(path: string): Promise<RunInputFile> {
  return { name: basename(path), displayPath: `2024-05-hekla/${basename(path)}`, absolutePath: path, size: (await stat(path)).size, bytes: () => readFile(path) };
}

function inline(text: string, name = "advisory.kml"): RunInputFile {
  const bytes = Buffer.from(text, "utf8");
  return { name, displayPath: `2024-05-hekla/${name}`, absolutePath: `/runs/2024-05-hekla/${name}`, size: bytes.length, bytes: async () => bytes };
}

async function read(file: RunInputFile): Promise<{ kml: KmlDocument | undefined; issues: Issues["list"] }> {
  const issues = new Issues();
  const reading = await kmlReader.read(file, issues);
  if (reading && reading.kind !== "kml") throw new Error(`unexpected reading ${reading.kind}`);
  return { kml: reading?.kml, issues: issues.list };
}

async function readOk(file: RunInputFile): Promise<KmlDocument> {
  const { kml, issues } = await read(file);
  expect(issues).toEqual([]);
  return kml!;
}

/** `kml>Document>...` wrapped in a KML root, as most tests only need a Document. */
const kmlText = (document: string): string => `<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>${document}</Document></kml>`;

type Ordered = Record<string, unknown>;
const tag = (node: Ordered): string | undefined => Object.keys(node).find((key) => key !== ":@" && key !== "#text");
const kids = (node: Ordered): Ordered[] => (node[tag(node) ?? ""] as Ordered[] | undefined) ?? [];
const nameOf = (node: Ordered): string | undefined => {
  const name = kids(node).find((child) => tag(child) === "name");
  return name ? String(kids(name)[0]?.["#text"] ?? "") : undefined;
};

/** Names of the features (other than the Document) in a KML, a child as `Folder > child`. */
function featureNames(kml: Buffer): string[] {
  const visit = (nodes: Ordered[], prefix: string): string[] =>
    nodes.flatMap((node) => {
      const t = tag(node);
      if (t === "Folder" || t === "Document") return visit(kids(node), t === "Folder" ? `${prefix}${nameOf(node)} > ` : prefix);
      if (t === "Placemark" || t === "GroundOverlay") return [`${prefix}${nameOf(node)}`];
      return t === "kml" ? visit(kids(node), prefix) : [];
    });
  return visit(parseUntrustedXml(kml, { maxBytes: 1e8, preserveOrder: true }) as Ordered[], "");
}

function expectWellFormedKml(kml: Buffer): void {
  const text = kml.toString("utf8");
  expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2">')).toBe(true);
  expect(XMLValidator.validate(text)).toBe(true);
}

/** An untimed Folder with open-ended spans, an untimed Placemark and a timed overlay (forTime and features both read it). */
const PLUME_FOLDER =
  "<Folder><name>Plume</name>" +
  "<Placemark><name>from 06Z</name><TimeSpan><begin>2024-05-01T06:00:00Z</begin></TimeSpan></Placemark>" +
  "<Placemark><name>until 06Z</name><TimeSpan><end>2024-05-01T06:00:00Z</end></TimeSpan></Placemark>" +
  "<Placemark><name>untimed</name><Point><coordinates>-19.7,63.98</coordinates></Point></Placemark>" +
  "<GroundOverlay><name>satellite 09Z</name><TimeSpan><begin>2024-05-01T09:00:00Z</begin><end>2024-05-01T10:00:00Z</end></TimeSpan></GroundOverlay>" +
  "</Folder>";

describe("kmlReader.accepts", () => {
  it("takes .kml in any case and nothing else", () => {
    const accepts = (name: string) => kmlReader.accepts(inline("", name), Buffer.alloc(0));
    expect(["advisory.kml", "ADVISORY.KML", "a.Kml"].map(accepts)).toEqual([true, true, true]);
    expect(["advisory.kmz", "advisory.kml.part", "kml", "volcano.xml"].map(accepts)).toEqual([false, false, false, false]);
  });
});

describe("the Hekla advisory", () => {
  it("gives the document name, its times and the extent of all its coordinates", async () => {
    const file = await fixture(HEKLA);
    const kml = await readOk(file);
    expect(kml.name).toBe("Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)");
    expect(kml.times).toEqual(["2024-05-01T12:00:00Z", "2024-05-01T18:00:00Z", "2024-05-02T00:00:00Z"]);
    expect(kml.extent).toEqual({ north: 64.1, south: 61.9, east: -11.6, west: -19.9 });
    expect(kml.whole.equals(await readFile(HEKLA))).toBe(true);
  });

  it("is published whole as UTF-8, as its content type says: a Latin-1 or UTF-16 drawing re-encoded, its declaration to match", async () => {
    const text = (await readFile(HEKLA, "utf8")).replace("<name>Hekla ash advisory", "<name>Eyjafjallajökull and Hekla ash advisory");
    const declared = (encoding: string) => text.replace('encoding="UTF-8"', `encoding="${encoding}"`);
    const asBytes = (bytes: Buffer): RunInputFile => ({ ...inline(""), size: bytes.length, bytes: async () => bytes });
    const expected = Buffer.from(text, "utf8");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(declared("UTF-16"), "utf16le")]);
    for (const bytes of [Buffer.from(declared("ISO-8859-1"), "latin1"), utf16]) {
      const kml = await readOk(asBytes(bytes));
      expect(kml.name).toBe("Eyjafjallajökull and Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)");
      expect(kml.whole.toString("utf8")).toBe(text);
      expect(kml.whole.equals(expected)).toBe(true);
      const atNoon = kml.forTime("2024-05-01T12:00:00Z").toString("utf8");
      expect(atNoon).toContain("Eyjafjallajökull");
      expect(atNoon).not.toMatch(/encoding="(ISO-8859-1|UTF-16)"/);
    }
    // UTF-8 already: the bytes as given, a byte order mark included.
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), expected]);
    expect((await readOk(asBytes(withBom))).whole).toBe(withBom);
  });

  it.each([
    ["2024-05-01T11:59:59Z", []],
    ["2024-05-01T12:00:00Z", ["Observation"]],
    ["2024-05-01T17:59:59Z", ["Observation"]],
    ["2024-05-01T18:00:00Z", ["Forecast +6H"]],
    ["2024-05-01T21:30:00Z", ["Forecast +6H"]],
    ["2024-05-02T00:00:00Z", ["Forecast +12H"]],
    ["2024-05-02T06:00:00Z", []],
  ])("at %s keeps the volcano and the bands of %j", async (time, folders) => {
    const kml = await readOk(await fixture(HEKLA));
    const bands = folders.flatMap((folder) => ["SFC/FL200", "FL200/350", "FL350/550"].map((band) => `${folder} > ${band}`));
    expect(featureNames(kml.forTime(time))).toEqual(["Hekla", ...bands]);
  });

  it("writes a well-formed KML that reads back with one time, its own extent, styles and band data", async () => {
    const split = (await readOk(await fixture(HEKLA))).forTime("2024-05-01T12:00:00Z");
    expectWellFormedKml(split);
    const again = await readOk(inline(split.toString("utf8"), "split.kml"));
    expect(again.name).toBe("Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)");
    expect(again.times).toEqual(["2024-05-01T12:00:00Z"]);
    expect(again.extent).toEqual({ north: 64.1, south: 63.5, east: -17.6, west: -19.9 });
    const text = split.toString("utf8");
    expect(text.match(/<Style id="/g)).toHaveLength(4);
    expect(text).toContain("<value>FL350/550</value>");
    expect(again.forTime("2024-05-01T12:00:00Z").equals(split)).toBe(true);
  });

  it("escapes &, < and > on output, so decoded text and CDATA survive the round trip", async () => {
    const split = (await readOk(await fixture(HEKLA))).forTime("2024-05-01T12:00:00Z");
    const text = split.toString("utf8");
    expect(text).toContain("<name>Hekla ash advisory 2024-05-01 12Z (IMO &amp; VAAC London)</name>");
    expect(text).toContain("<description>Hekla, 63.98N 19.70W, summit 1491 m a.s.l. &lt;IMO &amp; VAAC London&gt;</description>");
    expect(text).toContain("<description>Analysis 12:00 UTC from satellite &amp; radar</description>");
    const document = (parseUntrustedXml(split, { maxBytes: 1e6 }) as { kml: { Document: { description: string } } }).kml.Document;
    expect(document.description).toBe("<p>Volcanic ash advisory for <b>Hekla</b>. Bands: SFC/FL200, FL200/350 & FL350/550.</p>");
  });

  it("gives the same bytes for the same instant however it is spelled", async () => {
    const kml = await readOk(await fixture(HEKLA));
    expect(kml.forTime("2024-05-01T18:00:00Z").equals(kml.forTime("2024-05-01T19:00:00+01:00"))).toBe(true);
    expect(kml.forTime("2024-05-01T18:00:00Z").equals(kml.forTime("2024-05-01T12:00:00Z"))).toBe(false);
  });
});

describe("time-filtered KML", () => {
  const stamps = kmlText(
    "<name>Ash &amp; steam</name>" +
      "<Placemark><name>12Z</name><TimeStamp><when>2024-05-01T12:00:00Z</when></TimeStamp><Point><coordinates>-19.7,63.98</coordinates></Point></Placemark>" +
      "<Placemark><name>13Z</name><TimeStamp><when>2024-05-01T14:00:00+01:00</when></TimeStamp><Point><coordinates>-19.5,64.1,0</coordinates></Point></Placemark>" +
      "<Placemark><name>18Z</name><TimeStamp><when>2024-05-01T18:00:00.250Z</when></TimeStamp><Point><coordinates>-18,63.5</coordinates></Point></Placemark>",
  );

  it("collects TimeStamps, normalised to the second", async () => {
    const kml = await readOk(inline(stamps));
    expect(kml.times).toEqual(["2024-05-01T12:00:00Z", "2024-05-01T13:00:00Z", "2024-05-01T18:00:00Z"]);
    expect(kml.name).toBe("Ash & steam");
  });

  it("keeps only the feature stamped with exactly that instant, in these bytes", async () => {
    const kml = await readOk(inline(stamps));
    expect(kml.forTime("2024-05-01T13:00:00Z").toString("utf8")).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<kml xmlns="http://www.opengis.net/kml/2.2">',
        "  <Document>",
        "    <name>Ash &amp; steam</name>",
        "    <Placemark>",
        "      <name>13Z</name>",
        "      <TimeStamp>",
        "        <when>2024-05-01T14:00:00+01:00</when>",
        "      </TimeStamp>",
        "      <Point>",
        "        <coordinates>-19.5,64.1,0</coordinates>",
        "      </Point>",
        "    </Placemark>",
        "  </Document>",
        "</kml>",
        "",
      ].join("\n"),
    );
    expect(featureNames(kml.forTime("2024-05-01T18:00:00Z"))).toEqual(["18Z"]);
    expect(featureNames(kml.forTime("2024-05-01T12:30:00Z"))).toEqual([]);
  });

  it("honours open-ended spans, and filters the timed children of an untimed Folder", async () => {
    const kml = await readOk(
      inline(
        kmlText(
          PLUME_FOLDER,
        ),
      ),
    );
    expect(kml.times).toEqual(["2024-05-01T06:00:00Z", "2024-05-01T09:00:00Z"]);
    expect(featureNames(kml.forTime("2024-05-01T05:59:59Z"))).toEqual(["Plume > until 06Z", "Plume > untimed"]);
    expect(featureNames(kml.forTime("2024-05-01T06:00:00Z"))).toEqual(["Plume > from 06Z", "Plume > untimed"]);
    expect(featureNames(kml.forTime("2024-05-01T09:30:00Z"))).toEqual(["Plume > from 06Z", "Plume > untimed", "Plume > satellite 09Z"]);
    expect(featureNames(kml.forTime("2030-01-01T00:00:00Z"))).toEqual(["Plume > from 06Z", "Plume > untimed"]);
  });

  it("drops a whole timed Document and still writes a well-formed KML", async () => {
    const kml = await readOk(inline(kmlText("<TimeSpan><begin>2024-05-01T06:00:00Z</begin></TimeSpan><Placemark><name>p</name><Point><coordinates>1,2</coordinates></Point></Placemark>")));
    const before = kml.forTime("2024-05-01T05:00:00Z");
    expectWellFormedKml(before);
    expect(before.toString("utf8")).not.toContain("Document");
    expect(featureNames(kml.forTime("2024-05-01T06:00:00Z"))).toEqual(["p"]);
  });

  it("has no times when untimed, and keeps everything at any time", async () => {
    const kml = await readOk(
      inline(kmlText("<Folder><name>Plume</name><Placemark><name>a</name><Point><coordinates>-19.7,63.98</coordinates></Point></Placemark><Placemark><name>b</name><Point><coordinates>-18,64</coordinates></Point></Placemark></Folder>")),
    );
    expect(kml.times).toEqual([]);
    expect(kml.name).toBe("Plume");
    expect(featureNames(kml.forTime("2024-05-01T12:00:00Z"))).toEqual(["Plume > a", "Plume > b"]);
  });

  it("writes gx: elements without their prefix under the KML namespace, still well-formed", async () => {
    const text = `<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Placemark><name>p</name><gx:balloonVisibility>1</gx:balloonVisibility><Point><coordinates>1,2</coordinates></Point></Placemark></kml>`;
    const split = (await readOk(inline(text))).forTime("2024-05-01T12:00:00Z");
    expectWellFormedKml(split);
    expect(split.toString("utf8")).toContain("<balloonVisibility>1</balloonVisibility>");
    expect(split.toString("utf8")).not.toContain("xmlns:gx");
  });

  it("refuses a forTime that is not an instant", async () => {
    const kml = await readOk(inline(stamps));
    expect(() => kml.forTime("noon")).toThrow(RangeError);
  });
});

describe("extent", () => {
  const extentOf = async (coordinates: string) => (await readOk(inline(kmlText(`<Placemark><LineString><coordinates>${coordinates}</coordinates></LineString></Placemark>`)))).extent;

  it("crosses the antimeridian (east < west) when that box is narrower", async () => {
    expect(await extentOf("170.5,50 -170.25,52 179,51")).toEqual({ north: 52, south: 50, east: -170.25, west: 170.5 });
  });

  it("spans the prime meridian the ordinary way", async () => {
    expect(await extentOf("-10,0\n\t10,1,500")).toEqual({ north: 1, south: 0, east: 10, west: -10 });
  });

  it("is absent, with a warning, when the KML has no coordinates", async () => {
    const { kml, issues } = await read(inline(kmlText("<name>empty</name>")));
    expect(kml?.extent).toBeUndefined();
    expect(kml?.name).toBe("empty");
    expect(issues).toEqual([
      {
        severity: "warning",
        file: "2024-05-hekla/advisory.kml",
        message: "the KML has no coordinates, so it adds nothing to the run's extent",
        fix: "check that its placemarks carry their geometry (nothing to do if it only holds overlays or links)",
      },
    ]);
  });
});

describe("geometries too small to be drawn", () => {
  it("are published as drawn, with a warning each naming the element: a ring of fewer than 3 distinct positions, a line of one, a Point of none or two", async () => {
    const placemark = (geometry: string) => `<Placemark><name>p</name>${geometry}</Placemark>`;
    const ring = (coordinates: string) => `<Polygon><outerBoundaryIs><LinearRing><coordinates>${coordinates}</coordinates></LinearRing></outerBoundaryIs></Polygon>`;
    const text = kmlText(
      [
        ring("-15.2,65.1 -16,66"), // 2 positions
        ring("-15.2,65.1 -16,66 -15.2,65.1"), // closed, but 2 distinct
        ring("-15.2,65.1 -16,66 -17,65"), // 3 distinct, not closed: fine (closed by readers)
        "<LineString><coordinates>-15,65</coordinates></LineString>",
        "<Point><coordinates> </coordinates></Point>",
        "<Point><coordinates>-15,65 -16,66</coordinates></Point>",
        "<Point><coordinates>-15,65</coordinates></Point>",
      ]
        .map(placemark)
        .join(""),
    );
    const { kml, issues } = await read(inline(text));
    expect(kml).toBeDefined();
    const field = (i: number, rest: string) => `kml/Document/Placemark[${i}]/${rest}`;
    expect(issues.map(({ severity, field, message }) => [severity, field, message])).toEqual([
      ["warning", field(1, "Polygon/outerBoundaryIs/LinearRing/coordinates"), "a polygon ring of 2 position(s): it needs 3 besides the closing one, so it is drawn nowhere and left out of the GeoJSON"],
      ["warning", field(2, "Polygon/outerBoundaryIs/LinearRing/coordinates"), "a polygon ring of 3 position(s): it needs 3 besides the closing one, so it is drawn nowhere and left out of the GeoJSON"],
      ["warning", field(4, "LineString/coordinates"), "a line of 1 position(s): it needs 2, so it is drawn nowhere and left out of the GeoJSON"],
      ["warning", field(5, "Point/coordinates"), "a Point with 0 positions: it needs exactly one, so it is left out of the GeoJSON"],
      ["warning", field(6, "Point/coordinates"), "a Point with 2 positions: it needs exactly one, so it is left out of the GeoJSON"],
    ]);
    // The same ones the GeoJSON twin leaves out.
    expect(forecasterGeoJson(kml!.features()).left_out).toEqual({ count: 5, kinds: { Polygon: 2, LineString: 1, Point: 2 } });
  });
});

describe("rings that cross themselves", () => {
  it("are published as drawn, with a warning naming the element and where it crosses, across the antimeridian too", async () => {
    const placemark = (coordinates: string) => `<Placemark><name>p</name><Polygon><outerBoundaryIs><LinearRing><coordinates>${coordinates}</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>`;
    const text = kmlText(
      [
        "-20,64 -18,66 -18,64 -20,66 -20,64", // a bow tie, crossing at -19,65
        "-20,64 -18,64 -18,66 -20,66 -20,64", // a square
        "179,10 -179,12 -179,10 179,12 179,10", // a bow tie across the antimeridian, crossing at 180,11
        "179,10 -179,10 -179,12 179,12 179,10", // a square across it, written within ±180: no crossing
        "0,80 120,80 -120,80 0,80", // around the pole: not looked at
      ]
        .map(placemark)
        .join(""),
    );
    const { kml, issues } = await read(inline(text));
    expect(kml).toBeDefined();
    const field = (i: number) => `kml/Document/Placemark[${i}]/Polygon/outerBoundaryIs/LinearRing/coordinates`;
    expect(issues.map(({ severity, field, message }) => [severity, field, message])).toEqual([
      ["warning", field(1), "a polygon ring that crosses itself near -19,65: viewers fill such a shape differently, so part of it may show as clear air"],
      ["warning", field(3), "a polygon ring that crosses itself near -180,11: viewers fill such a shape differently, so part of it may show as clear air"],
    ]);
    expect(issues[0]!.fix).toBe("draw it again as rings that do not cross (two areas as two polygons)");
  });
});

describe("rejected KML", () => {
  const errors = async (file: RunInputFile) => {
    const { kml, issues } = await read(file);
    expect(kml).toBeUndefined();
    return issues.map(({ severity, field, message, fix }) => ({ severity, field, message, fix }));
  };

  it("names each bad coordinates element and its first bad position", async () => {
    const placemark = (coordinates: string) => `<Placemark><LineString><coordinates>${coordinates}</coordinates></LineString></Placemark>`;
    const text = kmlText(["-19.7,63.9 19.7;63.9 bad", "-19.7,95", "-19.7,63.9,0,1", "-19.7, 63.9", "-19.7,63.9 0x10,1"].map(placemark).join(""));
    const field = (i: number) => `kml/Document/Placemark[${i}]/LineString/coordinates`;
    expect(await errors(inline(text))).toEqual([
      { severity: "error", field: field(1), message: 'position 2 "19.7;63.9" is not lon,lat or lon,lat,alt', fix: COORDINATES_FIX },
      { severity: "error", field: field(2), message: 'position 1 "-19.7,95" is outside longitude -180 to 180, latitude -90 to 90', fix: COORDINATES_FIX },
      { severity: "error", field: field(3), message: 'position 1 "-19.7,63.9,0,1" is not lon,lat or lon,lat,alt', fix: COORDINATES_FIX },
      { severity: "error", field: field(4), message: 'position 1 "-19.7," is not lon,lat or lon,lat,alt', fix: COORDINATES_FIX },
      { severity: "error", field: field(5), message: 'position 2 "0x10,1" is not lon,lat or lon,lat,alt', fix: COORDINATES_FIX },
    ]);
  });

  it("names the element and the text of a time that does not parse, and a span that ends before it begins", async () => {
    const text = kmlText(
      "<Folder><name>Observation</name><TimeSpan><begin>2024-05-01T12:00:00</begin><end>2024-05-01T18:00:00Z</end></TimeSpan></Folder>" +
        "<Placemark><name>a</name><TimeStamp><when>2024-05-01T12:00:00Z</when></TimeStamp></Placemark>" +
        "<Placemark><name>b</name><TimeStamp><when>yesterday noon</when></TimeStamp></Placemark>" +
        "<Placemark><name>c</name><TimeSpan><begin>2024-05-01T18:00:00Z</begin><end>2024-05-01T12:00:00Z</end></TimeSpan></Placemark>",
    );
    expect(await errors(inline(text))).toEqual([
      { severity: "error", field: "kml/Document/Folder/TimeSpan/begin", message: '"2024-05-01T12:00:00" is not an ISO 8601 date-time with a zone', fix: TIME_FIX },
      { severity: "error", field: "kml/Document/Placemark[2]/TimeStamp/when", message: '"yesterday noon" is not an ISO 8601 date-time with a zone', fix: TIME_FIX },
      {
        severity: "error",
        field: "kml/Document/Placemark[3]/TimeSpan/end",
        message: "the TimeSpan ends (2024-05-01T12:00:00Z) before it begins (2024-05-01T18:00:00Z)",
        fix: "give the end of the TimeSpan after its begin",
      },
    ]);
  });

  it("lists the first 20 problems and counts the rest", async () => {
    const text = kmlText(Array.from({ length: 25 }, () => "<Placemark><Point><coordinates>1;2</coordinates></Point></Placemark>").join(""));
    const issues = await errors(inline(text));
    expect(issues).toHaveLength(21);
    expect(issues[19]?.field).toBe("kml/Document/Placemark[20]/Point/coordinates");
    expect(issues[20]).toEqual({ severity: "error", field: undefined, message: "5 more problems like these are not listed", fix: "fix the problems above and check the file again" });
  });

  it("refuses an entity bomb before expanding anything", async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const issues = await errors(await fixture(join(FIXTURES, "billion-laughs.kml")));
    expect(issues).toEqual([
      {
        severity: "error",
        field: undefined,
        message: "the document declares an ENTITY, which is refused (entity expansion is a known attack)",
        fix: "export the KML again as plain KML 2.2: well-formed XML without ENTITY declarations, at most 50 MiB",
      },
    ]);
    // Expanded, &lol9; is 3 GB per use: anything near that means the bomb went off.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("reports XML that is not well-formed, a root other than <kml>, and a file too large to read", async () => {
    expect(await errors(inline("<kml><Document></kml>"))).toEqual([
      expect.objectContaining({ severity: "error", field: undefined, message: expect.stringMatching(/^not well-formed XML: Expected closing tag 'Document'/) }),
    ]);
    expect((await errors(inline('<gpx version="1.1"><wpt lat="1" lon="2"/></gpx>'))).map((i) => i.message)).toEqual(["root element is <gpx>, expected <kml>"]);
    const huge = { ...inline(""), size: 60 * 1024 * 1024, bytes: () => Promise.reject(new Error("must not be read")) };
    expect((await errors(huge)).map((i) => i.message)).toEqual(["file is 62914560 bytes, more than the 52428800 accepted"]);
  });
});

describe("features for the GeoJSON twin", () => {
  it("reads each Placemark's name, description, time (its own, else its container's), band sources and geometry as written", async () => {
    const kml = await readOk(await fixture(HEKLA));
    const all = kml.features();
    expect(all.name).toBe("Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)");
    expect(all.leftOut).toEqual([]);
    expect(all.placemarks).toHaveLength(10);
    expect(all.placemarks[0]).toEqual({
      name: "Hekla",
      description: "Hekla, 63.98N 19.70W, summit 1491 m a.s.l. <IMO & VAAC London>",
      containers: ["Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)"],
      geometry: { kind: "Point", positions: [[-19.7, 63.98, 1491]] },
    });
    expect(all.placemarks[4]).toEqual({
      name: "SFC/FL200",
      time: { begin: "2024-05-01T18:00:00Z", end: "2024-05-02T00:00:00Z" },
      extendedBand: "SFC/FL200",
      containers: ["Forecast +6H", "Hekla ash advisory 2024-05-01 12Z (IMO & VAAC London)"],
      geometry: { kind: "Polygon", outer: [[-19.9, 63.8, 0], [-16.8, 63.2, 0], [-16.2, 63.7, 0], [-19.5, 64.1, 0], [-19.9, 63.8, 0]], inner: [] },
    });
  });

  it("takes a TimeSpan that ends where it begins as an instant: its Placemarks are kept at that time, as a TimeStamp's", async () => {
    const kml = await readOk(
      inline(
        kmlText(
          "<Folder><name>Observation</name><TimeSpan><begin>2024-05-01T06:00:00Z</begin><end>2024-05-01T06:00:00Z</end></TimeSpan>" +
            "<Placemark><name>observed</name><Polygon><outerBoundaryIs><LinearRing><coordinates>-20,63 -18,63 -18,64 -20,63</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark></Folder>" +
            "<Folder><name>Forecast</name><TimeSpan><begin>2024-05-01T06:00:00Z</begin><end>2024-05-01T12:00:00Z</end></TimeSpan><Placemark><name>forecast</name><Point><coordinates>-19,63</coordinates></Point></Placemark></Folder>",
        ),
      ),
    );
    expect(kml.times).toEqual(["2024-05-01T06:00:00Z"]);
    expect(kml.features("2024-05-01T06:00:00Z").placemarks.map((p) => p.name)).toEqual(["observed", "forecast"]);
    expect(kml.features("2024-05-01T07:00:00Z").placemarks.map((p) => p.name)).toEqual(["forecast"]);
    expect(featureNames(kml.forTime("2024-05-01T06:00:00Z"))).toEqual(["Observation > observed", "Forecast > forecast"]);
  });

  it("keeps at each time the Placemarks forTime keeps, and counts there what has no GeoJSON counterpart", async () => {
    const kml = await readOk(
      inline(
        kmlText(
          "<ScreenOverlay><name>legend</name></ScreenOverlay>" + PLUME_FOLDER,
        ),
      ),
    );
    const names = (time?: string) => kml.features(time).placemarks.map((p) => p.name);
    for (const time of ["2024-05-01T05:59:59Z", "2024-05-01T06:00:00Z", "2024-05-01T09:30:00Z"]) {
      const kept = featureNames(kml.forTime(time)).filter((name) => !name.includes("satellite")).map((name) => name.replace("Plume > ", ""));
      expect(names(time), time).toEqual(kept);
    }
    expect(kml.features("2024-05-01T09:30:00Z").leftOut).toEqual(["ScreenOverlay", "GroundOverlay"]);
    expect(kml.features("2024-05-01T05:00:00Z").leftOut).toEqual(["ScreenOverlay"]);
    expect(kml.features().leftOut).toEqual(["ScreenOverlay", "GroundOverlay"]);
    expect(kml.features().placemarks[0]!.time).toEqual({ begin: "2024-05-01T06:00:00Z" });
    expect(kml.features().placemarks[1]!.time).toEqual({ end: "2024-05-01T06:00:00Z" });
    expect(kml.features().placemarks[2]!.time).toBeUndefined();
  });

  it("reads CDATA descriptions, SimpleData bands, MultiGeometry, inner rings and geometries with no GeoJSON counterpart", async () => {
    const kml = await readOk(
      inline(
        `<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document><name>d</name><Folder><name>FL200-350</name>` +
          `<Placemark><name>a</name><description><![CDATA[<b>ash</b> & steam]]></description><TimeStamp><when>2024-05-01T12:00:00+02:00</when></TimeStamp>` +
          `<ExtendedData><SchemaData schemaUrl="#s"><SimpleData name="Band">FL350/550</SimpleData></SchemaData></ExtendedData>` +
          `<MultiGeometry><Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></outerBoundaryIs>` +
          `<innerBoundaryIs><LinearRing><coordinates>0.5,0.1 0.9,0.1 0.9,0.5</coordinates></LinearRing></innerBoundaryIs></Polygon>` +
          `<LineString><coordinates>2,2,10 3,3,20</coordinates></LineString><gx:Track><gx:coord>1 2 3</gx:coord></gx:Track></MultiGeometry></Placemark>` +
          `</Folder></Document></kml>`,
      ),
    );
    expect(kml.features().placemarks).toEqual([
      {
        name: "a",
        description: "<b>ash</b> & steam",
        time: { when: "2024-05-01T10:00:00Z" },
        extendedBand: "FL350/550",
        containers: ["FL200-350", "d"],
        geometry: {
          kind: "MultiGeometry",
          geometries: [
            { kind: "Polygon", outer: [[0, 0], [1, 0], [1, 1], [0, 0]], inner: [[[0.5, 0.1], [0.9, 0.1], [0.9, 0.5]]] },
            { kind: "LineString", positions: [[2, 2, 10], [3, 3, 20]] },
            { kind: "other", element: "Track" },
          ],
        },
      },
    ]);
  });
});
