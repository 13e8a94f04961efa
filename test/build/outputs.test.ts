/**
 * What one build publishes, read back the way the server reads it: dist/current → index.json → files.
 * Four runs: a KML run (reftime written with a +02:00 offset), a WMS run on the real MapServer
 * capabilities (start/end/period), a WMS run on the real THREDDS capabilities (listed times), and a
 * run with the real volcano.xml and no description.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { AshModel } from "../../src/contract/ashModel.ts";
import { BuildReport } from "../../src/contract/buildReport.ts";
import {
  ASKJA_DESCRIPTION,
  PUBLIC_URL,
  fixedClock,
  iso,
  makeWorkspace,
  ms,
  readRelease,
  resourceNameOf,
  threddsListedTimes,
  writeKmlRun,
  writeMapServerRun,
  writeThreddsRun,
  writeVolcanoRun,
  type Release,
  type Workspace,
  type WrittenKmlRun,
  type WrittenWmsRun,
} from "./runFixtures.ts";

const BUILT_AT = "2024-06-01T08:00:00Z";

interface Setup {
  ws: Workspace;
  result: BuildResult;
  release: Release;
  kml: WrittenKmlRun;
  radar: WrittenWmsRun;
  ocean: WrittenWmsRun;
  askja: WrittenKmlRun;
}

/** Writes the four runs into a fresh workspace and builds once. */
async function buildFourRuns(now: string): Promise<Setup> {
  const ws = await makeWorkspace();
  const kml = await writeKmlRun(ws.runsDir, "2024-05-01-hekla", { reftime: "2024-05-01T14:00:00+02:00", type: "Rehearsal" });
  const radar = await writeMapServerRun(ws.runsDir, "2006-06-23-radar");
  const ocean = await writeThreddsRun(ws.runsDir, "2015-06-30-ocean", { type: "Real Eruption" });
  const askja = await writeVolcanoRun(ws.runsDir, "2016-11-03-askja");
  const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(now) });
  return { ws, result, release: await readRelease(ws.distDir), kml, radar, ocean, askja };
}

let s: Setup;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s = await buildFourRuns(BUILT_AT);
  cleanups.push(s.ws.cleanup);
});
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

describe("the build of four valid runs", () => {
  it("publishes all four, with no issue", () => {
    expect(s.result.published).toBe(true);
    expect(s.result.report.runs.map((r) => [r.folder, r.status, r.issues])).toEqual([
      ["2006-06-23-radar", "published", []],
      ["2015-06-30-ocean", "published", []],
      ["2016-11-03-askja", "published", []],
      ["2024-05-01-hekla", "published", []],
    ]);
    expect(s.release.id).toBe(s.result.release);
    expect(s.release.index.release).toBe(s.result.release);
    expect(s.release.index.built).toBe(BUILT_AT);
  });

  it("writes model.json files that pass the AshModel schema, with the reftime normalised to UTC", async () => {
    for (const reftime of s.release.index.reftimes) {
      const run = s.release.index.runs[reftime]!;
      const raw = JSON.parse(await s.release.text(run.json)) as unknown;
      const parsed = AshModel.safeParse(raw);
      expect(parsed.success, `${run.json}: ${parsed.error?.message}`).toBe(true);
      expect(parsed.data!.meta.reftime).toBe(reftime);
    }
    // run.json said 2024-05-01T14:00:00+02:00
    expect(s.kml.reftime).toBe("2024-05-01T12:00:00Z");
    const model = await s.release.model("2024-05-01T12:00:00Z");
    expect(model.meta.reftime).toBe("2024-05-01T12:00:00Z");
    expect(model.meta.type).toBe("Rehearsal");
    expect(s.release.index.runs["2024-05-01T12:00:00Z"]).toMatchObject({ reftime: "2024-05-01T12:00:00Z", type: "Rehearsal", source: "2024-05-01-hekla" });
    expect(Object.keys(s.release.index.runs).sort()).toEqual([...s.release.index.reftimes].sort());
  });

  it("gives MapServer WMS timesteps every 5 minutes over the 72 h window, url = base_url?TIME=<time>", async () => {
    const model = await s.release.model(s.radar.reftime);
    const layer = model.layergroups[0]!.layers[0]!;
    expect(layer).toMatchObject({ name: "NEXRAD reflectivity", type: "WMS", base_url: s.radar.baseUrl });
    const start = ms(s.radar.reftime);
    const expected = Array.from({ length: 72 * 12 + 1 }, (_, i) => iso(start + i * 5 * 60_000));
    expect(layer.timesteps.map((t) => t.time)).toEqual(expected);
    for (const step of layer.timesteps) expect(step.url).toBe(`${s.radar.baseUrl}?TIME=${step.time}`);
    expect(model.meta.timesteps).toEqual(expected.map((time) => ({ time })));
    // The layer's EX_GeographicBoundingBox of the real document is the run's box.
    expect(model.meta.latlonbox).toEqual({ north: 50, south: 24, east: -66, west: -126 });
  });

  it("gives THREDDS WMS timesteps from the listed times, url = base_url&TIME=<time> (base_url has LAYERS=)", async () => {
    const model = await s.release.model(s.ocean.reftime);
    const layer = model.layergroups[0]!.layers[0]!;
    expect(layer).toMatchObject({ type: "WMS", base_url: s.ocean.baseUrl });
    const listed = new Set(await threddsListedTimes());
    const times = layer.timesteps.map((t) => t.time);
    expect(times.length).toBeGreaterThan(0);
    expect([...times].sort()).toEqual(times);
    for (const time of times) expect(listed.has(time), time).toBe(true);
    // The listed time inside the 72 h window after reftime 2015-06-30T00:00:00Z.
    expect(times).toContain("2015-07-01T12:00:00Z");
    for (const step of layer.timesteps) expect(step.url).toBe(`${s.ocean.baseUrl}&TIME=${step.time}`);
  });

  it("gives KML timesteps ./resources?name=<reftime>/<slug>/<time>.kml, each a KML with only that time's features", async () => {
    const model = await s.release.model(s.kml.reftime);
    const layer = model.layergroups[0]!.layers[0]!;
    expect(layer.type).toBe("KML");
    expect(layer.timesteps.map((t) => t.time)).toEqual(s.kml.times);
    for (const step of layer.timesteps) {
      expect(step.url).toBe(`./resources?name=${s.kml.reftime}/advisory/${step.time}.kml`);
      const name = resourceNameOf(step.url!);
      expect(Object.keys(s.release.resources)).toContain(name);
      const key = s.release.resourceKey(name);
      expect(s.release.artefact(key).contentType).toMatch(/^application\/vnd\.google-earth\.kml\+xml/);
      const body = await s.release.text(key);
      expect(XMLValidator.validate(body)).toBe(true);
      expect(body).toMatch(/<kml[\s>]/);
      for (const [time, feature] of Object.entries(s.kml.featureAt)) {
        if (time === step.time) expect(body).toContain(`<name>${feature}</name>`);
        else expect(body).not.toContain(feature);
      }
      // The untimed placemark is valid at every time.
      expect(body).toContain("<name>vent</name>");
    }
  });

  it("takes the description from the real volcano.xml when run.json has none, and lists Askja in volcanoes.json", async () => {
    const model = await s.release.model(s.askja.reftime);
    expect(model.meta.description).toBe(ASKJA_DESCRIPTION);
    const volcanoes = await s.release.json(s.release.resourceKey("volcanoes.json"));
    expect(volcanoes).toEqual([{ name: "Askja", lat: 65.03, lon: -16.75, reftimes: ["2016-11-03T00:00:00Z"] }]);
  });

  it("indexes every artefact with its sha256, size, and gzip/br variants that decompress to the identity bytes", async () => {
    const artefacts = Object.entries(s.release.artefacts);
    expect(artefacts.length).toBeGreaterThan(10);
    let compressed = 0;
    for (const [key, artefact] of artefacts) {
      expect(path.isAbsolute(artefact.identity.file), key).toBe(false);
      const identity = await readFile(path.join(s.ws.distDir, artefact.identity.file));
      expect(createHash("sha256").update(identity).digest("hex"), key).toBe(artefact.sha256);
      expect(identity.length, key).toBe(artefact.identity.size);
      const etags = [artefact.identity.etag];
      if (artefact.gzip) {
        const gz = await readFile(path.join(s.ws.distDir, artefact.gzip.file));
        expect(gz.length, key).toBe(artefact.gzip.size);
        expect(gunzipSync(gz).equals(identity), `${key} gzip`).toBe(true);
        etags.push(artefact.gzip.etag);
        compressed++;
      }
      if (artefact.br) {
        const br = await readFile(path.join(s.ws.distDir, artefact.br.file));
        expect(br.length, key).toBe(artefact.br.size);
        expect(brotliDecompressSync(br).equals(identity), `${key} br`).toBe(true);
        etags.push(artefact.br.etag);
      }
      for (const etag of etags) expect(etag, key).toMatch(/^"[^"]+"$/);
      expect(new Set(etags).size, `${key} etags ${etags.join(" ")}`).toBe(etags.length);
    }
    expect(compressed).toBeGreaterThan(5);
    // A large text artefact always gets both variants.
    const radarJson = s.release.artefact(s.release.index.runs[s.radar.reftime]!.json);
    expect(radarJson.gzip).toBeDefined();
    expect(radarJson.br).toBeDefined();
  });

  it("gives every artefact a distinct ETag per content", () => {
    const bySha = new Map<string, string>();
    for (const artefact of Object.values(s.release.artefacts)) {
      const seen = bySha.get(artefact.identity.etag);
      if (seen !== undefined) expect(seen).toBe(artefact.sha256);
      bySha.set(artefact.identity.etag, artefact.sha256);
    }
  });

  it("writes reftimes.json as [{reftimes:[...]}], newest first", async () => {
    const list = await s.release.json(s.release.index.lists.reftimes);
    const expected = ["2024-05-01T12:00:00Z", "2016-11-03T00:00:00Z", "2015-06-30T00:00:00Z", "2006-06-23T00:00:00Z"];
    expect(list).toEqual([{ reftimes: expected }]);
    expect(s.release.index.reftimes).toEqual(expected);
  });

  it("writes changelog.rss as well-formed RSS with one item per published run naming its type and reftime", async () => {
    const rss = await s.release.text(s.release.index.lists.changelog);
    expect(XMLValidator.validate(rss)).toBe(true);
    const doc = new XMLParser({ isArray: (name) => name === "item" }).parse(rss) as { rss: { channel: { item?: Array<{ title: string; link: string; category: string }> } } };
    const items = doc.rss.channel.item ?? [];
    expect(items).toHaveLength(4);
    const expected: Array<[string, string]> = [
      ["Rehearsal", "2024-05-01T12:00:00Z"],
      ["Exercise", "2006-06-23T00:00:00Z"],
      ["Real Eruption", "2015-06-30T00:00:00Z"],
      ["Exercise", "2016-11-03T00:00:00Z"],
    ];
    for (const [type, reftime] of expected) {
      const matching = items.filter((item) => item.title.includes(reftime));
      expect(matching, reftime).toHaveLength(1);
      expect(matching[0]!.title).toMatch(/^Published: /);
      expect(matching[0]!.title).toContain(type);
      expect(matching[0]!.category).toBe(type);
      expect(matching[0]!.link).toBe(`${PUBLIC_URL}/?reftime=${reftime}`);
    }
  });

  it("writes report.json that passes the BuildReport schema and is the report the build returned", async () => {
    const raw = await s.release.json(s.release.index.lists.report);
    const parsed = BuildReport.safeParse(raw);
    expect(parsed.success, parsed.error?.message).toBe(true);
    expect(parsed.data).toEqual(s.result.report);
    expect(parsed.data!.counts).toMatchObject({ folders: 4, published: 4, rebuilt: 4, errors: 0 });
  });

  it("produces byte-identical model.json (and the same sha256) from the same inputs in another dist dir", async () => {
    const other = await buildFourRuns("2025-01-01T00:00:00Z");
    cleanups.push(other.ws.cleanup);
    expect(other.release.index.reftimes).toEqual(s.release.index.reftimes);
    for (const reftime of s.release.index.reftimes) {
      const key = s.release.index.runs[reftime]!.json;
      expect(other.release.index.runs[reftime]!.json).toBe(key);
      const mine = await s.release.body(key);
      const theirs = await other.release.body(key);
      expect(theirs.equals(mine), reftime).toBe(true);
      expect(other.release.artefact(key).sha256).toBe(s.release.artefact(key).sha256);
      expect(other.release.artefact(key).identity.etag).toBe(s.release.artefact(key).identity.etag);
    }
    // The split KML files too.
    for (const [name, key] of Object.entries(s.release.resources)) {
      if (!name.endsWith(".kml")) continue;
      expect((await other.release.body(other.release.resourceKey(name))).equals(await s.release.body(key)), name).toBe(true);
    }
  });
});
