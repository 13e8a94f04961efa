import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, describe, expect, it } from "vitest";
import { ashAreasKml, escapeXml, formatPosition, intervalName, type AshKmlInput } from "../../src/geo/ashKml.ts";
import { contourBands } from "../../src/geo/contourBands.ts";
import { isCounterClockwise, polygonAreaKm2, ringArea } from "../../src/geo/rings.ts";
import type { Position, ThresholdBand } from "../../src/geo/types.ts";
import { FLIGHT_LEVEL_BANDS, DEFAULT_THRESHOLDS_MG_M3 } from "../../src/model/types.ts";

const tool = (name: string): boolean => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
const HAS_OGR = tool("ogrinfo") && tool("ogr2ogr");
const HAS_XMLLINT = tool("xmllint");
const tmp = mkdtempSync(join(tmpdir(), "ashcast-kml-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TINY: AshKmlInput = {
  name: "Tiny",
  band: { id: "fl200-350", label: "FL200/350" },
  thresholds: [0.2, 2],
  units: "mg/m³",
  quantity: "maximum of 6-hour mean ash concentration",
  steps: [
    {
      time: "2024-05-01T12:00:00Z",
      end: "2024-05-01T18:00:00Z",
      bands: [
        {
          lower: 0.2,
          upper: 2,
          polygons: [
            {
              outer: [[-20, 63], [-18, 63], [-18, 65], [-20, 65], [-20, 63]],
              holes: [[[-19.5, 63.5], [-19.5, 64.5], [-18.5, 64.5], [-18.5, 63.5], [-19.5, 63.5]]],
            },
          ],
        },
        { lower: 2, upper: null, polygons: [{ outer: [[-19.5, 63.5], [-18.5, 63.5], [-18.5, 64.5], [-19.5, 64.5], [-19.5, 63.5]], holes: [] }] },
      ],
    },
    { time: "2024-05-01T18:00:00Z", end: "2024-05-02T00:00:00Z", bands: [{ lower: 0.2, upper: 2, polygons: [] }, { lower: 2, upper: null, polygons: [] }] },
  ],
};

const TINY_KML = `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>Tiny</name>
    <description>Maximum of 6-hour mean ash concentration, FL200/350: low 0.2–2 mg/m³, high ≥ 2 mg/m³.</description>
    <Style id="ash-0">
      <LineStyle><color>ffa8823e</color><width>2</width></LineStyle>
      <PolyStyle><color>99e9b456</color><fill>1</fill><outline>1</outline></PolyStyle>
    </Style>
    <Style id="ash-1">
      <LineStyle><color>ff1e1996</color><width>2</width></LineStyle>
      <PolyStyle><color>992a23d1</color><fill>1</fill><outline>1</outline></PolyStyle>
    </Style>
    <ExtendedData>
      <Data name="quantity"><value>maximum of 6-hour mean ash concentration</value></Data>
      <Data name="units"><value>mg/m³</value></Data>
      <Data name="thresholds"><value>0.2,2</value></Data>
      <Data name="classes"><value>low,high</value></Data>
    </ExtendedData>
    <Folder>
      <name>2024-05-01T12:00:00Z</name>
      <TimeSpan><begin>2024-05-01T12:00:00Z</begin><end>2024-05-01T18:00:00Z</end></TimeSpan>
      <Placemark>
        <name>FL200/350 low 0.2–2 mg/m³</name>
        <TimeSpan><begin>2024-05-01T12:00:00Z</begin><end>2024-05-01T18:00:00Z</end></TimeSpan>
        <styleUrl>#ash-0</styleUrl>
        <ExtendedData>
          <Data name="band"><value>FL200/350</value></Data>
          <Data name="bandId"><value>fl200-350</value></Data>
          <Data name="class"><value>low</value></Data>
          <Data name="lower"><value>0.2</value></Data>
          <Data name="upper"><value>2</value></Data>
          <Data name="units"><value>mg/m³</value></Data>
        </ExtendedData>
        <MultiGeometry>
          <Polygon>
            <tessellate>1</tessellate>
            <outerBoundaryIs><LinearRing><coordinates>-20,63 -18,63 -18,65 -20,65 -20,63</coordinates></LinearRing></outerBoundaryIs>
            <innerBoundaryIs><LinearRing><coordinates>-19.5,63.5 -19.5,64.5 -18.5,64.5 -18.5,63.5 -19.5,63.5</coordinates></LinearRing></innerBoundaryIs>
          </Polygon>
        </MultiGeometry>
      </Placemark>
      <Placemark>
        <name>FL200/350 high ≥ 2 mg/m³</name>
        <TimeSpan><begin>2024-05-01T12:00:00Z</begin><end>2024-05-01T18:00:00Z</end></TimeSpan>
        <styleUrl>#ash-1</styleUrl>
        <ExtendedData>
          <Data name="band"><value>FL200/350</value></Data>
          <Data name="bandId"><value>fl200-350</value></Data>
          <Data name="class"><value>high</value></Data>
          <Data name="lower"><value>2</value></Data>
          <Data name="units"><value>mg/m³</value></Data>
        </ExtendedData>
        <MultiGeometry>
          <Polygon>
            <tessellate>1</tessellate>
            <outerBoundaryIs><LinearRing><coordinates>-19.5,63.5 -18.5,63.5 -18.5,64.5 -19.5,64.5 -19.5,63.5</coordinates></LinearRing></outerBoundaryIs>
          </Polygon>
        </MultiGeometry>
      </Placemark>
    </Folder>
    <Folder>
      <name>2024-05-01T18:00:00Z</name>
      <TimeSpan><begin>2024-05-01T18:00:00Z</begin><end>2024-05-02T00:00:00Z</end></TimeSpan>
    </Folder>
  </Document>
</kml>
`;

/** A realistic whole-run input: a Gaussian plume drifting east on a regular 0.1° grid near Hekla, 4 steps, the last without ash. */
function plumeRun(): AshKmlInput {
  const nx = 120;
  const ny = 80;
  const toLonLat = (x: number, y: number): Position => [-24 + 0.1 * x, 66 - 0.1 * y];
  const steps = [0, 1, 2, 3].map((k) => {
    const values = new Float32Array(nx * ny);
    if (k < 3) {
      for (let y = 0; y < ny; y++) {
        for (let x = 0; x < nx; x++) {
          const dx = x - (30 + 25 * k);
          const dy = y - 40;
          // A stretched core plus a detached puff: two polygons in the low band.
          values[y * nx + x] = 12 * Math.exp(-(dx * dx) / 200 - (dy * dy) / 60) + 1.5 * Math.exp(-((dx - 30) ** 2 + (dy + 25) ** 2) / 20);
        }
      }
    }
    const time = `2024-05-01T${String(12 + 6 * k).padStart(2, "0")}:00:00Z`.replace("T24", "T00");
    return { time: k === 2 ? "2024-05-02T00:00:00Z" : k === 3 ? "2024-05-02T06:00:00Z" : time, end: "", bands: contourBands(values, nx, ny, DEFAULT_THRESHOLDS_MG_M3, toLonLat) };
  });
  steps.forEach((step, k) => (step.end = steps[k + 1]?.time ?? "2024-05-02T12:00:00Z"));
  const band = FLIGHT_LEVEL_BANDS[0];
  return {
    name: `Hekla 2024-05-01T12Z ${band.label}`,
    band: { id: band.id, label: band.label },
    thresholds: DEFAULT_THRESHOLDS_MG_M3,
    units: "mg/m³",
    quantity: "maximum of 6-hour mean ash concentration",
    steps,
    volcano: { name: "Hekla", lat: 63.98, lon: -19.7 },
  };
}

const ARRAYS = new Set(["Style", "Folder", "Placemark", "Polygon", "innerBoundaryIs", "Data"]);
const parse = (kml: Buffer): any =>
  new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_", parseTagValue: false, isArray: (name) => ARRAYS.has(name) }).parse(kml.toString("utf8"));
const coordinates = (text: string): Position[] => text.trim().split(/\s+/).map((p) => p.split(",").map(Number) as Position);

describe("ashAreasKml: bytes", () => {
  it("writes the exact expected document for a small input", () => {
    expect(ashAreasKml(TINY).toString("utf8")).toBe(TINY_KML);
  });

  it("is deterministic, well-formed and starts with the XML declaration", () => {
    const run = plumeRun();
    const a = ashAreasKml(run);
    const b = ashAreasKml(plumeRun());
    expect(a.equals(b)).toBe(true);
    expect(XMLValidator.validate(a.toString("utf8"))).toBe(true);
    expect(a.subarray(0, 38).toString()).toBe('<?xml version="1.0" encoding="UTF-8"?>');
  });

  it.skipIf(!HAS_XMLLINT)("passes xmllint --noout (skipped when libxml2-utils is absent)", () => {
    const path = join(tmp, "run.kml");
    writeFileSync(path, ashAreasKml(plumeRun()));
    const r = spawnSync("xmllint", ["--noout", path], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("escapes names and drops characters XML cannot carry", () => {
    const name = `Ash & "smoke" <test> 'q' \u0001\u0008 ok \uD800 🌋`;
    const kml = ashAreasKml({ ...TINY, name, band: { id: "x<1>", label: "SFC/FL200 & co" }, volcano: { name: "Eyjafjallajökull <E>", lat: 63.63, lon: -19.62 } });
    const text = kml.toString("utf8");
    expect(XMLValidator.validate(text)).toBe(true);
    const doc = parse(kml).kml.Document;
    expect(text).toContain("<name>Ash &amp; &quot;smoke&quot; &lt;test&gt; &apos;q&apos;  ok  🌋</name>");
    expect(doc.name).toBe(`Ash & "smoke" <test> 'q'  ok  🌋`);
    expect(doc.Placemark[0].name).toBe("Eyjafjallajökull <E>");
    expect(doc.Placemark[0].description).toBe("Eyjafjallajökull <E>, 63.63N 19.62W");
    expect(doc.Folder[0].Placemark[0].name).toBe("SFC/FL200 & co low 0.2–2 mg/m³");
    expect(escapeXml(`a&b<c>"d'`)).toBe("a&amp;b&lt;c&gt;&quot;d&apos;");
  });

  it("rounds coordinates to 4 decimals written as JSON writes them (no trailing zeros), never -0, and drops rings rounding collapses", () => {
    expect(formatPosition([-19.70004, 63.98])).toBe("-19.7,63.98");
    expect(formatPosition([-0.00001, 0.00004])).toBe("0,0");
    expect(formatPosition([-0.00005, 0.00005])).toBe("-0.0001,0.0001");
    expect(formatPosition([179.99996, -89.99996])).toBe("180,-90");
    expect(formatPosition([12.34567, -100.10009])).toBe("12.3457,-100.1001");
    for (const x of [0.1, -0.25, 14.4, 51.6943, -179.99999, 1e-4, 123.0456]) expect(formatPosition([x, x])).toBe(`${JSON.stringify(Number(x.toFixed(4)))},${JSON.stringify(Number(x.toFixed(4)))}`);
    const tinyRing: ThresholdBand = { lower: 0.2, upper: 2, polygons: [{ outer: [[0, 0], [0.00001, 0], [0.00001, 0.00001], [0, 0]], holes: [] }] };
    const text = ashAreasKml({ ...TINY, steps: [{ time: "t0", end: "t1", bands: [tinyRing] }] }).toString("utf8");
    expect(text).not.toContain("<Placemark>");
    expect(text).toContain("<Folder>");
  });

  it("writes outer rings counter-clockwise and holes clockwise whatever the input's orientation", () => {
    const reversed: AshKmlInput = {
      ...TINY,
      steps: [
        {
          ...TINY.steps[0]!,
          bands: TINY.steps[0]!.bands.map((b) => ({
            ...b,
            polygons: b.polygons.map((p) => ({ outer: p.outer.slice().reverse(), holes: p.holes.map((h) => h.slice().reverse()) })),
          })),
        },
        TINY.steps[1]!,
      ],
    };
    expect(ashAreasKml(reversed).toString("utf8")).toBe(TINY_KML);
  });

  it("cuts an area past 180° at the antimeridian, as its GeoJSON twin: longitudes within ±180, rings oriented, the area kept", () => {
    // A model grid across the antimeridian gives longitudes past 180: 178°E to 182°E (178°W), a hole on each side.
    const outer: Position[] = [[178, 50], [182, 50], [182, 52], [178, 52], [178, 50]];
    const holes: Position[][] = [
      [[178.5, 50.5], [178.5, 51.5], [179.5, 51.5], [179.5, 50.5], [178.5, 50.5]],
      [[180.5, 50.5], [180.5, 51.5], [181.5, 51.5], [181.5, 50.5], [180.5, 50.5]],
    ];
    const input: AshKmlInput = { ...TINY, steps: [{ ...TINY.steps[0]!, bands: [{ lower: 0.2, upper: 2, polygons: [{ outer, holes }] }] }] };
    const text = ashAreasKml(input).toString("utf8");
    const ring = (match: string): Position[] => match.split(" ").map((p) => p.split(",").map(Number) as Position);
    const outers = [...text.matchAll(/<outerBoundaryIs><LinearRing><coordinates>([^<]+)</g)].map((m) => ring(m[1]!));
    const inners = [...text.matchAll(/<innerBoundaryIs><LinearRing><coordinates>([^<]+)</g)].map((m) => ring(m[1]!));
    expect(outers.length).toBe(2); // one Polygon each side of 180°
    expect(inners.length).toBe(2);
    for (const r of [...outers, ...inners]) for (const [lon] of r) expect(Math.abs(lon)).toBeLessThanOrEqual(180);
    expect(outers.map((r) => Math.sign(r[0]![0]!)).sort()).toEqual([-1, 1]);
    for (const r of outers) expect(isCounterClockwise(r)).toBe(true);
    for (const r of inners) expect(isCounterClockwise(r)).toBe(false);
    // Areas in degrees², the western side moved back a turn: 8 of the whole less 2 × 1 of the holes.
    const unwrapped = (r: Position[]): Position[] => r.map(([lon, lat]) => [lon < 0 ? lon + 360 : lon, lat]);
    const area = [...outers, ...inners].reduce((sum, r) => sum + ringArea(unwrapped(r)), 0);
    expect(area).toBeCloseTo(8 - 2, 9);
    // An area within ±180 is written as it was (the bytes test above), and the same polygons give the same text again.
    expect(ashAreasKml(input).toString("utf8")).toBe(text);
  });

  it("names classes as aviation charts do", () => {
    expect(intervalName("SFC/FL200", { name: "low", lower: 0.2, upper: 2 })).toBe("SFC/FL200 low 0.2–2 mg/m³");
    expect(intervalName("FL350/550", { name: "high", lower: 4, upper: null })).toBe("FL350/550 high ≥ 4 mg/m³");
  });

  it("refuses a band whose lower value is not a threshold, and unordered thresholds", () => {
    const wrong = { ...TINY, steps: [{ time: "a", end: "b", bands: [{ lower: 0.5, upper: null, polygons: [] }] }] };
    expect(() => ashAreasKml(wrong)).toThrow(/Internal error: no class starts at 0.5 \(classes start at 0.2, 2\)/);
    expect(() => ashAreasKml({ ...TINY, thresholds: [2, 0.2] })).toThrow(/increase strictly/);
  });
});

describe("ashAreasKml: KML 2.2 structure", () => {
  const run = plumeRun();
  const kml = parse(ashAreasKml(run)).kml;
  const doc = kml.Document;

  it("has the KML 2.2 root, a Document, one Style per interval and the volcano", () => {
    expect(kml["@_xmlns"]).toBe("http://www.opengis.net/kml/2.2");
    expect(doc.name).toBe("Hekla 2024-05-01T12Z SFC/FL200");
    expect(doc.Style.map((s: any) => s["@_id"])).toEqual(["volcano", "ash-0", "ash-1", "ash-2"]);
    for (const style of doc.Style.slice(1)) {
      expect(style.LineStyle.width).toBe("2");
      expect(style.LineStyle.color).toMatch(/^ff[0-9a-f]{6}$/);
      expect(style.PolyStyle.color).toMatch(/^99[0-9a-f]{6}$/);
    }
    expect(doc.Placemark).toHaveLength(1);
    expect(doc.Placemark[0]).toMatchObject({ name: "Hekla", styleUrl: "#volcano", Point: { coordinates: "-19.7,63.98" } });
    expect(doc.Placemark[0].TimeSpan).toBeUndefined();
  });

  it("has a Folder with a TimeSpan per step, empty steps included, and Placemarks whose styleUrl exists", () => {
    const ids = new Set(doc.Style.map((s: any) => `#${s["@_id"]}`));
    expect(doc.Folder.map((f: any) => [f.name, f.TimeSpan.begin, f.TimeSpan.end])).toEqual(run.steps.map((s) => [s.time, s.time, s.end]));
    expect(doc.Folder.map((f: any) => (f.Placemark ?? []).length)).toEqual([3, 3, 3, 0]);
    for (const folder of doc.Folder.slice(0, 3)) {
      expect(folder.Placemark.map((p: any) => p.name)).toEqual(["SFC/FL200 low 0.2–2 mg/m³", "SFC/FL200 medium 2–4 mg/m³", "SFC/FL200 high ≥ 4 mg/m³"]);
      expect(folder.Placemark.map((p: any) => p.styleUrl)).toEqual(["#ash-0", "#ash-1", "#ash-2"]);
      for (const placemark of folder.Placemark) {
        expect(ids.has(placemark.styleUrl)).toBe(true);
        const data = Object.fromEntries(placemark.ExtendedData.Data.map((d: any) => [d["@_name"], d.value]));
        expect(data.band).toBe("SFC/FL200");
        expect(data.units).toBe("mg/m³");
        expect(Number(data.lower)).toBeGreaterThan(0);
        expect(placemark.TimeSpan).toEqual(folder.TimeSpan);
      }
      expect(folder.Placemark[2].ExtendedData.Data.map((d: any) => d["@_name"])).toEqual(["band", "bandId", "class", "lower", "units"]);
    }
  });

  it("holds closed, counter-clockwise outer rings and clockwise holes in MultiGeometry Polygons", () => {
    let polygons = 0;
    let holes = 0;
    for (const folder of doc.Folder.slice(0, 3)) {
      for (const placemark of folder.Placemark) {
        for (const polygon of placemark.MultiGeometry.Polygon) {
          polygons++;
          const outer = coordinates(polygon.outerBoundaryIs.LinearRing.coordinates);
          expect(outer.length).toBeGreaterThanOrEqual(4);
          expect(outer[0]).toEqual(outer[outer.length - 1]);
          expect(isCounterClockwise(outer)).toBe(true);
          for (const inner of polygon.innerBoundaryIs ?? []) {
            holes++;
            const ring = coordinates(inner.LinearRing.coordinates);
            expect(ring[0]).toEqual(ring[ring.length - 1]);
            expect(isCounterClockwise(ring)).toBe(false);
          }
          for (const p of outer) expect(p.every((v) => Number.isFinite(v))).toBe(true);
        }
      }
    }
    // Per step: low band = core ring with a hole + the detached puff; medium with a hole; high.
    expect(polygons).toBe(3 * 4);
    expect(holes).toBe(3 * 2);
  });
});

describe.skipIf(!HAS_OGR)(
  HAS_OGR ? "ashAreasKml: read by GDAL (ogrinfo, LIBKML and KML drivers)" : "ashAreasKml: read by GDAL — SKIPPED: ogrinfo not found, install Debian gdal-bin",
  () => {
    const run = plumeRun();
    const path = join(tmp, "hekla.kml");
    writeFileSync(path, ashAreasKml(run));
    const ogrinfo = (...args: string[]): string => {
      const r = spawnSync("ogrinfo", args, { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    /** Layer name → feature count and geometry type, from `ogrinfo -ro -al -so`. */
    const summary = (text: string): Record<string, { count: number; geometry: string }> => {
      const out: Record<string, { count: number; geometry: string }> = {};
      for (const block of text.split(/\n(?=Layer name: )/).slice(1)) {
        const name = /^Layer name: (.*)$/m.exec(block)![1]!;
        out[name] = { count: Number(/^Feature Count: (\d+)$/m.exec(block)![1]), geometry: /^Geometry: (.*)$/m.exec(block)![1]! };
      }
      return out;
    };

    it("LIBKML (the default driver) reads the volcano and one layer per Folder with the right feature counts", () => {
      const text = ogrinfo("-ro", "-al", "-so", path);
      expect(text).toContain("using driver `LIBKML' successful");
      const layers = summary(text);
      expect(Object.keys(layers)).toEqual([run.name, ...run.steps.map((s) => s.time)]);
      expect(layers[run.name]!.count).toBe(1);
      expect(run.steps.map((s) => layers[s.time]!.count)).toEqual([3, 3, 3, 0]);
      // Features are (multi)polygons with their ExtendedData as fields and the TimeSpan as begin/end.
      const full = ogrinfo("-ro", "-al", path, run.steps[0]!.time);
      expect(full.match(/^ {2}MULTIPOLYGON \(\(\(/gm)).toHaveLength(3);
      expect(full).toContain("band (String) = SFC/FL200");
      expect(full).toContain("upper (String) = 2");
      expect(full).toContain("begin (DateTime) = 2024/05/01 12:00:00+00");
      expect(full).toContain("end (DateTime) = 2024/05/01 18:00:00+00");
    });

    it("the older KML driver reads them as Multi Polygon layers too", () => {
      const text = ogrinfo("-ro", "-al", "-so", "--config", "OGR_SKIP", "LIBKML", path);
      expect(text).toContain("using driver `KML' successful");
      const layers = summary(text);
      expect(run.steps.slice(0, 3).map((s) => layers[s.time])).toEqual([0, 1, 2].map(() => ({ count: 3, geometry: "Multi Polygon" })));
      expect(layers[run.name]!.count).toBe(1);
    });

    it("GDAL reads back the same rings, holes and areas", () => {
      const step = run.steps[1]!;
      const r = spawnSync("ogr2ogr", ["-f", "GeoJSON", "/vsistdout/", path, step.time], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const geojson = JSON.parse(r.stdout) as { features: Array<{ properties: Record<string, unknown>; geometry: { type: string; coordinates: Position[][][] } }> };
      expect(geojson.features.map((f) => [f.properties.Name, f.geometry.type, f.geometry.coordinates.length, f.geometry.coordinates.map((p) => p.length - 1)])).toEqual([
        ["SFC/FL200 low 0.2–2 mg/m³", "MultiPolygon", 2, [1, 0]],
        ["SFC/FL200 medium 2–4 mg/m³", "MultiPolygon", 1, [1]],
        ["SFC/FL200 high ≥ 4 mg/m³", "MultiPolygon", 1, [0]],
      ]);
      geojson.features.forEach((feature, i) => {
        const ours = step.bands[i]!.polygons;
        feature.geometry.coordinates.forEach((polygon, k) => {
          expect(polygon[0]!.length).toBe(ours[k]!.outer.length);
          const area = Math.abs(polygonAreaKm2({ outer: polygon[0]!, holes: polygon.slice(1) }));
          expect(area / polygonAreaKm2(ours[k]!)).toBeCloseTo(1, 4);
          expect(Math.sign(ringArea(polygon[0]!))).toBe(1);
        });
      });
    });
  },
);
