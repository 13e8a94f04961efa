/**
 * Build time against run size: synthetic EEMEP runs of the full-size grid (800 × 500 cells at 0.1°, three
 * flight-level bands) with 6 to 72 hourly steps, and the 24-step run on grids of a quarter and the full
 * area, each published by `./bin/ashcast build` into a fresh dist/ as a child process (wall clock, and peak
 * RSS from GNU time when it is there). The question is the shape: time per step and per cell should stay
 * flat as the run grows (readers go one step at a time; memory must not grow with the steps).
 *
 *   npm run bench:sizes -- [--repeats 1] [--no-write]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { writeDocsSection } from "../docsSection.ts";

const { values: flags } = parseArgs({ options: { repeats: { type: "string", default: "1" }, "no-write": { type: "boolean", default: false } } });
const repeats = Math.max(1, Number(flags.repeats) || 1);
const BIN = fileURLToPath(new URL("../../bin/ashcast", import.meta.url));
const BASE = { res: 0.1, lat0: 25, lon0: -45, reftime: "2026-06-01T00:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7, altitude: 1491 }, plumeTopM: 12000 };
const CASES = [
  { nx: 800, ny: 500, steps: 6 },
  { nx: 800, ny: 500, steps: 18 },
  { nx: 800, ny: 500, steps: 36 },
  { nx: 800, ny: 500, steps: 72 },
  { nx: 400, ny: 250, steps: 24 },
  { nx: 800, ny: 500, steps: 24 },
];
const hasGnuTime = existsSync("/usr/bin/time");
const root = mkdtempSync(path.join(tmpdir(), "ashcast-bench-sizes-"));
const rows: string[] = [];
const fullGrid: Array<{ steps: number; wall: number; rssMb: number }> = [];
try {
  for (const size of CASES) {
    const runsDir = path.join(root, `runs-${size.nx}x${size.ny}x${size.steps}`);
    const runDir = path.join(runsDir, "2026-06-01-hekla");
    mkdirSync(runDir, { recursive: true });
    await writeEemepOutput({ outDir: runDir, ...BASE, ...size, volcano: { ...BASE.volcano } });
    writeFileSync(path.join(runDir, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: BASE.reftime })}\n`);
    const inputMb = readdirSync(runDir).reduce((total, name) => total + statSync(path.join(runDir, name)).size, 0) / 1048576;
    const walls: number[] = [];
    let rssMb = Number.NaN;
    for (let r = 0; r < repeats; r++) {
      const dist = path.join(root, `dist-${r}`);
      rmSync(dist, { recursive: true, force: true });
      const args = ["build", "--runs", runsDir, "--out", dist];
      const t0 = performance.now();
      const done = hasGnuTime ? spawnSync("/usr/bin/time", ["-f", "%M", BIN, ...args], { encoding: "utf8" }) : spawnSync(BIN, args, { encoding: "utf8" });
      walls.push((performance.now() - t0) / 1000);
      if (done.status !== 0) throw new Error(`build of ${size.nx}×${size.ny}×${size.steps} failed: ${done.stderr}`);
      if (hasGnuTime) rssMb = Math.max(Number.isNaN(rssMb) ? 0 : rssMb, Number(done.stderr.trim().split("\n").at(-1)) / 1024);
      rmSync(dist, { recursive: true, force: true });
    }
    const wall = [...walls].sort((a, b) => a - b)[walls.length >> 1]!;
    const cellSteps = (size.nx * size.ny * size.steps) / 1e6;
    if (size.nx === 800) fullGrid.push({ steps: size.steps, wall, rssMb });
    rows.push(`| ${size.nx} × ${size.ny} | ${size.steps} | ${inputMb.toFixed(1)} | ${wall.toFixed(2)} | ${((wall * 1000) / size.steps).toFixed(0)} | ${(wall / cellSteps).toFixed(2)} | ${Number.isNaN(rssMb) ? "–" : rssMb.toFixed(0)} |`);
    process.stderr.write(`${rows.at(-1)}\n`);
    rmSync(runsDir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
// Wall time against steps on the full grid: slope (s per step) and intercept (s) of the least-squares line.
const meanSteps = fullGrid.reduce((t, c) => t + c.steps, 0) / fullGrid.length;
const meanWall = fullGrid.reduce((t, c) => t + c.wall, 0) / fullGrid.length;
const slope = fullGrid.reduce((t, c) => t + (c.steps - meanSteps) * (c.wall - meanWall), 0) / fullGrid.reduce((t, c) => t + (c.steps - meanSteps) ** 2, 0);
const intercept = meanWall - slope * meanSteps;
const bySteps = [...fullGrid].sort((a, b) => a.steps - b.steps);
const rssRange = Number.isNaN(bySteps[0]!.rssMb) ? "unmeasured (no /usr/bin/time)" : `${bySteps[0]!.rssMb.toFixed(0)} MB with ${bySteps[0]!.steps} steps to ${bySteps.at(-1)!.rssMb.toFixed(0)} MB with ${bySteps.at(-1)!.steps}`;
const section = `## Build time against run size

\`npm run bench:sizes -- --repeats ${repeats}\`: synthetic EEMEP runs (three flight-level bands,
the full-size generator of "Publishing a full-size model run"), each published by \`./bin/ashcast build\` into a fresh dist/
as a child process; wall clock (median of ${repeats}) includes the process start (~1 s). ${cpus().length} cores, measured ${new Date().toISOString().slice(0, 16)}Z.

| grid | steps | input MB | wall s | ms per step | s per million cell-steps | peak RSS MB |
|---|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}

On the full grid, a least-squares line through the ${fullGrid.length} runs: ${slope.toFixed(3)} s per step plus ${intercept.toFixed(1)} s
that every build pays (process start, the base map, the release). The peak RSS goes from ${rssRange}.
`;
process.stdout.write(`${section}\n`);
if (!flags["no-write"]) writeDocsSection("## Build time against run size", section);
