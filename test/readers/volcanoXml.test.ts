import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Issues } from "../../src/build/issues.ts";
import type { RunInputFile, VolcanoDescription } from "../../src/build/readers/types.ts";
import { describeEruption, volcanoXmlReader } from "../../src/build/readers/volcanoXml.ts";

const REAL_VOLCANO_XML = "/work/shared/data/real/snappy/volcano.xml";

async function inputFile(absolutePath: string, displayPath: string): Promise<RunInputFile> {
  return { name: basename(absolutePath), displayPath, absolutePath, size: (await stat(absolutePath)).size, bytes: () => readFile(absolutePath) };
}

async function read(file: RunInputFile) {
  const issues = new Issues();
  const reading = await volcanoXmlReader.read(file, issues);
  return { reading, issues: issues.list };
}

const tempDirs: string[] = [];
afterAll(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** The real file with `replace` applied, written to a fresh temp run folder as volcano.xml. */
async function variant(replace: (xml: string) => string): Promise<RunInputFile> {
  const dir = await mkdtemp(join(tmpdir(), "ashcast-volcano-"));
  tempDirs.push(dir);
  const path = join(dir, "volcano.xml");
  await writeFile(path, replace(await readFile(REAL_VOLCANO_XML, "utf8")));
  return inputFile(path, "2016-askja/volcano.xml");
}

const askja: VolcanoDescription = {
  name: "Askja",
  lat: 65.03,
  lon: -16.75,
  altitudeM: 1516,
  eruptions: [{ start: "2016-11-03T08:00:00Z", end: "2016-11-03T08:00:00Z", bottomM: 0, topM: 7000, rateKgPerS: 100000, m63: 0.05 }],
  modelStartTime: "2016-11-03T00:00:00Z",
  runTimeHours: 48,
};

describe("volcanoXmlReader", () => {
  it("accepts only the file named volcano.xml", async () => {
    const file = await inputFile(REAL_VOLCANO_XML, "snappy/volcano.xml");
    expect(volcanoXmlReader.accepts(file, Buffer.alloc(0))).toBe(true);
    expect(volcanoXmlReader.accepts({ ...file, name: "Volcano.xml" }, Buffer.alloc(0))).toBe(false);
    expect(volcanoXmlReader.accepts({ ...file, name: "volcano.xml.part" }, Buffer.alloc(0))).toBe(false);
  });

  it("reads the real SnapPy volcano.xml field by field", async () => {
    const file = await inputFile(REAL_VOLCANO_XML, "snappy/volcano.xml");
    const { reading, issues } = await read(file);
    expect(issues).toEqual([]);
    expect(reading).toStrictEqual({ kind: "volcano", file, volcano: askja });
  });

  it("reports a missing lat with its field and returns nothing", async () => {
    const { reading, issues } = await read(await variant((xml) => xml.replace(' lat="65.03"', "")));
    expect(reading).toBeUndefined();
    expect(issues).toEqual([
      { severity: "error", file: "2016-askja/volcano.xml", field: "volcano/@lat", message: "missing lat", fix: 'set lat to the latitude in decimal degrees, -90 to 90, e.g. lat="65.03"' },
    ]);
  });

  it("reports a latitude out of range", async () => {
    const { reading, issues } = await read(await variant((xml) => xml.replace('lat="65.03"', 'lat="123"')));
    expect(reading).toBeUndefined();
    expect(issues.map((i) => [i.field, i.message])).toEqual([["volcano/@lat", "lat 123 is out of range"]]);
  });

  it("reports an eruption that ends before it starts", async () => {
    const { reading, issues } = await read(await variant((xml) => xml.replace('end="2016-11-03T08:00:00Z"', 'end="2016-11-03T07:00:00Z"')));
    expect(reading).toBeUndefined();
    expect(issues.map((i) => [i.field, i.message])).toEqual([["eruptions/eruption[1]/@end", "end 2016-11-03T07:00:00Z is before start 2016-11-03T08:00:00Z"]]);
  });

  it("reports two <eruptions> blocks as such, not as a block without an eruption", async () => {
    const { reading, issues } = await read(await variant((xml) => xml.replace(/(<eruptions>[\s\S]*?<\/eruptions>)/, "$1$1")));
    expect(reading).toBeUndefined();
    expect(issues.map((i) => [i.field, i.message, i.fix])).toEqual([["eruptions", "2 <eruptions> elements, expected one", "put every <eruption> of the run inside one <eruptions>"]]);
  });

  it("numbers the eruption and names the attribute of a bad time, a bad number and an inverted column", async () => {
    const second = '<eruption start="tomorrow" end="2016-11-03T12:00:00Z" bottom="9000" top="8000" rate="lots"/>';
    const { reading, issues } = await read(await variant((xml) => xml.replace("</eruptions>", `${second}</eruptions>`)));
    expect(reading).toBeUndefined();
    expect(issues.map((i) => [i.field, i.message])).toEqual([
      ["eruptions/eruption[2]/@start", 'start "tomorrow" is not an ISO 8601 date-time with a zone'],
      ["eruptions/eruption[2]/@rate", 'rate "lots" is not a decimal number'],
      ["eruptions/eruption[2]/@top", "top 8000 m is below bottom 9000 m"],
    ]);
  });

  it("rejects hexadecimal, infinite and empty numbers", async () => {
    const { issues } = await read(await variant((xml) => xml.replace('lon="-16.75"', 'lon="0x10"').replace('altitude="1516"', 'altitude="Infinity"').replace('top="7000"', 'top=""')));
    expect(issues.map((i) => i.field)).toEqual(["volcano/@lon", "volcano/@altitude", "eruptions/eruption[1]/@top"]);
  });

  it("reports a file that is not XML, and a wrong root, without a field", async () => {
    const notXml = await read(await variant(() => "name=Askja\nlat=65.03\n"));
    expect(notXml.reading).toBeUndefined();
    expect(notXml.issues).toEqual([
      {
        severity: "error",
        file: "2016-askja/volcano.xml",
        message: "not well-formed XML: char 'n' is not expected. (line 1, column 1)",
        fix: "write volcano.xml as the model chain does: well-formed XML without ENTITY declarations, at most 1 MiB",
      },
    ]);

    const wrongRoot = await read(await variant(() => '<eruption_run><volcano name="Askja" lat="1" lon="2"/></eruption_run>'));
    expect(wrongRoot.issues.map((i) => [i.field, i.message])).toEqual([[undefined, "root element is <eruption_run>, expected <volcanic_eruption_run>"]]);
  });

  it("refuses an ENTITY declaration and a file over 1 MiB before reading it", async () => {
    const doctype = await read(await variant((xml) => xml.replace("<volcanic_eruption_run", '<!DOCTYPE x [<!ENTITY a "b">]>\n<volcanic_eruption_run')));
    expect(doctype.issues[0]?.message).toMatch(/ENTITY/);

    const file = await inputFile(REAL_VOLCANO_XML, "big/volcano.xml");
    const huge = await read({ ...file, size: 2 * 1024 * 1024, bytes: () => Promise.reject(new Error("must not be read")) });
    expect(huge.issues.map((i) => i.message)).toEqual(["file is 2097152 bytes, more than the 1048576 accepted"]);
  });
});

describe("describeEruption", () => {
  it("describes the real Askja run", () => {
    expect(describeEruption(askja)).toBe(
      "Askja (65.03°N, 16.75°W, 1516 m a.s.l.): eruption at 2016-11-03 08:00 UTC, ash column 0–7000 m above the vent (top 8516 m a.s.l.), mass eruption rate 100000 kg/s.",
    );
  });

  it("summarises several phases with S/E letters, and leaves out what is unknown", () => {
    const phases: VolcanoDescription = {
      name: "Ruapehu",
      lat: -39.28,
      lon: 175.567,
      eruptions: [
        { start: "2024-05-02T06:00:00Z", end: "2024-05-02T12:00:00Z", bottomM: 500, topM: 9000, rateKgPerS: 20000 },
        { start: "2024-05-01T22:30:00Z", end: "2024-05-02T03:00:00Z", bottomM: 0, topM: 4000 },
      ],
    };
    expect(describeEruption(phases)).toBe(
      "Ruapehu (39.28°S, 175.57°E): 2 eruption phases from 2024-05-01 22:30 UTC to 2024-05-02 12:00 UTC, ash column up to 9000 m above the vent, mass eruption rate up to 20000 kg/s.",
    );
  });
});
