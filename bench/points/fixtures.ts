/**
 * Inputs of the point-query bench, generated once and cached under the temp directory (keyed by the
 * generator's source and the options): the full-size EEMEP run of bench/build (800 × 500 cells at 0.1°,
 * 3 bands × 72 hourly steps) and 1,000 small model runs (60 × 40 cells at 1°, 3 steps: building 1,000 runs draws their PNGs, 0.4 s each, one file copied
 * under 1,000 reftimes) for the memory figure.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const FULL = { nx: 800, ny: 500, steps: 72, res: 0.1, lat0: 25, lon0: -45, reftime: "2026-06-01T00:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7, altitude: 1491 }, plumeTopM: 12000 } as const;
export const SMALL = { nx: 60, ny: 40, steps: 3, res: 1, lat0: 40, lon0: -50, reftime: "2026-01-01T00:00:00Z" } as const;
const key = (options: object) => createHash("sha256").update(readFileSync(path.join(REPO, "scripts/make-model-output.ts"))).update(JSON.stringify(options)).digest("hex").slice(0, 12);

/** runs/ with the full-size run; generated once (about 10 s). */
export async function fullSizeRuns(): Promise<string> {
  const dir = path.join(tmpdir(), `ashcast-bench-points-full-${key(FULL)}`);
  const runs = path.join(dir, "runs");
  if (existsSync(path.join(dir, "done"))) return runs;
  rmSync(dir, { recursive: true, force: true });
  const folder = path.join(runs, "2026-06-01-hekla-full-size");
  mkdirSync(folder, { recursive: true });
  await writeEemepOutput({ outDir: folder, ...FULL, volcano: { ...FULL.volcano } });
  writeFileSync(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: FULL.reftime })}\n`);
  writeFileSync(path.join(dir, "done"), "");
  return runs;
}

/** runs/ with `count` small model runs, one every 6 hours back from SMALL.reftime. */
export async function manyRuns(count: number): Promise<{ runs: string; reftimes: string[] }> {
  const dir = path.join(tmpdir(), `ashcast-bench-points-many-${count}-${key(SMALL)}`);
  const runs = path.join(dir, "runs");
  const reftimes = Array.from({ length: count }, (_, i) => new Date(Date.parse(SMALL.reftime) - i * 6 * 3_600_000).toISOString().replace(".000Z", "Z"));
  if (existsSync(path.join(dir, "done"))) return { runs, reftimes };
  rmSync(dir, { recursive: true, force: true });
  const source = path.join(dir, "source");
  const written = await writeEemepOutput({ outDir: source, ...SMALL });
  mkdirSync(runs, { recursive: true });
  reftimes.forEach((reftime, i) => {
    const folder = path.join(runs, `run-${String(i).padStart(4, "0")}`);
    mkdirSync(folder);
    for (const file of readdirSync(source)) copyFileSync(path.join(source, file), path.join(folder, file));
    writeFileSync(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime, description: `Bench run ${i} (a copy of ${path.basename(written.file)})` })}\n`);
  });
  writeFileSync(path.join(dir, "done"), "");
  return { runs, reftimes };
}
