/**
 * GeoJSON twins of forecasters' KML resources (issue 16), as the build publishes them: one beside each
 * KML resource (the whole file and each time's split, named in run.json or found unlisted), under the
 * same name with .geojson, application/geo+json, precompressed, and carried through incremental rebuilds
 * and garbage collection like the KML they come from.
 */
import { copyFile, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { editManifest, fixedClock, makeWorkspace, PUBLIC_URL, readRelease, runDirOf, writeKmlRun, type Release, type Workspace, type WrittenKmlRun } from "./runFixtures.ts";

const FIXTURES = path.join(import.meta.dirname, "../fixtures/kml");
const GEOJSON = "application/geo+json";

let ws: Workspace;
let hekla: WrittenKmlRun;
let askja: WrittenKmlRun;
const buildAt = (now: string): Promise<BuildResult> => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(now) });

interface Doc {
  type: string;
  name: string | null;
  source: string;
  left_out: { count: number; kinds: Record<string, number> };
  features: Array<{ geometry: { type: string } | null; properties: Record<string, unknown> }>;
}

beforeEach(async () => {
  ws = await makeWorkspace();
  hekla = await writeKmlRun(ws.runsDir, "2024-05-01-hekla", { reftime: "2024-05-01T12:00:00Z" });
  askja = await writeKmlRun(ws.runsDir, "2024-05-02-askja", { reftime: "2024-05-02T00:00:00Z" });
  // A drawing dropped into the folder without run.json naming it: published in the group Forecaster KML, twin included.
  await copyFile(path.join(FIXTURES, "geometries.kml"), path.join(askja.dir, "grimsvotn.kml"));
});
afterEach(async () => {
  await ws.cleanup();
});

const twinsOf = (release: Release, reftime: string): string[] => Object.keys(release.resources).filter((name) => name.startsWith(`${reftime}/`) && name.endsWith(".geojson")).sort();
const kmlOf = (release: Release, reftime: string): string[] => Object.keys(release.resources).filter((name) => name.startsWith(`${reftime}/`) && name.endsWith(".kml")).sort();

describe("GeoJSON twins of forecasters' KML", () => {
  it("are published beside every KML resource, listed and named alike, application/geo+json, precompressed", async () => {
    const result = await buildAt("2024-06-01T08:00:00Z");
    expect(result.report.counts).toMatchObject({ published: 2, errors: 0 });
    const release = await readRelease(ws.distDir);
    for (const reftime of [hekla.reftime, askja.reftime]) {
      expect(twinsOf(release, reftime)).toEqual(kmlOf(release, reftime).map((name) => name.replace(/\.kml$/, ".geojson")));
    }
    // The two-folder KML: the whole file and its two times; the unlisted one: the whole file and its one time.
    expect(twinsOf(release, hekla.reftime)).toEqual([`${hekla.reftime}/advisory.geojson`, ...hekla.times.map((time) => `${hekla.reftime}/advisory/${time}.geojson`)]);
    expect(twinsOf(release, askja.reftime)).toContain(`${askja.reftime}/grimsvotn/2024-05-21T18:00:00Z.geojson`);

    for (const name of twinsOf(release, askja.reftime)) {
      const key = release.resourceKey(name);
      const artefact = release.artefact(key);
      expect(artefact.contentType).toBe(GEOJSON);
      const identity = await release.body(key);
      // Precompressed at build time: both variants exist and decompress to the identity bytes.
      expect(gunzipSync(await release.body(key, "gzip")).equals(identity), name).toBe(true);
      expect(brotliDecompressSync(await release.body(key, "br")).equals(identity), name).toBe(true);
      expect((JSON.parse(identity.toString("utf8")) as Doc).source).toBe("forecaster");
    }

    // Each time's twin holds the Placemarks that time's KML holds: the untimed vent and the one folder valid then.
    for (const time of hekla.times) {
      const doc = (await release.json(release.resourceKey(`${hekla.reftime}/advisory/${time}.geojson`))) as Doc;
      expect(doc.features.map((f) => f.properties.name)).toEqual(["vent", hekla.featureAt[time]]);
      expect(doc.features[1]!.properties).toMatchObject({ time, source: "forecaster", band: null });
      expect(doc.features[1]!.geometry!.type).toBe("Polygon");
    }
    const whole = (await release.json(release.resourceKey(`${askja.reftime}/grimsvotn.geojson`))) as Doc;
    expect(whole).toMatchObject({ type: "FeatureCollection", name: "Grimsvotn advisory 2024-05-21 18Z", left_out: { count: 4 } });
    expect(whole.features).toHaveLength(8);
  });

  it("change with their KML alone, keep their bytes when another file changes, and go with the run's directory", async () => {
    await buildAt("2024-06-01T08:00:00Z");
    const first = await readRelease(ws.distDir);
    const name = `${hekla.reftime}/advisory/${hekla.times[0]}.geojson`;
    const before = first.artefact(first.resourceKey(name));
    const askjaBefore = twinsOf(first, askja.reftime).map((twin) => first.artefact(first.resourceKey(twin)));

    // run.json changes: the run is rebuilt, its twin keeps its bytes and ETag; the other run keeps its directory.
    await editManifest(hekla.dir, (m) => ({ ...m, description: "Hekla: new description." }));
    await buildAt("2024-06-01T09:00:00Z");
    const second = await readRelease(ws.distDir);
    const same = second.artefact(second.resourceKey(name));
    expect(runDirOf(same)).not.toBe(runDirOf(before));
    expect(same.sha256).toBe(before.sha256);
    expect(same.identity.etag).toBe(before.identity.etag);
    expect(twinsOf(second, askja.reftime).map((twin) => second.artefact(second.resourceKey(twin)))).toEqual(askjaBefore);

    // The KML changes: its twin changes too (new bytes, new ETag), with the moved position in it.
    const kmlPath = path.join(hekla.dir, hekla.kmlFile);
    await writeFile(kmlPath, (await readFile(kmlPath, "utf8")).replace("-20.0,63.8 -19.0,63.8", "-20.5,63.8 -19.0,63.8"));
    await buildAt("2024-06-01T10:00:00Z");
    const third = await readRelease(ws.distDir);
    const moved = third.artefact(third.resourceKey(name));
    expect(moved.sha256).not.toBe(before.sha256);
    expect(moved.identity.etag).not.toBe(before.identity.etag);
    expect(JSON.stringify(await third.json(third.resourceKey(name)))).toContain("[-20.5,63.8]");

    // Garbage collection: once no kept release uses the first run directory, its twin files are gone with it.
    const firstFile = path.join(ws.distDir, before.identity.file);
    await expect(stat(firstFile)).resolves.toBeDefined();
    for (let i = 0; i < 4; i++) {
      await editManifest(hekla.dir, (m) => ({ ...m, description: `Analysis ${i}.` }));
      await buildAt(`2024-06-01T1${i + 1}:00:00Z`);
    }
    await expect(stat(firstFile)).rejects.toMatchObject({ code: "ENOENT" });
    const latest = await readRelease(ws.distDir);
    await expect(stat(path.join(ws.distDir, latest.artefact(latest.resourceKey(name)).identity.file))).resolves.toBeDefined();
  });
});
