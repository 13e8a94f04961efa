/**
 * Bad run folders: every problem is reported with the file (relative to runs/), the field when there
 * is one, and a fix; a bad run never stops the good ones from being published.
 */
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildOptions, type BuildResult } from "../../src/build/build.ts";
import type { RunReport } from "../../src/contract/buildReport.ts";
import {
  MAPSERVER_LAYER,
  PUBLIC_URL,
  fixedClock,
  makeWorkspace,
  readRelease,
  writeKmlRun,
  writeMapServerRun,
  writeThreddsRun,
  type Workspace,
} from "./runFixtures.ts";

const BILLION_LAUGHS = path.join(import.meta.dirname, "../fixtures/kml/billion-laughs.kml");

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const buildNow = (extra: Partial<BuildOptions> = {}): Promise<BuildResult> =>
  build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z"), ...extra });

function runOf(result: BuildResult, folder: string): RunReport {
  const run = result.report.runs.find((r) => r.folder === folder);
  if (!run) throw new Error(`no report for ${folder}: ${result.report.runs.map((r) => r.folder).join(", ")}`);
  return run;
}

/** The error issues of a folder, each checked to have a file, a message and a fix. */
function errorsOf(result: BuildResult, folder: string) {
  const errors = runOf(result, folder).issues.filter((i) => i.severity === "error");
  for (const issue of errors) {
    expect(issue.file.startsWith(`${folder}/`), issue.file).toBe(true);
    expect(issue.message.length).toBeGreaterThan(5);
    expect(issue.fix.length).toBeGreaterThan(5);
  }
  return errors;
}

/** Two good runs beside the bad ones: they must publish whatever the others do. */
async function writeGoodRuns() {
  await writeKmlRun(ws.runsDir, "good-kml", { reftime: "2024-04-01T00:00:00Z" });
  await writeMapServerRun(ws.runsDir, "good-radar");
  return ["2024-04-01T00:00:00Z", "2006-06-23T00:00:00Z"];
}

async function expectGoodRunsPublished(result: BuildResult, reftimes: string[]) {
  expect(runOf(result, "good-kml").status).toBe("published");
  expect(runOf(result, "good-radar").status).toBe("published");
  const release = await readRelease(ws.distDir);
  for (const reftime of reftimes) expect(release.index.reftimes).toContain(reftime);
}

describe("malformed run.json", () => {
  it("reports a JSON syntax error naming <folder>/run.json, where it is, and a fix", async () => {
    const run = await writeKmlRun(ws.runsDir, "syntax");
    await writeFile(path.join(run.dir, "run.json"), '{\n  "type": "Exercise",,\n  "reftime": "2024-05-01T12:00:00Z"\n}\n');
    const result = await buildNow();
    expect(runOf(result, "syntax").status).toBe("invalid");
    const errors = errorsOf(result, "syntax");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe("syntax/run.json");
    expect(errors[0]!.message).toMatch(/JSON/);
    // Where the syntax breaks: a position or line, since there is no field to name.
    expect(errors[0]!.message).toMatch(/position \d+|line \d+/);
    expect(errors[0]!.fix).toMatch(/JSON/);
  });

  it("reads a run.json saved with a UTF-8 byte order mark; refuses a latlonbox whose north is south of its south, naming the field", async () => {
    const bom = await writeKmlRun(ws.runsDir, "bom");
    const manifest = path.join(bom.dir, "run.json");
    await writeFile(manifest, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), await readFile(manifest)]));
    await writeKmlRun(ws.runsDir, "upside-down", { reftime: "2024-05-02T00:00:00Z", manifest: { latlonbox: { north: 60, south: 70, east: -10, west: -30 } } });
    const result = await buildNow();
    expect(runOf(result, "bom").status).toBe("published");
    expect(runOf(result, "upside-down").status).toBe("invalid");
    expect(errorsOf(result, "upside-down")).toEqual([expect.objectContaining({ file: "upside-down/run.json", field: "latlonbox.north", message: expect.stringMatching(/north is south of south/) })]);
  });

  it("refuses a key given twice (JSON would keep the last without a word), naming it and where the repeat is", async () => {
    const run = await writeKmlRun(ws.runsDir, "twice");
    const manifest = JSON.parse(await readFile(path.join(run.dir, "run.json"), "utf8")) as Record<string, unknown>;
    // "Real Eruption" first, then a second "type" at the end, which JSON.parse alone would publish.
    await writeFile(path.join(run.dir, "run.json"), JSON.stringify({ ...manifest, type: "Real Eruption" }, null, 2).replace(/\n}$/, ',\n  "type": "Exercise"\n}'));
    const result = await buildNow();
    expect(runOf(result, "twice").status).toBe("invalid");
    const lines = (await readFile(path.join(run.dir, "run.json"), "utf8")).split("\n");
    expect(errorsOf(result, "twice")).toEqual([
      expect.objectContaining({ file: "twice/run.json", field: "type", message: `"type" is given a second time in the same object (line ${lines.length - 1}, column 3)`, fix: 'keep one "type" and remove the other' }),
    ]);
  });

  it("reads a run.json saved as UTF-16 (Notepad's Unicode); refuses one in Latin-1 with what to do; says where a syntax error is once", async () => {
    const utf16 = await writeKmlRun(ws.runsDir, "utf16");
    const text = await readFile(path.join(utf16.dir, "run.json"), "utf8");
    await writeFile(path.join(utf16.dir, "run.json"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]));
    const latin1 = await writeKmlRun(ws.runsDir, "latin1", { reftime: "2024-05-02T00:00:00Z", description: "Eyjafjallajökull: test" });
    await writeFile(path.join(latin1.dir, "run.json"), Buffer.from(await readFile(path.join(latin1.dir, "run.json"), "utf8"), "latin1"));
    const comma = await writeKmlRun(ws.runsDir, "comma", { reftime: "2024-05-03T00:00:00Z" });
    await writeFile(path.join(comma.dir, "run.json"), (await readFile(path.join(comma.dir, "run.json"), "utf8")).replace(/\n}/, ",\n}"));
    const result = await buildNow();
    expect(runOf(result, "utf16").status).toBe("published");
    expect(errorsOf(result, "latin1")).toEqual([expect.objectContaining({ file: "latin1/run.json", message: expect.stringMatching(/^not valid UTF-8/), fix: "save run.json as UTF-8" })]);
    const [syntax] = errorsOf(result, "comma");
    expect(syntax!.message.match(/line \d+/g)).toHaveLength(1);
  });

  it("a reftime without its zone is said to lack it", async () => {
    await writeKmlRun(ws.runsDir, "zoneless", { manifest: { reftime: "2024-05-01T12:00:00" } });
    const result = await buildNow();
    expect(errorsOf(result, "zoneless")).toEqual([expect.objectContaining({ field: "reftime", message: expect.stringMatching(/^the date-time has no zone: add Z for UTC/) })]);
  });

  it("reports an unknown field, naming it", async () => {
    await writeKmlRun(ws.runsDir, "unknown", { manifest: { colour: "red" } });
    await writeKmlRun(ws.runsDir, "nested", {
      reftime: "2024-05-02T00:00:00Z",
      manifest: { layergroups: [{ name: "g", layers: [{ type: "KML", name: "Ash", file: "advisory.kml", opacity: 0.5 }] }] },
    });
    const result = await buildNow();
    for (const [folder, key] of [["unknown", "colour"], ["nested", "opacity"]] as const) {
      expect(runOf(result, folder).status).toBe("invalid");
      const errors = errorsOf(result, folder);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.file).toBe(`${folder}/run.json`);
      expect(`${errors[0]!.field ?? ""} ${errors[0]!.message}`).toContain(key);
      expect(errors[0]!.fix).toContain(`remove ${key}`);
    }
    expect(errorsOf(result, "nested")[0]!.field).toMatch(/^layergroups\[0\]\.layers\[0\]/);
  });

  it('reports type "Drill" on the field type, with the three run types in the fix', async () => {
    await writeKmlRun(ws.runsDir, "drill", { manifest: { type: "Drill" } });
    const result = await buildNow();
    const errors = errorsOf(result, "drill");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: "drill/run.json", field: "type" });
    for (const type of ["Exercise", "Rehearsal", "Real Eruption"]) expect(errors[0]!.fix).toContain(type);
    expect(runOf(result, "drill").status).toBe("invalid");
    expect(runOf(result, "drill").type).toBeUndefined();
  });

  it.each([
    ["impossible date", "2024-05-32T12:00:00Z"],
    ["no zone", "2024-05-01T12:00:00"],
    ["not a date", "yesterday noon"],
  ])("reports a bad reftime (%s) on the field reftime", async (_, reftime) => {
    await writeKmlRun(ws.runsDir, "badtime", { manifest: { reftime } });
    const result = await buildNow();
    const errors = errorsOf(result, "badtime");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: "badtime/run.json", field: "reftime" });
    expect(errors[0]!.fix).toMatch(/YYYY-MM-DDTHH:MM:SSZ/);
    expect(runOf(result, "badtime").status).toBe("invalid");
  });

  it("reports every problem of one run.json at once", async () => {
    await writeKmlRun(ws.runsDir, "several", { manifest: { type: "Drill", reftime: "soon", report_url: "ftp://example.org/report" } });
    const result = await buildNow();
    const fields = errorsOf(result, "several").map((e) => e.field).sort();
    expect(fields).toEqual(["reftime", "report_url", "type"]);
  });
});

describe("bad input files", () => {
  it("refuses a billion-laughs KML with a clear error naming the KML file, while two other runs publish", async () => {
    const good = await writeGoodRuns();
    const bomb = await writeKmlRun(ws.runsDir, "bomb", { reftime: "2024-05-03T00:00:00Z" });
    await copyFile(BILLION_LAUGHS, path.join(bomb.dir, "advisory.kml"));
    const result = await buildNow();
    expect(runOf(result, "bomb").status).toBe("invalid");
    const errors = errorsOf(result, "bomb");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe("bomb/advisory.kml");
    expect(errors[0]!.message).toMatch(/DOCTYPE|ENTITY/);
    await expectGoodRunsPublished(result, good);
    expect((await readRelease(ws.distDir)).index.reftimes).not.toContain("2024-05-03T00:00:00Z");
  });

  it("reports a broken time Dimension in (a copy of) the real MapServer capabilities, naming the file and the layer", async () => {
    const good = await writeGoodRuns();
    await writeMapServerRun(ws.runsDir, "broken-caps", {
      reftime: "2006-07-01T00:00:00Z",
      editCapabilities: (xml) => xml.replaceAll("1995-01-01/2015-12-31/PT5M", "1995-01-01/2015-12-31/PT5M,2006-13-01T00:00:00Z"),
    });
    const result = await buildNow();
    expect(runOf(result, "broken-caps").status).toBe("invalid");
    const errors = errorsOf(result, "broken-caps");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe("broken-caps/capabilities.xml");
    expect(errors[0]!.field).toContain(MAPSERVER_LAYER);
    expect(errors[0]!.field).toMatch(/Dimension/);
    expect(errors[0]!.message).toContain("2006-13-01T00:00:00Z");
    await expectGoodRunsPublished(result, good);
  });

  it("reports a period without a valid duration in (a copy of) the real THREDDS capabilities", async () => {
    await writeThreddsRun(ws.runsDir, "broken-thredds", {
      editCapabilities: (xml) => xml.replace("2015-07-01T12:00:00Z\n", "2015-07-01T12:00:00Z/2015-08-01T12:00:00Z/1M\n"),
    });
    const result = await buildNow();
    const errors = errorsOf(result, "broken-thredds");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe("broken-thredds/capabilities.xml");
    expect(errors[0]!.field).toBe("Layer[Name=T]/Dimension[@name=time]");
    expect(errors[0]!.message).toContain("1M");
  });

  it("names the run.json field when a referenced KML or capabilities file is missing", async () => {
    const kml = await writeKmlRun(ws.runsDir, "no-kml");
    await rm(path.join(kml.dir, "advisory.kml"));
    const caps = await writeMapServerRun(ws.runsDir, "no-caps");
    await rm(path.join(caps.dir, "capabilities.xml"));
    const result = await buildNow();
    expect(errorsOf(result, "no-kml")).toEqual([expect.objectContaining({ file: "no-kml/run.json", field: "layergroups[0].layers[0].file" })]);
    expect(errorsOf(result, "no-kml")[0]!.message).toContain("advisory.kml");
    expect(errorsOf(result, "no-caps")).toEqual([expect.objectContaining({ file: "no-caps/run.json", field: "layergroups[0].layers[0].capabilities" })]);
    expect(errorsOf(result, "no-caps")[0]!.message).toContain("capabilities.xml");
  });

  it("a KML layer whose file is there but not KML (a KMZ) is an error on the run.json field, not a layer dropped with a warning", async () => {
    const run = await writeKmlRun(ws.runsDir, "kmz", { kmlFile: "advisory.kmz" });
    // What a KMZ starts with (a zip's local file header): no reader takes it.
    await writeFile(path.join(run.dir, "advisory.kmz"), Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]));
    const result = await buildNow();
    expect(runOf(result, "kmz").status).toBe("invalid");
    const errors = errorsOf(result, "kmz");
    expect(errors).toEqual([expect.objectContaining({ file: "kmz/run.json", field: "layergroups[0].layers[0].file" })]);
    expect(errors[0]!.message).toBe("advisory.kmz is named as a KML layer but is not a KML document (a KMZ, zipped KML, is not read)");
    expect(errors[0]!.fix).toMatch(/a KMZ unzipped is its doc\.kml/);
  });

  it("refuses a symbolic link in a run folder, and publishes nothing of that run", async () => {
    const outside = path.join(ws.root, "outside.kml");
    const run = await writeKmlRun(ws.runsDir, "linked", { reftime: "2024-05-06T00:00:00Z" });
    await copyFile(path.join(run.dir, "advisory.kml"), outside);
    await symlink(outside, path.join(run.dir, "extra.kml"));
    await writeGoodRuns();
    const result = await buildNow();
    expect(runOf(result, "linked").status).toBe("invalid");
    const errors = errorsOf(result, "linked");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe("linked/extra.kml");
    expect(errors[0]!.message).toMatch(/symbolic link/);
    const release = await readRelease(ws.distDir);
    expect(release.index.reftimes).not.toContain("2024-05-06T00:00:00Z");
    expect(Object.keys(release.resources).some((name) => name.startsWith("2024-05-06"))).toBe(false);
  });

  it("refuses a sub-directory in a run folder (runs are flat), and a rebuild for it says so in its log", async () => {
    const run = await writeKmlRun(ws.runsDir, "nested-dir");
    expect(runOf(await buildNow(), "nested-dir").status).toBe("published");
    await mkdir(path.join(run.dir, "more"));
    const logs: string[] = [];
    const result = await buildNow({ log: (line) => logs.push(line) });
    expect(runOf(result, "nested-dir").status).toBe("kept-last-good");
    expect(errorsOf(result, "nested-dir").map((e) => e.file)).toEqual(["nested-dir/more"]);
    expect(logs).toContain("rebuilding nested-dir: more refused");
  });
});

describe("run type", () => {
  it("makes a run without a type invalid: the type is never guessed", async () => {
    await writeKmlRun(ws.runsDir, "untyped", { manifest: { type: undefined, description: "Real eruption of Hekla" } });
    const result = await buildNow();
    const run = runOf(result, "untyped");
    expect(run.status).toBe("invalid");
    expect(run.type).toBeUndefined();
    expect(errorsOf(result, "untyped")).toEqual([expect.objectContaining({ file: "untyped/run.json", field: "type" })]);
    expect((await readRelease(ws.distDir)).index.reftimes).toEqual([]);
  });

  it("uses defaultRunType for a run without a type, and only for it", async () => {
    await writeKmlRun(ws.runsDir, "untyped", { manifest: { type: undefined } });
    await writeKmlRun(ws.runsDir, "typed", { reftime: "2024-05-02T00:00:00Z", type: "Real Eruption" });
    const result = await buildNow({ defaultRunType: "Rehearsal" });
    expect(runOf(result, "untyped")).toMatchObject({ status: "published", type: "Rehearsal", issues: [] });
    expect(runOf(result, "typed")).toMatchObject({ status: "published", type: "Real Eruption" });
    const release = await readRelease(ws.distDir);
    expect((await release.model("2024-05-01T12:00:00Z")).meta.type).toBe("Rehearsal");
    expect((await release.model("2024-05-02T00:00:00Z")).meta.type).toBe("Real Eruption");
  });
});

describe("one build, many bad runs", () => {
  it("reports every failure together: four different bad runs are four invalid reports, the valid runs publish", async () => {
    const good = await writeGoodRuns();
    const syntax = await writeKmlRun(ws.runsDir, "bad-1-syntax", { reftime: "2024-05-11T00:00:00Z" });
    await writeFile(path.join(syntax.dir, "run.json"), "{ not json");
    await writeKmlRun(ws.runsDir, "bad-2-type", { reftime: "2024-05-12T00:00:00Z", manifest: { type: "Drill" } });
    const bomb = await writeKmlRun(ws.runsDir, "bad-3-bomb", { reftime: "2024-05-13T00:00:00Z" });
    await copyFile(BILLION_LAUGHS, path.join(bomb.dir, "advisory.kml"));
    await writeMapServerRun(ws.runsDir, "bad-4-caps", {
      reftime: "2006-07-01T00:00:00Z",
      editCapabilities: (xml) => xml.replaceAll("1995-01-01/2015-12-31/PT5M", "1995-01-01/2015-12-31"),
    });
    const result = await buildNow();
    const bad = result.report.runs.filter((r) => r.status === "invalid");
    expect(bad.map((r) => r.folder)).toEqual(["bad-1-syntax", "bad-2-type", "bad-3-bomb", "bad-4-caps"]);
    expect(errorsOf(result, "bad-1-syntax").map((e) => e.file)).toEqual(["bad-1-syntax/run.json"]);
    expect(errorsOf(result, "bad-2-type").map((e) => [e.file, e.field])).toEqual([["bad-2-type/run.json", "type"]]);
    expect(errorsOf(result, "bad-3-bomb").map((e) => e.file)).toEqual(["bad-3-bomb/advisory.kml"]);
    expect(errorsOf(result, "bad-4-caps").map((e) => e.file)).toEqual(["bad-4-caps/capabilities.xml"]);
    expect(result.report.counts.errors).toBe(4);
    expect(result.report.counts.published).toBe(2);
    await expectGoodRunsPublished(result, good);
    // The report in the release says the same.
    const release = await readRelease(ws.distDir);
    expect(await release.json(release.index.lists.report)).toEqual(result.report);
    expect(release.index.reftimes).toEqual(["2024-04-01T00:00:00Z", "2006-06-23T00:00:00Z"]);
  });
});
