/**
 * Benchmark: what the CLI costs to start, to check the bundled runs, and to serve 1,000 runs, on the
 * pinned Node 24 with native type stripping (this tree) against the same commands of another checkout
 * (`--before DIR`, e.g. a worktree of the last commit on Node 20 + tsx with its own `npm ci`), in one run.
 *
 *   npm run bench:cli -- --before /work/base [--repeats 15] [--check-repeats 3] [--serve-runs 1000] [--no-docs]
 *
 * Each command is run through its own `bin/ashcast`, as an operator runs it, under GNU time (wall seconds
 * and peak RSS of the process tree's largest process); the repeats of before, after and the reference
 * (`node -e 0` on the pinned Node) are interleaved, so load from elsewhere on the machine falls on all alike,
 * and medians are reported. The serve pass generates N small runs (the `new-run` template, every instant
 * shifted 6 h per run), builds them once with this tree, and starts each `serve` on that same dist/ in turn:
 * VmRSS of the server's process tree after start, then after every reftime was asked for once per encoding (identity, gzip, br).
 * Figures are printed and written to the section "## CLI: start-up, check and serve memory" of docs/benchmarks.md.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { writeDocsSection } from "../docsSection.ts";
import { freePort } from "../freePort.ts";

const AFTER = fileURLToPath(new URL("../..", import.meta.url));
const PRODUCT = "/volcanicashforecast/0.1";
const SECTION = "## CLI: start-up, check and serve memory";
const TARGETS = { helpSeconds: 0.2, helpMb: 80 } as const;
const USAGE = "usage: npm run bench:cli -- --before DIR [--repeats N] [--check-repeats N] [--serve-runs N] [--no-docs]";

interface Options {
  before: string;
  repeats: number;
  checkRepeats: number;
  serveRuns: number;
  docs: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { before: "", repeats: 15, checkRepeats: 3, serveRuns: 1000, docs: true };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value; ${USAGE}`);
      return v;
    };
    const count = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a whole number ≥ 1; ${USAGE}`);
      return n;
    };
    if (flag === "--before") options.before = path.resolve(value());
    else if (flag === "--repeats") options.repeats = count();
    else if (flag === "--check-repeats") options.checkRepeats = count();
    else if (flag === "--serve-runs") options.serveRuns = count();
    else if (flag === "--no-docs") options.docs = false;
    else throw new Error(`unknown option ${flag}; ${USAGE}`);
  }
  if (!options.before) throw new Error(`--before DIR is required (a checkout to compare with, its npm ci done); ${USAGE}`);
  if (!existsSync(path.join(options.before, "bin", "ashcast")) || !existsSync(path.join(options.before, "node_modules"))) {
    throw new Error(`--before ${options.before}: no bin/ashcast or node_modules there; make a worktree (git worktree add DIR COMMIT) and run npm ci in it`);
  }
  if (!existsSync("/usr/bin/time")) throw new Error("GNU time is needed for peak RSS: apt-get install -y time");
  return options;
}

/** The Node a checkout runs on when started as an operator would (its bin/ashcast, the system PATH). */
function runtimeOf(dir: string): string {
  const result = spawnSync(path.join(dir, "bin", "ashcast"), ["--version"], { encoding: "utf8", env: systemEnv() });
  const ownVersion = /Node\.js (v[\d.]+)/.exec(result.stdout)?.[1];
  if (ownVersion) return `Node.js ${ownVersion}`;
  // An older ashcast has no --version that names its runtime: it runs on the first node on PATH.
  const node = spawnSync("node", ["--version"], { encoding: "utf8", env: systemEnv() });
  return `Node.js ${node.stdout.trim()} (first on PATH)`;
}

/** PATH as an operator's shell has it: without npm's node_modules/.bin, which puts the pinned Node first. */
function systemEnv(): NodeJS.ProcessEnv {
  const PATH = (process.env.PATH ?? "").split(":").filter((p) => !p.includes("node_modules")).join(":");
  return { ...process.env, PATH };
}

interface Sample {
  seconds: number;
  peakMb: number;
}

/** One run of a command under GNU time; fails loudly when the command fails (a broken checkout measures nothing). */
function timed(command: string, args: readonly string[], cwd: string): Sample {
  const result = spawnSync("/usr/bin/time", ["-f", "TIME %e %M", command, ...args], { cwd, encoding: "utf8", env: systemEnv(), maxBuffer: 64 * 1024 * 1024 });
  const line = /TIME ([\d.]+) (\d+)\s*$/.exec(result.stderr);
  if (result.status !== 0 || !line) throw new Error(`${command} ${args.join(" ")} in ${cwd} exited ${result.status}: ${result.stderr.slice(-600)}`);
  return { seconds: Number(line[1]), peakMb: Number(line[2]) / 1024 };
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Measured {
  seconds: number;
  peakMb: number;
  minSeconds: number;
  maxSeconds: number;
}

function summarise(samples: readonly Sample[]): Measured {
  const seconds = samples.map((s) => s.seconds);
  return { seconds: median(seconds), peakMb: median(samples.map((s) => s.peakMb)), minSeconds: Math.min(...seconds), maxSeconds: Math.max(...seconds) };
}

/** Interleaves the commands, repeats times each, and summarises each one's samples. */
function interleaved(commands: ReadonlyArray<{ name: string; command: string; args: readonly string[]; cwd: string }>, repeats: number): Map<string, Measured> {
  const samples = new Map<string, Sample[]>(commands.map((c) => [c.name, []]));
  for (let r = 0; r < repeats; r++) {
    const order = r % 2 ? [...commands].reverse() : commands;
    for (const c of order) samples.get(c.name)!.push(timed(c.command, c.args, c.cwd));
  }
  return new Map([...samples].map(([name, s]) => [name, summarise(s)]));
}

// ---------------------------------------------------------------------------------------------------
// serve with many runs

const INSTANT = /\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?Z)\b/g;

async function generateRuns(dir: string, count: number): Promise<void> {
  const seedDir = path.join(dir, "..", "seed");
  const made = spawnSync(path.join(AFTER, "bin", "ashcast"), ["new-run", "seed", "--type", "Exercise", "--runs", seedDir, "--reftime", "2024-05-01T12:00Z"], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`ashcast new-run failed: ${made.stderr}`);
  const seed = path.join(seedDir, "seed");
  const files = await readdir(seed);
  const shift = (text: string, hours: number) =>
    text.replace(INSTANT, (instant) => new Date(Date.parse(instant) + hours * 3_600_000).toISOString().replace(/\.000Z$/, "Z"));
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const hours = 6 * i;
    const folder = path.join(dir, `${shift("2024-05-01T12:00:00Z", hours).slice(0, 13).replace(/[-:T]/g, "")}-bench`);
    await mkdir(folder);
    for (const file of files) {
      if (/\.(json|kml|xml)$/.test(file)) await writeFile(path.join(folder, file), shift(await readFile(path.join(seed, file), "utf8"), hours));
      else await copyFile(path.join(seed, file), path.join(folder, file));
    }
  }
}


function get(url: string, encoding: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { "accept-encoding": encoding, "user-agent": "bench/cli ops@example.org" } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("latin1") }));
    });
    request.on("error", reject);
  });
}

/**
 * VmRSS of a process and every process under it, MB: tsx's transpiler (esbuild) runs in a child process of
 * its own, while Node 24's type stripper runs inside the server process, so only the tree compares fairly.
 */
function treeRssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  let total = Number(kb) / 1024;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean);
    for (const child of children) total += treeRssMb(Number(child));
  }
  return total;
}

interface ServeMemory {
  afterStartMb: number;
  afterRequestsMb: number;
  requests: number;
}

async function serveMemory(dir: string, dist: string, reftimes: readonly string[]): Promise<ServeMemory> {
  const port = await freePort();
  const server = spawn(path.join(dir, "bin", "ashcast"), ["serve", "--dist", dist, "--port", String(port), "--host", "127.0.0.1"], {
    cwd: dir,
    env: { ...systemEnv(), ASHCAST_RATE_PER_SECOND: "1000000", ASHCAST_RATE_BURST: "1000000" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const base = `http://127.0.0.1:${port}${PRODUCT}`;
    for (let tries = 0; ; tries++) {
      const up = await get(`${base}/`, "identity").catch(() => undefined);
      if (up?.status === 200) break;
      if (tries > 300) throw new Error(`${dir}: serve did not answer on port ${port} within 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    const afterStartMb = treeRssMb(server.pid!);
    const jobs = reftimes.flatMap((reftime) => ["identity", "gzip", "br"].map((encoding) => ({ url: `${base}/?reftime=${encodeURIComponent(reftime)}`, encoding })));
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        const reply = await get(jobs[i]!.url, jobs[i]!.encoding);
        if (reply.status !== 200) throw new Error(`${dir}: GET ${jobs[i]!.url} answered ${reply.status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    return { afterStartMb, afterRequestsMb: treeRssMb(server.pid!), requests: jobs.length };
  } finally {
    server.kill("SIGTERM");
  }
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const say = (line: string) => console.log(line);
  const node = process.execPath;
  const afterBin = path.join(AFTER, "bin", "ashcast");
  const beforeBin = path.join(options.before, "bin", "ashcast");
  const runtimes = { after: runtimeOf(AFTER), before: runtimeOf(options.before), reference: `Node.js ${process.version}` };
  say(`after: ${AFTER} on ${runtimes.after}; before: ${options.before} on ${runtimes.before}`);

  // What type stripping itself costs: the same one-line program as .mjs and as .ts.
  const scratch = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-cli-strip-"));
  await writeFile(path.join(scratch, "one.mjs"), "const answer = 42;\nconsole.log(answer);\n");
  await writeFile(path.join(scratch, "one.ts"), "const answer: number = 42;\nconsole.log(answer);\n");
  say(`--help, ${options.repeats} times each, interleaved with node -e 0 and a one-line program as .mjs and .ts`);
  const help = interleaved(
    [
      { name: "reference", command: node, args: ["-e", "0"], cwd: AFTER },
      { name: "one.mjs", command: node, args: [path.join(scratch, "one.mjs")], cwd: scratch },
      { name: "one.ts", command: node, args: [path.join(scratch, "one.ts")], cwd: scratch },
      { name: "before", command: beforeBin, args: ["--help"], cwd: options.before },
      { name: "after", command: afterBin, args: ["--help"], cwd: AFTER },
    ],
    options.repeats,
  );
  await rm(scratch, { recursive: true, force: true });

  const runsDir = path.join(AFTER, "runs");
  say(`check on ${runsDir}, ${options.checkRepeats} times each`);
  const check = interleaved(
    [
      { name: "before", command: beforeBin, args: ["check", runsDir], cwd: options.before },
      { name: "after", command: afterBin, args: ["check", runsDir], cwd: AFTER },
    ],
    options.checkRepeats,
  );

  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-cli-"));
  let serve: { before: ServeMemory; after: ServeMemory } | undefined;
  try {
    say(`generating and building ${options.serveRuns} runs in ${work}`);
    await generateRuns(path.join(work, "runs"), options.serveRuns);
    const dist = path.join(work, "dist");
    const built = spawnSync(afterBin, ["build", "--runs", path.join(work, "runs"), "--out", dist, "--public-url", "http://127.0.0.1:8080/volcanicashforecast/0.1"], { encoding: "utf8" });
    if (built.status !== 0) throw new Error(`ashcast build failed: ${built.stderr.slice(-1000)}`);
    const reftimes = await publishedReftimes(dist);
    if (reftimes.length !== options.serveRuns) throw new Error(`the build published ${reftimes.length} runs, not ${options.serveRuns}`);
    // Twice, alternating, and the lower of each: a neighbour's load can only add memory pressure, not take it.
    const rounds: Array<{ before: ServeMemory; after: ServeMemory }> = [];
    for (let r = 0; r < 2; r++) {
      const after = await serveMemory(AFTER, dist, reftimes);
      const before = await serveMemory(options.before, dist, reftimes);
      rounds.push({ before, after });
      say(`serve ${reftimes.length} runs: before ${before.afterStartMb.toFixed(0)} → ${before.afterRequestsMb.toFixed(0)} MB, after ${after.afterStartMb.toFixed(0)} → ${after.afterRequestsMb.toFixed(0)} MB`);
    }
    const lowest = (pick: (round: { before: ServeMemory; after: ServeMemory }) => ServeMemory): ServeMemory => ({
      afterStartMb: Math.min(...rounds.map((round) => pick(round).afterStartMb)),
      afterRequestsMb: Math.min(...rounds.map((round) => pick(round).afterRequestsMb)),
      requests: pick(rounds[0]!).requests,
    });
    serve = { before: lowest((round) => round.before), after: lowest((round) => round.after) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }

  const section = report(options, runtimes, help, check, serve);
  console.log(`\n${section}`);
  if (options.docs) writeDocsSection(SECTION, section);
}

/** The published reftimes, newest first, as the server reads them. */
async function publishedReftimes(dist: string): Promise<string[]> {
  const release = path.resolve(dist, await readlink(path.join(dist, "current")));
  return (await readReleaseIndex(dist, release)).reftimes;
}

function report(
  options: Options,
  runtimes: { after: string; before: string; reference: string },
  help: Map<string, Measured>,
  check: Map<string, Measured>,
  serve: { before: ServeMemory; after: ServeMemory } | undefined,
): string {
  const h = (name: string) => help.get(name)!;
  const c = (name: string) => check.get(name)!;
  const s = (x: Measured) => `${x.seconds.toFixed(2)} s (${x.minSeconds.toFixed(2)}–${x.maxSeconds.toFixed(2)})`;
  const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
  const lines = [
    SECTION,
    "",
    `Written by \`npm run bench:cli -- --before DIR\` (bench/cli/run.ts) on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, shared.`,
    `After: this tree, \`bin/ashcast\` on ${runtimes.after} (native type stripping). Before: ${options.before} on ${runtimes.before}.`,
    `Reference: \`node -e 0\` on ${runtimes.reference}. Medians of ${options.repeats} interleaved runs (min–max), peak RSS from GNU time.`,
    "",
    "| command | before | after | reference `node -e 0` | target | verdict |",
    "|---|---|---|---|---|---|",
    `| \`ashcast --help\` wall | ${s(h("before"))} | ${s(h("after"))} | ${s(h("reference"))} | ≤ ${TARGETS.helpSeconds} s | ${verdict(h("after").seconds <= TARGETS.helpSeconds)} |`,
    `| \`ashcast --help\` peak RSS | ${h("before").peakMb.toFixed(0)} MB | ${h("after").peakMb.toFixed(0)} MB | ${h("reference").peakMb.toFixed(0)} MB | ≤ ${TARGETS.helpMb} MB | ${verdict(h("after").peakMb <= TARGETS.helpMb)} |`,
    `| \`ashcast check\` on the bundled runs, wall (${options.checkRepeats} runs) | ${s(c("before"))} | ${s(c("after"))} | | before and after | measured |`,
    `| \`ashcast check\` peak RSS | ${c("before").peakMb.toFixed(0)} MB | ${c("after").peakMb.toFixed(0)} MB | | before and after | measured |`,
  ];
  if (serve) {
    lines.push(
      `| \`ashcast serve\`, ${options.serveRuns} runs, RSS of its process tree after start | ${serve.before.afterStartMb.toFixed(0)} MB | ${serve.after.afterStartMb.toFixed(0)} MB | | before and after | measured |`,
      `| … after ${serve.after.requests} requests (every reftime × identity, gzip, br) | ${serve.before.afterRequestsMb.toFixed(0)} MB | ${serve.after.afterRequestsMb.toFixed(0)} MB | | ≤ 250 MB (issue 3) | ${verdict(serve.after.afterRequestsMb <= 250)} |`,
    );
  }
  const strip = { seconds: h("one.ts").seconds - h("one.mjs").seconds, mb: h("one.ts").peakMb - h("one.mjs").peakMb };
  lines.push(
    "",
    `Type stripping itself, on the pinned Node: a one-line program takes ${h("one.mjs").seconds.toFixed(2)} s and ${h("one.mjs").peakMb.toFixed(0)} MB as .mjs,`,
    `${h("one.ts").seconds.toFixed(2)} s and ${h("one.ts").peakMb.toFixed(0)} MB as .ts: ${strip.seconds.toFixed(2)} s and ${strip.mb.toFixed(0)} MB for loading the stripper (SWC compiled to`,
    "WebAssembly, inside the process), paid once per process. That is most of what `serve` holds more than before, where tsx's",
    "esbuild did the work (the serve figures are of the whole process tree, so a transpiler in a child process would count too).",
  );
  lines.push("");
  return `${lines.join("\n")}\n`;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
