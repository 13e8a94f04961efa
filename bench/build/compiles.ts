/**
 * What V8 spends compiling during a full-size build: one `ashcast build` of bench:build's cached run with
 * --trace-opt (Node started directly, with the launcher's MALLOC_ARENA_MAX), every optimising compile of every
 * thread summed by tier and by function. Compiles run on V8's helper threads beside the build's own, so on
 * two cores they take CPU from it; a function compiled again and again (a deoptimisation loop) shows here
 * long before it shows in the wall clock. Prints markdown; run it twice to see how much it varies.
 *
 *   npm run bench:build:compiles -- [--top 12]
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({ options: { top: { type: "string", default: "12" } } });
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const cache = readdirSync(tmpdir()).find((name) => name.startsWith("ashcast-bench-build-") && existsSync(path.join(tmpdir(), name, "complete")));
if (!cache) throw new Error("no cached full-size run: run `npm run bench:build` first (it generates the run once)");
const dist = path.join(tmpdir(), "ashcast-bench-compiles");
rmSync(dist, { recursive: true, force: true });
const result = spawnSync(path.join(REPO, "node_modules/node/bin/node"), ["--trace-opt", path.join(REPO, "src/cli/ashcast.ts"), "build", "--runs", path.join(tmpdir(), cache, "runs"), "--out", dist], {
  cwd: REPO,
  env: { ...process.env, MALLOC_ARENA_MAX: "2" },
  encoding: "utf8",
  maxBuffer: 1 << 28,
});
rmSync(dist, { recursive: true, force: true });
if (result.status !== 0) throw new Error(`the build failed (exit ${result.status}):\n${result.stdout.slice(-2000)}${result.stderr}`);

// [completed compiling 0x… <JSFunction name (sfi = 0x…)> (target TURBOFAN_JS) OSR - took 0.010, 85.697, 0.166 ms]
const COMPILED = /^\[completed compiling 0x[0-9a-f]+ <JSFunction (?:(\S+) )?\(sfi = [^)]*\)> \(target (\w+)\)( OSR)? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]$/;
const tiers = new Map<string, { ms: number; count: number }>();
const functions = new Map<string, { ms: number; count: number; osr: number }>();
for (const line of result.stdout.split("\n")) {
  const match = COMPILED.exec(line);
  if (!match) continue;
  const [, name, tier, osr, prepare, execute, finalize] = match;
  const ms = Number(prepare) + Number(execute) + Number(finalize);
  const t = tiers.get(tier!) ?? { ms: 0, count: 0 };
  tiers.set(tier!, { ms: t.ms + ms, count: t.count + 1 });
  if (tier !== "TURBOFAN_JS") continue;
  const key = name || "(anonymous)";
  const f = functions.get(key) ?? { ms: 0, count: 0, osr: 0 };
  functions.set(key, { ms: f.ms + ms, count: f.count + 1, osr: f.osr + (osr ? 1 : 0) });
}
const lines = [
  `One full-size build with \`--trace-opt\`, ${new Date().toISOString().slice(0, 16)}Z: optimising compiles of every thread.`,
  "",
  "| tier | compiles | ms |",
  "|---|---:|---:|",
  ...[...tiers].map(([tier, t]) => `| ${tier} | ${t.count} | ${t.ms.toFixed(0)} |`),
  "",
  "| function (TurboFan) | compiles | of them on the stack (OSR) | ms |",
  "|---|---:|---:|---:|",
  ...[...functions]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, Number(flags.top) || 12)
    .map(([name, f]) => `| \`${name}\` | ${f.count} | ${f.osr} | ${f.ms.toFixed(0)} |`),
];
process.stdout.write(`${lines.join("\n")}\n`);
