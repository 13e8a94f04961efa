/**
 * A run whose ash crosses the antimeridian publishes (its box east < west, as the spec's LatLonBoxModel
 * says), and does not stop the other runs of the build: it once failed the whole build with an internal
 * error (east 187° against the schema's ±180).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { build } from "../../src/build/build.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function addRun(runsDir: string, folder: string, reftime: string, lon0: number, vlon: number): Promise<void> {
  const outDir = path.join(runsDir, folder);
  await writeEemepOutput({ outDir, nx: 60, ny: 30, steps: 4, res: 0.5, lat0: 45, lon0, reftime, volcano: { name: "Test", lat: 55, lon: vlon, altitude: 1000 }, volcanoXml: true });
  await writeFile(path.join(outDir, "run.json"), JSON.stringify({ type: "Exercise", reftime }));
}

describe("a run across the antimeridian", () => {
  it("publishes with its box wrapped, and the other runs publish beside it", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "ashcast-antimeridian-"));
    dirs.push(root);
    const runsDir = path.join(root, "runs");
    await addRun(runsDir, "2026-01-01-pacific", "2026-01-01T00:00:00Z", 165, 178);
    await addRun(runsDir, "2026-01-02-atlantic", "2026-01-02T00:00:00Z", -40, -19.7);
    const result = await build({ runsDir, distDir: path.join(root, "dist"), publicUrl: "https://ash.example.org/volcanicashforecast/0.1" });
    expect(result.report.counts.errors).toBe(0);
    const published = result.report.runs.filter((run) => run.status === "published").map((run) => run.folder).sort();
    expect(published).toEqual(["2026-01-01-pacific", "2026-01-02-atlantic"]);
    const boxes: Record<string, { west: number; east: number }> = {};
    const runDirs: Record<string, string> = {};
    for (const dir of await readdir(path.join(root, "dist", "runs"))) {
      const model = JSON.parse(await readFile(path.join(root, "dist", "runs", dir, "model.json"), "utf8")) as { meta: { reftime: string; latlonbox: { west: number; east: number } } };
      boxes[model.meta.reftime] = model.meta.latlonbox;
      runDirs[model.meta.reftime] = dir;
    }
    const pacific = boxes["2026-01-01T00:00:00Z"]!;
    // From about 177°E across 180° to the east of it: east < west, both within ±180.
    expect(pacific.west).toBeGreaterThan(170);
    expect(pacific.east).toBeLessThan(-170);
    expect(boxes["2026-01-02T00:00:00Z"]!.west).toBeLessThan(boxes["2026-01-02T00:00:00Z"]!.east);

    // Its GeoJSON ash areas are cut at 180° (RFC 7946 §3.1.9): every longitude within ±180, parts on both
    // sides, the bbox across the antimeridian west > east (§5.2).
    const geojsonDir = path.join(root, "dist", "runs", runDirs["2026-01-01T00:00:00Z"]!, "geojson");
    const wholeRun = (await readdir(geojsonDir)).filter((name) => name.endsWith(".geojson"));
    expect(wholeRun.length).toBe(3);
    let crossing = 0;
    for (const name of wholeRun) {
      const doc = JSON.parse(await readFile(path.join(geojsonDir, name), "utf8")) as { bbox?: number[]; features: Array<{ geometry: { type: string; coordinates: number[][][][] } }> };
      const lons = doc.features.filter((f) => f.geometry.type === "MultiPolygon").flatMap((f) => f.geometry.coordinates.flat(2).map((p) => p[0]!));
      for (const lon of lons) expect(Math.abs(lon), name).toBeLessThanOrEqual(180);
      if (lons.some((lon) => lon > 170) && lons.some((lon) => lon < -170)) {
        crossing++;
        expect(doc.bbox![0]!, name).toBeGreaterThan(doc.bbox![2]!);
      }
    }
    expect(crossing).toBeGreaterThan(0);

    // So are its KML ash areas (KML 2.2 takes longitudes within ±180): the same polygons, cut at 180°.
    const kmlDir = path.join(root, "dist", "runs", runDirs["2026-01-01T00:00:00Z"]!, "kml");
    const kmlFiles = (await readdir(kmlDir)).filter((name) => name.endsWith(".kml"));
    expect(kmlFiles.length).toBe(3);
    let kmlCrossing = 0;
    for (const name of kmlFiles) {
      const text = await readFile(path.join(kmlDir, name), "utf8");
      const lons = [...text.matchAll(/<coordinates>([^<]+)</g)].flatMap((m) => m[1]!.split(" ").map((p) => Number(p.split(",")[0])));
      for (const lon of lons) expect(Math.abs(lon), name).toBeLessThanOrEqual(180);
      if (lons.some((lon) => lon > 170) && lons.some((lon) => lon < -170)) kmlCrossing++;
    }
    expect(kmlCrossing).toBe(crossing);
  }, 120_000);
});
