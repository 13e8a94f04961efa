import { describe, it, expect } from "vitest";
import { readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { Issues } from "../../src/build/issues.ts";
import type { RunInputFile, WmsCapabilities } from "../../src/build/readers/types.ts";
import { wmsCapabilitiesReader } from "../../src/build/readers/wmsCapabilities.ts";
import { timesForLayer } from "../../src/time/wmsTimeDimension.ts";

const REAL = "/work/shared/data/real/wms-capabilities";
const FIXTURES = join(import.meta.dirname, "../fixtures/capabilities");

function fileAt(path: string): RunInputFile {
  return { name: basename(path), displayPath: `run/${basename(path)}`, absolutePath: path, size: statSync(path).size, bytes: async () => readFileSync(path) };
}

function fileOf(text: string, name = "capabilities.xml"): RunInputFile {
  const bytes = Buffer.from(text);
  return { name, displayPath: `run/${name}`, absolutePath: `/nowhere/${name}`, size: bytes.length, bytes: async () => bytes };
}

async function read(file: RunInputFile): Promise<{ capabilities?: WmsCapabilities; issues: Issues }> {
  const issues = new Issues();
  const reading = await wmsCapabilitiesReader.read(file, issues);
  if (reading === undefined) return { issues };
  if (reading.kind !== "wms-capabilities") throw new Error(`unexpected reading ${reading.kind}`);
  expect(reading.file).toBe(file);
  return { capabilities: reading.capabilities, issues };
}

const layer = (capabilities: WmsCapabilities | undefined, name: string) => capabilities?.layers.find((l) => l.name === name);
const window = (start: string, hours: number) => ({ startMs: Date.parse(start), endMs: Date.parse(start) + hours * 3_600_000 });

describe("wmsCapabilitiesReader.accepts", () => {
  const head = (path: string) => readFileSync(path).subarray(0, 512);

  it("claims capabilities documents of both versions by their first bytes", () => {
    expect(wmsCapabilitiesReader.accepts(fileAt(`${REAL}/thredds-ncwms-1.3.0-time-list.xml`), head(`${REAL}/thredds-ncwms-1.3.0-time-list.xml`))).toBe(true);
    expect(wmsCapabilitiesReader.accepts(fileAt(`${REAL}/mapserver-1.3.0-time-period.xml`), head(`${REAL}/mapserver-1.3.0-time-period.xml`))).toBe(true);
    expect(wmsCapabilitiesReader.accepts(fileAt(`${FIXTURES}/wms-1.1.1.xml`), head(`${FIXTURES}/wms-1.1.1.xml`))).toBe(true);
  });

  it("leaves other XML and other extensions alone", () => {
    const volcano = Buffer.from('<?xml version="1.0"?><volcanic_eruption_run run_time_hours="24"><volcano name="Hekla"/></volcanic_eruption_run>');
    expect(wmsCapabilitiesReader.accepts(fileOf("", "volcano.xml"), volcano)).toBe(false);
    expect(wmsCapabilitiesReader.accepts(fileOf("", "capabilities.txt"), Buffer.from('<WMS_Capabilities version="1.3.0">'))).toBe(false);
    expect(wmsCapabilitiesReader.accepts(fileOf("", "CAPS.XML"), Buffer.from('<WMS_Capabilities version="1.3.0">'))).toBe(true);
  });
});

describe("wmsCapabilitiesReader.read, real documents", () => {
  it("reads the THREDDS ncWMS document: seven named layers under unnamed categories, with their monthly times", async () => {
    const { capabilities, issues } = await read(fileAt(`${REAL}/thredds-ncwms-1.3.0-time-list.xml`));
    expect(issues.list).toEqual([]);
    expect(capabilities?.version).toBe("1.3.0");
    // Style names (boxfill/alg2, ...) are not layers.
    expect(capabilities?.layers.map((l) => l.name)).toEqual(["T", "S", "U", "V", "RHO", "WMO", "current"]);
    const t = layer(capabilities, "T");
    expect(t?.title).toBe("potential_temperature");
    expect(t?.extent).toEqual({ west: -180, east: 179, south: -90, north: 90 });
    // The elevation Dimension is not the time.
    const result = timesForLayer(t!.timeDimension!, window("2015-07-01T00:00:00Z", 72), 500);
    if (!("times" in result)) throw new Error(result.errors.join("\n"));
    expect(result.times).toHaveLength(271);
    expect(result.times[0]).toBe("1993-01-01T12:00:00Z");
    expect(result.times[1]).toBe("1993-02-01T12:00:00Z");
    expect(result.times.at(-1)).toBe("2015-07-01T12:00:00Z");
  });

  it("reads the MapServer document: the unnamed-time parent and its two time-enabled children", async () => {
    const { capabilities, issues } = await read(fileAt(`${REAL}/mapserver-1.3.0-time-period.xml`));
    expect(issues.list).toEqual([]);
    expect(capabilities?.layers.map((l) => [l.name, l.timeDimension])).toEqual([
      ["nexrad_base_reflect", undefined],
      ["time_idx", "1995-01-01/2015-12-31/PT5M"],
      ["nexrad-n0r-wmst", "1995-01-01/2015-12-31/PT5M"],
    ]);
    expect(layer(capabilities, "time_idx")?.extent).toEqual({ west: -126, east: -66, south: 24, north: 50 });
    const result = timesForLayer(layer(capabilities, "nexrad-n0r-wmst")!.timeDimension!, window("2006-06-23T03:00:00Z", 6), 500);
    expect("times" in result && [result.times.length, result.times[0], result.times.at(-1)]).toEqual([73, "2006-06-23T03:00:00Z", "2006-06-23T09:00:00Z"]);
  });
});

describe("wmsCapabilitiesReader.read, inheritance", () => {
  it("inherits time and extent from parents, and a child's own replaces them", async () => {
    const { capabilities, issues } = await read(fileAt(`${FIXTURES}/nested-inheritance-1.3.0.xml`));
    expect(capabilities?.layers.map((l) => l.name)).toEqual(["inherits_both", "own_time", "broken_box", "sibling_override"]);
    const iceland = { west: -25, east: -13, south: 63, north: 67 };
    const rootTime = "2024-05-01T00:00:00Z/2024-05-03T00:00:00Z/PT3H";
    expect(layer(capabilities, "inherits_both")).toEqual({ name: "inherits_both", title: "Inherits time from root and extent from group", timeDimension: rootTime, extent: iceland });
    expect(layer(capabilities, "own_time")?.timeDimension).toBe("2024-05-01T06:00:00Z,\n            2024-05-01T12:00:00Z");
    expect(layer(capabilities, "own_time")?.extent).toEqual(iceland);
    expect(layer(capabilities, "sibling_override")).toMatchObject({ timeDimension: rootTime, extent: { west: 170, east: -170, south: 50, north: 60 } });
    // An unusable box is reported as a warning and the parent's applies.
    expect(layer(capabilities, "broken_box")?.extent).toEqual(iceland);
    expect(issues.hasErrors).toBe(false);
    expect(issues.list).toHaveLength(1);
    expect(issues.list[0]).toMatchObject({
      severity: "warning",
      file: "run/nested-inheritance-1.3.0.xml",
      field: "Capability/Layer/Layer[1]/Layer[3]/EX_GeographicBoundingBox",
      message: "layer bounding box ignored: west=west east=-13 south=63 north=67 is not a box in degrees",
    });
  });

  it("ignores a LatLonBoundingBox with south above north, keeping the parent's", async () => {
    const { capabilities, issues } = await read(
      fileOf('<WMT_MS_Capabilities version="1.1.1"><Capability><Layer><LatLonBoundingBox minx="-10" miny="60" maxx="0" maxy="70"/><Layer><Name>a</Name><LatLonBoundingBox minx="-10" miny="70" maxx="0" maxy="60"/></Layer></Layer></Capability></WMT_MS_Capabilities>'),
    );
    expect(layer(capabilities, "a")?.extent).toEqual({ west: -10, east: 0, south: 60, north: 70 });
    expect(issues.list.map((i) => [i.severity, i.field, i.message])).toEqual([
      ["warning", "Capability/Layer/Layer/LatLonBoundingBox", "layer bounding box ignored: west=-10 east=0 south=70 north=60 is not a box in degrees"],
    ]);
  });

  it("reads WMS 1.1.1: time in Extent, LatLonBoundingBox attributes, inherited", async () => {
    const { capabilities, issues } = await read(fileAt(`${FIXTURES}/wms-1.1.1.xml`));
    expect(issues.list).toEqual([]);
    expect(capabilities).toEqual({
      version: "1.1.1",
      layers: [
        { name: "ash_fl000-200", title: "Ash SFC/FL200", timeDimension: "2024-05-01T00:00:00Z/2024-05-02T00:00:00Z/PT6H", extent: { west: -40, east: 20, south: 50, north: 75 } },
        { name: "ash_fl200-350", title: "Ash FL200/350", timeDimension: "2024-05-01T00:00:00Z,2024-05-01T12:00:00Z", extent: { west: -30.5, east: 10, south: 55, north: 70.25 } },
      ],
    });
  });
});

describe("wmsCapabilitiesReader.read, refused documents", () => {
  it("leaves time texts alone: a broken one is reported by timesForLayer, naming the bad items", async () => {
    const { capabilities, issues } = await read(fileAt(`${FIXTURES}/broken-times-1.3.0.xml`));
    expect(issues.list).toEqual([]);
    const result = timesForLayer(layer(capabilities, "ash_broken")!.timeDimension!, window("2024-05-01T00:00:00Z", 24), 100);
    const errors = "errors" in result ? result.errors : [];
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/^"2024-05-32T00:00:00Z" is not an instant/);
    expect(errors[1]).toMatch(/^"2024-05-01T00:00:00Z\/2024-05-02T00:00:00Z" is a range without a period/);
    expect(errors[2]).toMatch(/^"2024-05-01T00:00:00Z\/2024-05-02T00:00:00Z\/1H": period "1H" is not an ISO 8601 duration/);
  });

  it("refuses an entity bomb without expanding it", async () => {
    const { capabilities, issues } = await read(fileAt(`${FIXTURES}/entity-bomb.xml`));
    expect(capabilities).toBeUndefined();
    expect(issues.list).toHaveLength(1);
    expect(issues.list[0]).toMatchObject({ severity: "error", file: "run/entity-bomb.xml" });
    expect(issues.list[0]?.message).toMatch(/ENTITY/);
    expect(issues.list[0]?.fix).toMatch(/GetCapabilities/);
  });

  it("reads a 1.1.1 document with the DOCTYPE its servers write (no entity declared)", async () => {
    const withDoctype = readFileSync(`${FIXTURES}/wms-1.1.1.xml`, "utf8").replace(
      "<WMT_MS_Capabilities",
      '<!DOCTYPE WMT_MS_Capabilities SYSTEM "http://schemas.opengis.net/wms/1.1.1/WMS_MS_Capabilities.dtd" [ <!ELEMENT VendorSpecificCapabilities EMPTY> ]>\n<WMT_MS_Capabilities',
    );
    const withDoctypeRead = await read(fileOf(withDoctype));
    const plainRead = await read(fileAt(`${FIXTURES}/wms-1.1.1.xml`));
    expect(withDoctypeRead.issues.list).toEqual([]);
    expect(withDoctypeRead.capabilities).toEqual(plainRead.capabilities);
  });

  it("refuses text that is not XML", async () => {
    const { capabilities, issues } = await read(fileOf("<WMS_Capabilities version=\"1.3.0\"><Capability><Layer></Capability>"));
    expect(capabilities).toBeUndefined();
    expect(issues.list).toHaveLength(1);
    expect(issues.list[0]?.message).toMatch(/^not well-formed XML/);
  });

  it("refuses a file over 20 MiB without reading it", async () => {
    const huge: RunInputFile = { ...fileOf(""), size: 21 * 1024 * 1024, bytes: () => Promise.reject(new Error("must not be read")) };
    const { capabilities, issues } = await read(huge);
    expect(capabilities).toBeUndefined();
    expect(issues.list[0]?.message).toBe("file is 22020096 bytes, more than the 20971520 accepted");
  });

  it("refuses another kind of XML, naming its root", async () => {
    const { capabilities, issues } = await read(fileOf('<?xml version="1.0"?><ServiceExceptionReport version="1.3.0"><ServiceException>WMS_Capabilities unavailable</ServiceException></ServiceExceptionReport>'));
    expect(capabilities).toBeUndefined();
    expect(issues.list[0]?.message).toBe("not a WMS capabilities document: the root element is ServiceExceptionReport, expected WMS_Capabilities or WMT_MS_Capabilities");
  });

  it("refuses an empty root without a version", async () => {
    const { issues } = await read(fileOf("<WMS_Capabilities></WMS_Capabilities>"));
    expect(issues.list.map((i) => i.message)).toEqual(["WMS_Capabilities has no version attribute"]);
  });

  it("refuses a document without a version", async () => {
    const { issues } = await read(fileOf("<WMS_Capabilities><Capability><Layer><Name>a</Name></Layer></Capability></WMS_Capabilities>"));
    expect(issues.list[0]).toMatchObject({ severity: "error", field: "WMS_Capabilities", message: "WMS_Capabilities has no version attribute" });
  });

  it("refuses a document with no named layer", async () => {
    const { capabilities, issues } = await read(fileAt(`${FIXTURES}/no-named-layers.xml`));
    expect(capabilities).toBeUndefined();
    expect(issues.list).toEqual([
      {
        severity: "error",
        file: "run/no-named-layers.xml",
        field: "Capability/Layer",
        message: "the document has no layer with a Name",
        fix: "Use the capabilities of the WMS service that serves the run's layers; it must list them as Layer elements with a Name.",
      },
    ]);
  });
});
