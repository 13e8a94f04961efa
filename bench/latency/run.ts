/**
 * Publish latency: from the moment a finished run folder appears in runs/ to the moment the service
 * answers its reftime with 200, as a forecaster sees it. A real `./bin/ashcast start` (watcher in its worker
 * thread, server on 127.0.0.1), with N runs already published; each repeat writes a new run folder
 * beside runs/ and renames it in (the "finished copy"), then polls GET /?reftime= every 5 ms.
 * The watcher starts a build after 0.4 s without new events (a folder renamed in whole is seen at once;
 * files written in place are held until their size has stayed the same for 1 s): that is the floor, and
 * what this measures above it is the build and the server's switch to the new release.
 *
 * With --model each new run is model output (a copy of one generated EEMEP file, 150 × 70 cells, 3 bands × 24
 * steps, with its own reftime), whose build reads, contours and draws in the build's worker threads.
 *
 *   npm run bench:latency -- [--runs 10,1000] [--repeats 7] [--model] [--no-write]
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runSpec, writeRun, type RunSpec } from "../incremental.ts";
import { writeDocsSection } from "../docsSection.ts";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";

const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "10,1000" }, repeats: { type: "string", default: "7" }, model: { type: "boolean", default: false }, "no-write": { type: "boolean", default: false } } });
const sizes = flags.runs.split(",").map(Number);
const repeats = Number(flags.repeats);
const BIN = fileURLToPath(new URL("../../bin/ashcast", import.meta.url));

function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { "user-agent": "ashcast-bench/latency" }, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.end();
  });
}

/** One generated model output, copied into every new run (its reftime is the run's own, in run.json). */
let modelSource: Promise<{ dir: string; files: string[] }> | undefined;
async function writeModelRun(parent: string, spec: RunSpec): Promise<void> {
  modelSource ??= (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ashcast-latency-model-"));
    const written = await writeEemepOutput({ outDir: dir });
    return { dir, files: [written.file, written.volcanoXml ?? path.join(dir, "volcano.xml")].map((file) => path.basename(file)) };
  })();
  const source = await modelSource;
  const folder = path.join(parent, spec.folder);
  await mkdir(folder);
  for (const file of source.files) await copyFile(path.join(source.dir, file), path.join(folder, file));
  await writeFile(path.join(folder, "run.json"), `${JSON.stringify({ type: "Exercise", reftime: new Date(spec.reftime).toISOString().replace(".000Z", "Z") })}\n`);
}

async function measure(n: number): Promise<{ n: number; latencies: number[]; startMs: number }> {
  const root = await mkdtemp(path.join(tmpdir(), `ashcast-latency-${n}-`));
  const runsDir = path.join(root, "runs");
  const staging = path.join(root, "staging");
  await mkdir(runsDir);
  await mkdir(staging);
  for (let i = 0; i < n; i++) await writeRun(runsDir, runSpec(i));
  const started = performance.now();
  const child = spawn(BIN, ["start", "--runs", runsDir, "--out", path.join(root, "dist"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ASHCAST_AUDIT_LOG: path.join(root, "audit.log"), ASHCAST_SETTINGS_FILE: path.join(root, "settings.json") } });
  const base = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /serving (http:\/\/\S+?)\/ from/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`ashcast start exited with ${code}: ${text}`)));
  });
  const startMs = performance.now() - started;
  const latencies: number[] = [];
  try {
    for (let r = 0; r < repeats; r++) {
      const spec: RunSpec = runSpec(n + r);
      if (flags.model) {
        // Runs arrive hours apart: each finds the build's workers stopped (they stop after 2 s without work).
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await writeModelRun(staging, spec);
      } else await writeRun(staging, spec);
      const url = `${base}/?reftime=${new Date(spec.reftime).toISOString().replace(".000Z", "Z")}`;
      const t0 = performance.now();
      await rename(path.join(staging, spec.folder), path.join(runsDir, spec.folder));
      while ((await status(url)) !== 200) await new Promise((resolve) => setTimeout(resolve, 5));
      latencies.push(performance.now() - t0);
      process.stderr.write(`N=${n} repeat ${r + 1}: ${latencies.at(-1)!.toFixed(0)} ms\n`);
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    await rm(root, { recursive: true, force: true });
  }
  return { n, latencies, startMs };
}

const results = [];
for (const n of sizes) results.push(await measure(n));
const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const rows = results.map((r) => `| ${r.n.toLocaleString("en")} | ${(r.startMs / 1000).toFixed(1)} | ${quantile(r.latencies, 0.5).toFixed(0)} | ${quantile(r.latencies, 0.9).toFixed(0)} | ${Math.max(...r.latencies).toFixed(0)} |`);
const first = results[0]!;
const last = results.at(-1)!;
const heading = flags.model ? "## Publish latency: a model-output run" : "## Publish latency: a finished run folder to a served run";
const section = `${heading}

\`npm run bench:latency -- --runs ${sizes.join(",")} --repeats ${repeats}${flags.model ? " --model" : ""}\`: a real \`ashcast start\` on 127.0.0.1 with N runs
published (KML runs as in the incremental benchmark); each repeat renames a complete run folder into runs/ and polls
\`GET /?reftime=\` every 5 ms until it answers 200.${flags.model ? " Each new run is model output: one generated EEMEP file (150 × 70 cells, 3 bands × 24 steps), read, contoured and drawn in the build's worker threads; it is renamed in 3 s after the last was served, as runs arrive hours apart, so that it finds the workers stopped (after 2 s without work)." : ""} ${cpus().length} cores, measured ${new Date().toISOString().slice(0, 16)}Z.

| runs present | start to serving (s) | latency median (ms) | p90 (ms) | max (ms) |
|---:|---:|---:|---:|---:|
${rows.join("\n")}

The floor is the watcher's debounce: a build starts after 0.4 s without new events. A folder renamed into runs/
whole is seen at once; files written in place are held until they have kept their size for 1 s (chokidar's
awaitWriteFinish), so a copy made file by file in runs/ adds that second. The rest is the build of the new run, the
switch of \`dist/current\` and the server noticing it.${last.n === first.n ? "" : ` With ${last.n.toLocaleString("en")} runs
the median is ${(quantile(last.latencies, 0.5) / quantile(first.latencies, 0.5)).toFixed(2)}× that with ${first.n}.`}
`;
process.stdout.write(`${section}\n`);
if (!flags["no-write"]) writeDocsSection(heading, section);
