/**
 * Issue 18: the per-step work of a build (reading and contouring model output a few steps at a time,
 * drawing and encoding the maps) runs in worker threads, and the merge keeps step order, so the number of
 * workers changes nothing in what is published: every artefact, byte for byte.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { build } from "../../src/build/build.ts";
import { closeStepPool, runStepTask, stepWorkers } from "../../src/build/stepPool.ts";
import { eemepCdl, HAS_NETCDF_BIN, ncgen, NO_NETCDF_BIN } from "../model/helpers.ts";
import { plte } from "../render/pixels.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const scratch: string[] = [];
let runsDir: string;
const savedWorkers = process.env["ASHCAST_WORKERS"];

beforeAll(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), "ashcast-parallel-runs-"));
  scratch.push(runsDir);
  // The bundled samples (EEMEP and SNAP, three run types) and a run of 14 steps: three tasks per band, the last one short.
  await cp(path.join(ROOT, "runs"), runsDir, { recursive: true });
  const generated = path.join(runsDir, "2026-06-01-hekla-parallel");
  await writeEemepOutput({ outDir: generated, nx: 160, ny: 100, steps: 14, res: 0.5, lat0: 40, lon0: -45, reftime: "2026-06-01T00:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7, altitude: 1491 }, plumeTopM: 12000 });
  await writeFile(path.join(generated, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: "2026-06-01T00:00:00Z" })}\n`);
});

afterAll(async () => {
  if (savedWorkers === undefined) delete process.env["ASHCAST_WORKERS"];
  else process.env["ASHCAST_WORKERS"] = savedWorkers;
  await closeStepPool();
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

/** Every file under dir/runs (the artefacts of every run), relative path → bytes. */
async function artefacts(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out.set(path.relative(dir, full), await readFile(full));
    }
  };
  await walk(path.join(dir, "runs"));
  return out;
}

async function buildWith(workers: string): Promise<Map<string, Buffer>> {
  process.env["ASHCAST_WORKERS"] = workers;
  const dist = await mkdtemp(path.join(tmpdir(), `ashcast-parallel-${workers}-`));
  scratch.push(dist);
  const result = await build({ runsDir, distDir: dist, publicUrl: "https://example.org/volcanicashforecast/0.1", now: () => new Date("2026-11-25T12:00:00Z") });
  expect(result.report.runs.map((r) => r.status)).toEqual(["published", "published", "published", "published"]);
  return artefacts(dist);
}

describe("a build in worker threads", () => {
  it("publishes the same bytes as a build on one thread", async () => {
    const sequential = await buildWith("0");
    expect(stepWorkers()).toBe(0);
    const pngs = [...sequential.keys()].filter((name) => name.endsWith(".png"));
    expect(pngs.length, "band images of the generated run and the samples").toBeGreaterThan(3 * 14);
    expect([...sequential.keys()].some((name) => name.endsWith(".ashgrid")), "a point grid").toBe(true);
    // A run's band images share one palette (src/render/bandImage.ts, bandImagePalette), chosen whatever thread draws them.
    const palettes = new Set(pngs.filter((name) => name.includes("20260601T000000Z") && name.includes("/images/")).map((name) => plte(sequential.get(name)!).toString("hex")));
    expect(palettes.size).toBe(1);
    const parallel = await buildWith("2");
    expect([...parallel.keys()].sort()).toEqual([...sequential.keys()].sort());
    for (const [name, bytes] of sequential) expect(parallel.get(name)!.equals(bytes), `${name} with 2 workers`).toBe(true);
  });

  it.skipIf(!HAS_NETCDF_BIN)(`reports bad data found by a worker as the one thread does: the file, the variable and the step${HAS_NETCDF_BIN ? "" : ` (${NO_NETCDF_BIN})`}`, async () => {
    const badRuns = await mkdtemp(path.join(tmpdir(), "ashcast-parallel-bad-"));
    scratch.push(badRuns);
    const folder = path.join(badRuns, "2019-03-22-bad-step");
    await cp(path.join(runsDir, "2026-06-01-hekla-parallel"), path.join(badRuns, "2026-06-01-hekla-parallel"), { recursive: true });
    await mkdir(folder);
    // 10 steps: time index 8 is in the second task of six steps, in a worker.
    const times = Array.from({ length: 10 }, (_, k) => (k + 1) / 24);
    const data = Array.from({ length: 10 * 12 }, (_, k) => (k === 8 * 12 + 5 ? -5 : k)).join(", ");
    await ncgen(eemepCdl({ times, fields: [{ name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"'], data }] }), path.join(folder, "eemep_hour_20190322T000000.nc"));
    await writeFile(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: "2019-03-22T00:00:00Z" })}\n`);
    const reports: string[] = [];
    for (const workers of ["0", "2"]) {
      process.env["ASHCAST_WORKERS"] = workers;
      const dist = await mkdtemp(path.join(tmpdir(), `ashcast-parallel-bad-${workers}-`));
      scratch.push(dist);
      const result = await build({ runsDir: badRuns, distDir: dist, publicUrl: "https://example.org/volcanicashforecast/0.1", now: () => new Date("2026-11-25T12:00:00Z") });
      const bad = result.report.runs.find((r) => r.folder === "2019-03-22-bad-step")!;
      expect(bad.status).not.toBe("published");
      expect(result.report.runs.find((r) => r.folder === "2026-06-01-hekla-parallel")!.status).toBe("published");
      reports.push(JSON.stringify(bad.issues));
    }
    expect(reports[1]).toBe(reports[0]);
    expect(reports[0]).toMatch(/2019-03-22-bad-step\/eemep_hour_20190322T000000\.nc/);
    expect(reports[0]).toMatch(/variable MAX6h_ASH_fl000-200 has a negative concentration \(-5 ug\/m3\) at time index 8/);
  });

  it("on one thread, starts each task after a turn of the event loop, where Node frees the native memory of the maps before", async () => {
    process.env["ASHCAST_WORKERS"] = "0";
    const order: string[] = [];
    setImmediate(() => order.push("event loop turned"));
    const task = runStepTask("encodeBlocks", { codes: new Uint16Array(0), nx: 0, ny: 0, steps: 0, blocksWithCodes: new Uint8Array(0) }, "a test", async () => {
      order.push("task");
      return [];
    });
    order.push("queued");
    expect(await task).toEqual([]);
    expect(order).toEqual(["queued", "event loop turned", "task"]);
  });

  it("refuses an ASHCAST_WORKERS that is not a number, naming it", () => {
    expect(() => stepWorkers({ ASHCAST_WORKERS: "two" })).toThrow(/ASHCAST_WORKERS is "two", not a number of worker threads/);
    expect(stepWorkers({ ASHCAST_WORKERS: " 3 " })).toBe(3);
    expect(stepWorkers({})).toBeGreaterThanOrEqual(0);
  });
});
