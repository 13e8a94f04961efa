/**
 * Benchmark: ashcast's server and nginx serving the same dist/, measured the same way, in one run.
 *
 *   npm run bench:serve -- [--duration 10] [--repeats 3] [--connections 32] [--warmup 3]
 *                              [--rss-runs 1000] [--kml-runs 100] [--profile] [--no-bare]
 *                              [--no-throughput] [--no-rss] [--no-docs] [--keep] [--max-minutes 45]
 *                              [--quiet-wait 30] [--no-snapshot] [--snapshot-wait 120] [--code auto]
 *
 * Throughput: builds a dist from runs/ into a temporary directory and starts, each as its own process
 * pinned to core 0 (taskset): `./bin/ashcast serve` on it, nginx (bench/serve/nginx.conf.template: one
 * worker, sendfile, ETags, no access log, `/latest.json` = the latest run's model.json, the file ashcast
 * answers `/volcanicashforecast/0.1/` with) and, as a reference between the two, bare `node:http` holding
 * the same bytes (bench/serve/bare.ts). wrk (1 thread, pinned to core 1, keep-alive) then measures, for
 * each server, 200s of that JSON and 304s (If-None-Match with that server's own ETag, fetched first);
 * repeats are interleaved and the server order rotates, so load from elsewhere on the machine falls on
 * all servers alike. Medians are reported, with ratios to nginx and the server's CPU time per request
 * (from /proc, less sensitive to other load on the machine). Before each measured run it waits (at most
 * --quiet-wait seconds) for the machine to be nearly idle, and it records how busy the machine was, wrk
 * and everything else, while it ran. Every request carries a User-Agent.
 *
 * Memory: generates N runs (one `ashcast new-run` folder copied with every instant shifted), builds them,
 * starts `./bin/ashcast serve` on that dist, requests every reftime once per encoding (identity, gzip,
 * br) and every KML resource of the newest K runs, twice, and reads VmRSS/VmHWM from /proc/<pid>/status.
 *
 * --profile adds a pass with `node --cpu-prof` on ashcast under the same load (200, then 304) and a
 * summary of where the CPU goes. Figures are printed and written to the section
 * "## Serving: ashcast vs nginx on the same dist/" of docs/benchmarks.md (unless --no-docs); text
 * between `<!-- serve-notes:start -->` and `<!-- serve-notes:end -->` in that section is kept.
 * The application (bin/, src/, templates/, runs/) is copied into the temporary directory first, so that
 * edits made to the working tree while the bench runs do not mix versions (--no-snapshot runs it in place);
 * when that copy does not build (someone is half-way through an edit) it copies again, for --snapshot-wait s,
 * and then (--code auto) takes the application from git HEAD instead (`git archive`, read-only), provided
 * the serving code (bin/ src/server src/contract src/time templates/ package.json) has no uncommitted
 * change, so that what is measured is still the working tree's server. --code head takes HEAD at once.
 * Only 127.0.0.1 is loaded; everything is bounded in time; every process started is killed at the end.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, closeSync, constants, openSync, readFileSync, readdirSync, statSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { DEFAULT_BODY_CACHE_BYTES } from "../../src/server/releaseSource.ts";
import { formatSummary, summariseFile, type ProfileSummary } from "./profile.ts";
import { freePort } from "../freePort.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** The copy of the application the bench runs (see snapshot()); the working tree itself with --no-snapshot. */
let APP = REPO;
let BIN = path.join(APP, "bin", "ashcast");
const TEMPLATE = path.join(REPO, "bench", "serve", "nginx.conf.template");
const BARE = path.join(REPO, "bench", "serve", "bare.ts");
const DOCS_FILE = path.join(REPO, "docs", "benchmarks.md");
const SECTION = "## Serving: ashcast vs nginx on the same dist/";
const NOTES_START = "<!-- serve-notes:start -->";
const NOTES_END = "<!-- serve-notes:end -->";
const UA = "bench/1 ops@example.org";
const PRODUCT = "/volcanicashforecast/0.1";
const INSTALL = "apt-get update && apt-get install -y nginx-light wrk";
const CACHE_MB = DEFAULT_BODY_CACHE_BYTES / 1024 / 1024;
const TARGETS = { ratio200: 0.5, ratio304: 0.45, p99Ms: 5, rssMb: 250 } as const;
const SERVER_CPU = 0;
const LOAD_CPU = 1;

// ---------------------------------------------------------------------------------------------------
// Options

interface Options {
  duration: number;
  repeats: number;
  connections: number;
  warmup: number;
  rssRuns: number;
  kmlRuns: number;
  bare: boolean;
  throughput: boolean;
  rss: boolean;
  profile: boolean;
  docs: boolean;
  keep: boolean;
  maxMinutes: number;
  quietWait: number;
  snapshot: boolean;
  snapshotWait: number;
  code: "auto" | "worktree" | "head";
}

const USAGE =
  "usage: npm run bench:serve -- [--duration S] [--repeats N] [--connections C] [--warmup S] [--rss-runs N] [--kml-runs K] [--profile] [--no-bare] [--no-throughput] [--no-rss] [--no-docs] [--keep] [--max-minutes M] [--quiet-wait S] [--no-snapshot] [--snapshot-wait S] [--code auto|worktree|head]";

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { duration: 10, repeats: 3, connections: 32, warmup: 3, rssRuns: 1000, kmlRuns: 100, bare: true, throughput: true, rss: true, profile: false, docs: true, keep: false, maxMinutes: 45, quietWait: 30, snapshot: true, snapshotWait: 120, code: "auto" };
  const numeric: Record<string, keyof Options> = {
    "--duration": "duration",
    "--repeats": "repeats",
    "--connections": "connections",
    "--warmup": "warmup",
    "--rss-runs": "rssRuns",
    "--kml-runs": "kmlRuns",
    "--max-minutes": "maxMinutes",
    "--quiet-wait": "quietWait",
    "--snapshot-wait": "snapshotWait",
  };
  const flags: Record<string, [keyof Options, boolean]> = {
    "--no-bare": ["bare", false],
    "--no-throughput": ["throughput", false],
    "--no-rss": ["rss", false],
    "--profile": ["profile", true],
    "--no-docs": ["docs", false],
    "--keep": ["keep", true],
    "--no-snapshot": ["snapshot", false],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const key = numeric[flag];
    if (key) {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value < 0) throw new Error(`${flag} takes a non-negative number\n${USAGE}`);
      (options as unknown as Record<string, number>)[key] = value;
    } else if (flag === "--code") {
      const value = argv[++i];
      if (value !== "auto" && value !== "worktree" && value !== "head") throw new Error(`--code takes auto, worktree or head\n${USAGE}`);
      options.code = value;
    } else if (flags[flag]) {
      const [name, value] = flags[flag];
      (options as unknown as Record<string, boolean>)[name] = value;
    } else {
      throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  if (options.duration < 1 || options.repeats < 1 || options.connections < 1) throw new Error(`--duration, --repeats and --connections must be at least 1\n${USAGE}`);
  if (options.rssRuns < 1) options.rss = false;
  return options;
}

// ---------------------------------------------------------------------------------------------------
// Tools, processes, clean-up

function which(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"]) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

function firstLine(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: "utf8" });
  return `${result.stdout ?? ""}${result.stderr ?? ""}`.split("\n").find((l) => l.trim())?.trim() ?? "?";
}

interface Proc {
  name: string;
  pid: number;
  logFile: string;
  exited: Promise<number | null>;
  done: boolean;
  /** Standard output, when captured. */
  stdout?: Promise<string>;
}

const procs = new Set<Proc>();
let taskset: string | undefined;
let wrkPath = "wrk";

/** Starts a command in its own process group (so it and its children can be stopped together), optionally pinned to a core. */
function launch(name: string, command: string, args: readonly string[], options: { cpu?: number; logFile: string; capture?: boolean; env?: NodeJS.ProcessEnv }): Proc {
  const [cmd, argv] = taskset && options.cpu !== undefined ? [taskset, ["-c", String(options.cpu), command, ...args]] : [command, [...args]];
  const log = openSync(options.logFile, "a");
  const child: ChildProcess = spawn(cmd, argv, { cwd: REPO, detached: true, stdio: ["ignore", options.capture ? "pipe" : log, log], ...(options.env ? { env: options.env } : {}) });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${name} (${cmd})`);
  const proc: Proc = { name, pid: child.pid, logFile: options.logFile, done: false, exited: Promise.resolve(null) };
  if (options.capture) {
    const chunks: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => chunks.push(chunk));
    proc.stdout = new Promise((resolve) => child.stdout!.once("close", () => resolve(Buffer.concat(chunks).toString("utf8"))));
  }
  proc.exited = new Promise((resolve) =>
    child.once("exit", (code) => {
      proc.done = true;
      procs.delete(proc);
      resolve(code);
    }),
  );
  procs.add(proc);
  return proc;
}

function signalGroup(proc: Proc, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}

/** SIGTERM to the process group, SIGKILL if it is still there after `graceMs`. */
async function stop(proc: Proc, graceMs = 5000): Promise<void> {
  if (proc.done) return;
  signalGroup(proc, "SIGTERM");
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref());
  if ((await Promise.race([proc.exited, timer])) === "timeout") {
    signalGroup(proc, "SIGKILL");
    await proc.exited;
  }
}

function killAllNow(): void {
  for (const proc of procs) signalGroup(proc, "SIGKILL");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));


function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Runs a command to completion (bounded), with its output appended to a log. */
async function runToEnd(name: string, command: string, args: readonly string[], logFile: string, timeoutMs: number): Promise<void> {
  const proc = launch(name, command, args, { logFile });
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), timeoutMs).unref());
  const outcome = await Promise.race([proc.exited, timer]);
  if (outcome === "timeout") {
    await stop(proc, 1000);
    throw new Error(`${name} took longer than ${timeoutMs / 1000} s; see ${logFile}`);
  }
  if (outcome !== 0) throw new Error(`${name} exited with ${outcome}:\n${tail(logFile)}`);
}

// ---------------------------------------------------------------------------------------------------
// HTTP client (exact bytes: no decompression), /proc readings

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function request(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { "user-agent": UA, ...headers }, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on("error", reject);
  });
}

async function waitReady(proc: Proc, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.done) throw new Error(`${proc.name} exited before it answered:\n${tail(proc.logFile)}`);
    try {
      const reply = await request(url);
      if (reply.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${proc.name} did not answer ${url} within ${timeoutMs / 1000} s:\n${tail(proc.logFile)}`);
}

const CLK_TCK = Number(firstLine("getconf", ["CLK_TCK"])) || 100;

/** CPU time (s) of a process and its descendants. */
function cpuSeconds(pid: number): number {
  let total = 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    total += (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(/\s+/) : []) total += cpuSeconds(Number(child));
    }
  } catch {
    // the process ended
  }
  return total;
}

/** Busy CPU time (s) of the whole machine, all cores. */
function machineBusySeconds(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - fields[3]! - fields[4]!) / CLK_TCK;
}

/** VmRSS, VmHWM, RssAnon (MB) of a process and, for nginx, its worker. */
function memory(pid: number): { rss: number; hwm: number; anon: number } {
  const read = (p: number) => {
    const status = readFileSync(`/proc/${p}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024, anon: kb("RssAnon") / 1024 };
  };
  const own = read(pid);
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    for (const child of children ? children.split(/\s+/) : []) {
      const c = read(Number(child));
      own.rss += c.rss;
      own.hwm += c.hwm;
      own.anon += c.anon;
    }
  }
  return own;
}

const loadAverage = () => os.loadavg()[0]!;

// ---------------------------------------------------------------------------------------------------
// wrk

interface WrkRun {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  bytesPerRequest: number;
  errors: number;
  badStatus: number;
  /** Server CPU time per request (µs). */
  cpuUs: number;
  /** Cores the server used during the run. */
  serverCores: number;
  /** Cores wrk used (sampled while it ran; 1.0 means the load generator was the limit). */
  wrkCores: number;
  /** Cores everything else on the machine used during the run. */
  otherCores: number;
  /** Cores busy on the machine just before the run (after waiting for quiet, see --quiet-wait). */
  busyBefore: number;
  load: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

export function parseWrk(output: string): Pick<WrkRun, "rps" | "p50" | "p99" | "requests" | "bytesPerRequest" | "errors" | "badStatus"> {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const latency = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(output);
    return m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
  };
  const total = /(\d+) requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB) read/.exec(output);
  const requests = Number(total?.[1]);
  const bytes = total ? Number(total[2]) * UNIT_BYTES[total[3]!]! : Number.NaN;
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  const badStatus = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  if (!Number.isFinite(rps) || !Number.isFinite(requests)) throw new Error(`could not read wrk's output:\n${output}`);
  return { rps, p50: latency("50"), p99: latency("99"), requests, bytesPerRequest: bytes / requests, errors, badStatus };
}

const QUIET_CORES = 0.25;

/** Waits (at most `maxSeconds`) until the machine is nearly idle; returns the cores busy in the last second. */
async function waitQuiet(maxSeconds: number): Promise<number> {
  const deadline = Date.now() + maxSeconds * 1000;
  for (;;) {
    const before = machineBusySeconds();
    await sleep(1000);
    const busy = machineBusySeconds() - before;
    if (busy < QUIET_CORES || Date.now() >= deadline) return busy;
  }
}

async function runWrk(url: string, headers: readonly string[], seconds: number, connections: number, serverPid: number, logFile: string, quietWait = 0): Promise<WrkRun> {
  const busyBefore = quietWait > 0 ? await waitQuiet(quietWait) : Number.NaN;
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "2s", "--latency", "-H", `User-Agent: ${UA}`];
  for (const header of headers) args.push("-H", header);
  args.push(url);
  const serverBefore = cpuSeconds(serverPid);
  const machineBefore = machineBusySeconds();
  const started = performance.now();
  const load = loadAverage();
  const wrk = launch("wrk", wrkPath, args, { cpu: LOAD_CPU, logFile, capture: true });
  // wrk's own CPU time, sampled while it runs (its /proc entry is gone once it has exited).
  let wrkCpu = 0;
  const sampler = setInterval(() => {
    const now = cpuSeconds(wrk.pid);
    if (now > 0) wrkCpu = now;
  }, 200);
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), (seconds + 20) * 1000).unref());
  const outcome = await Promise.race([wrk.exited, timer]);
  clearInterval(sampler);
  if (outcome === "timeout") {
    await stop(wrk, 1000);
    throw new Error(`wrk did not finish within ${seconds + 20} s (${url})`);
  }
  const output = (await wrk.stdout) ?? "";
  const elapsed = (performance.now() - started) / 1000;
  const serverCpu = cpuSeconds(serverPid) - serverBefore;
  const machineCpu = machineBusySeconds() - machineBefore;
  const parsed = parseWrk(output);
  return {
    ...parsed,
    cpuUs: (serverCpu / parsed.requests) * 1e6,
    serverCores: serverCpu / elapsed,
    wrkCores: wrkCpu / seconds,
    otherCores: Math.max(0, machineCpu - serverCpu - wrkCpu) / elapsed,
    busyBefore,
    load,
  };
}

// ---------------------------------------------------------------------------------------------------
// Dist, runs

interface LatestRun {
  reftime: string;
  file: string;
  size: number;
  sha256: string;
}

/** What the bench needs of the release index (only fields common to the index's formats). */
interface IndexView {
  reftimes: string[];
  runs: Record<string, { json: string; dir?: string }>;
  artefacts?: Record<string, ArtefactView>;
}
interface ArtefactView {
  sha256: string;
  identity: { file: string; size: number };
}

async function readIndex(distDir: string): Promise<IndexView> {
  const target = await readlink(path.join(distDir, "current"));
  return (await readReleaseIndex(distDir, path.resolve(distDir, target))) as IndexView;
}

/**
 * The latest run's AshModel JSON file: from the release index (format 1), from the run's own artefact
 * list (`<run dir>/artefacts.json`), or else the `model.json` under dist/runs/ with the given sha256.
 */
async function latestRun(distDir: string, sha256: string): Promise<LatestRun> {
  const index = await readIndex(distDir);
  const reftime = index.reftimes[0];
  if (!reftime) throw new Error(`${distDir} publishes no run`);
  const run = index.runs[reftime]!;
  let artefact = index.artefacts?.[run.json];
  if (!artefact && run.dir) {
    const list = JSON.parse(await readFile(path.join(distDir, run.dir, "artefacts.json"), "utf8").catch(() => "{}")) as { artefacts?: Record<string, ArtefactView> };
    artefact = list.artefacts?.[run.json];
  }
  if (artefact && artefact.sha256 === sha256) return { reftime, file: artefact.identity.file, size: artefact.identity.size, sha256 };
  for (const dir of await readdir(path.join(distDir, "runs"))) {
    const file = path.join("runs", dir, "model.json");
    const bytes = await readFile(path.join(distDir, file)).catch(() => undefined);
    if (bytes && createHash("sha256").update(bytes).digest("hex") === sha256) return { reftime, file, size: bytes.length, sha256 };
  }
  throw new Error(`no model.json under ${distDir}/runs has the bytes ashcast answers for the latest run (sha256 ${sha256})`);
}

const APP_ENTRIES = ["bin", "src", "templates", "runs", "package.json", "tsconfig.json"];
/** What the server runs: if none of it differs from HEAD, HEAD's server is the working tree's. */
const SERVING_PATHS = ["bin", "src/server", "src/contract", "src/time", "src/errors.ts", "templates", "package.json", "package-lock.json"];

/** Copies what the application needs to run into `dir` (node_modules linked), from the working tree or git HEAD, and runs it from there. */
async function snapshot(dir: string, from: "worktree" | "head"): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (from === "head") {
    const archive = spawnSync("sh", ["-c", `git -C "$0" archive HEAD ${APP_ENTRIES.join(" ")} | tar -x -C "$1"`, REPO, dir], { encoding: "utf8" });
    if (archive.status !== 0) throw new Error(`git archive HEAD failed: ${archive.stderr}`);
  } else {
    for (const entry of APP_ENTRIES) await cp(path.join(REPO, entry), path.join(dir, entry), { recursive: true });
  }
  await symlink(path.join(REPO, "node_modules"), path.join(dir, "node_modules"));
  APP = dir;
  BIN = path.join(APP, "bin", "ashcast");
}

/** Uncommitted changes (git status lines) under the given paths. */
function uncommitted(paths: readonly string[]): string[] {
  const status = spawnSync("git", ["-C", REPO, "status", "--porcelain", "--", ...paths], { encoding: "utf8" });
  return status.status === 0 ? status.stdout.split("\n").filter(Boolean) : ["(git status failed)"];
}

/** Which code was measured, for the report. */
let codeUsed = "the working tree";

async function buildDist(runsDir: string, distDir: string, logFile: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  await runToEnd("ashcast build", BIN, ["build", "--runs", runsDir, "--out", distDir, "--public-url", "http://127.0.0.1:8080/volcanicashforecast/0.1"], logFile, timeoutMs);
  return (performance.now() - started) / 1000;
}

const INSTANT = /\b(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?Z)\b/g;

/** N run folders: one `ashcast new-run` folder copied with every instant in it shifted by 6 h × i. */
async function generateRuns(dir: string, count: number, logFile: string): Promise<void> {
  const seedDir = path.join(dir, "..", "seed");
  await runToEnd("ashcast new-run", BIN, ["new-run", "seed", "--type", "Exercise", "--runs", seedDir, "--reftime", "2024-05-01T12:00Z"], logFile, 60_000);
  const seed = path.join(seedDir, "seed");
  const files = await readdir(seed);
  const texts = new Map<string, string>();
  for (const file of files) if (/\.(json|kml|xml)$/.test(file)) texts.set(file, await readFile(path.join(seed, file), "utf8"));
  await mkdir(dir, { recursive: true });
  const shift = (text: string, hours: number) =>
    text.replace(INSTANT, (instant) => new Date(Date.parse(instant) + hours * 3_600_000).toISOString().replace(/\.000Z$/, "Z"));
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const hours = 6 * i;
      const reftime = shift("2024-05-01T12:00:00Z", hours);
      const folder = path.join(dir, `${reftime.slice(0, 13).replace(/[-:T]/g, "")}-bench`);
      await mkdir(folder);
      for (const file of files) {
        const text = texts.get(file);
        if (text !== undefined) await writeFile(path.join(folder, file), shift(text, hours));
        else await copyFile(path.join(seed, file), path.join(folder, file));
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

// ---------------------------------------------------------------------------------------------------
// Statistics and formatting

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const ratio = (n: number) => n.toFixed(2);
const mb = (n: number) => n.toFixed(0);
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
// A throughput target counts as met only when both the req/s ratio and the CPU-time ratio meet it.

type Scenario = "200" | "304";
type ServerName = "nginx" | "bare node:http" | "ashcast";

interface Summary {
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  cpuUs: number;
  serverCores: number;
  wrkCores: number;
  otherCores: number;
  bytesPerRequest: number;
  runs: WrkRun[];
}

function summarise(runs: WrkRun[]): Summary {
  return {
    rps: median(runs.map((r) => r.rps)),
    rpsMin: Math.min(...runs.map((r) => r.rps)),
    rpsMax: Math.max(...runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuUs: median(runs.map((r) => r.cpuUs)),
    serverCores: median(runs.map((r) => r.serverCores)),
    wrkCores: median(runs.map((r) => r.wrkCores)),
    otherCores: median(runs.map((r) => r.otherCores)),
    bytesPerRequest: median(runs.map((r) => r.bytesPerRequest)),
    runs,
  };
}

interface ThroughputResult {
  summaries: Map<ServerName, Record<Scenario, Summary>>;
  latest: LatestRun;
  servedMemory: Map<ServerName, { rss: number; hwm: number }>;
  loadBefore: number;
  loadAfter: number;
}

interface RssResult {
  runs: number;
  kmlRuns: number;
  buildSeconds: number;
  indexBytes: number;
  requests: number;
  bodyBytes: number;
  afterStart: { rss: number; hwm: number; anon: number };
  afterWarm: { rss: number; hwm: number; anon: number };
  afterSecondWarm: { rss: number; hwm: number; anon: number };
  afterLoad: { rss: number; hwm: number; anon: number };
  loadSeconds: number;
}

interface ProfileResult {
  scenario: Scenario;
  file: string;
  summary: ProfileSummary;
  rps: number;
}

// ---------------------------------------------------------------------------------------------------
// The phases

interface Servers {
  list: Array<{ name: ServerName; proc: Proc; url: string; etag: string }>;
}

async function startNginx(nginx: string, work: string, distDir: string, latest: LatestRun, log: string): Promise<{ proc: Proc; url: string }> {
  const prefix = path.join(work, "nginx");
  await mkdir(prefix, { recursive: true });
  const port = await freePort();
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username} ${firstLine("id", ["-gn"])};` : "# not root: workers run as the current user";
  const config = (await readFile(TEMPLATE, "utf8"))
    .replaceAll("{{USER}}", user)
    .replaceAll("{{PREFIX}}", prefix)
    .replaceAll("{{PORT}}", String(port))
    .replaceAll("{{ROOT}}", distDir)
    .replaceAll("{{LATEST_FILE}}", latest.file);
  const configFile = path.join(prefix, "nginx.conf");
  await writeFile(configFile, config);
  const proc = launch("nginx", nginx, ["-p", prefix, "-c", configFile, "-e", path.join(prefix, "nginx-error.log")], { cpu: SERVER_CPU, logFile: log });
  const url = `http://127.0.0.1:${port}/latest.json`;
  await waitReady(proc, url);
  return { proc, url };
}

async function startAshcast(distDir: string, log: string, nodeFlags: readonly string[] = []): Promise<{ proc: Proc; url: string; port: number }> {
  const port = await freePort();
  // The throttle stays on the hot path, with a limit the load generator never reaches (one client, one address).
  // bin/ashcast is a shell launcher: Node's own flags (the profiler's) reach it through NODE_OPTIONS.
  const env = { ...process.env, ASHCAST_RATE_PER_SECOND: "1000000", ASHCAST_RATE_BURST: "1000000", ...(nodeFlags.length ? { NODE_OPTIONS: nodeFlags.join(" ") } : {}) };
  const proc = launch("ashcast serve", BIN, ["serve", "--dist", distDir, "--port", String(port), "--host", "127.0.0.1"], { cpu: SERVER_CPU, logFile: log, env });
  const url = `http://127.0.0.1:${port}${PRODUCT}/`;
  await waitReady(proc, url);
  return { proc, url, port };
}

async function startBare(distDir: string, latest: LatestRun, etag: string, modified: string, log: string): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = launch("bare node:http", process.execPath, [BARE, "--file", path.join(distDir, latest.file), "--etag", etag, "--port", String(port), "--modified", modified], { cpu: SERVER_CPU, logFile: log });
  const url = `http://127.0.0.1:${port}/`;
  await waitReady(proc, url);
  return { proc, url };
}

/** Checks that a server answers the expected bytes and a 304 to its own ETag; returns that ETag. */
async function verify(name: string, url: string, latest: LatestRun): Promise<{ etag: string; modified: string }> {
  const reply = await request(url);
  const etag = reply.headers.etag;
  if (reply.status !== 200 || !etag) throw new Error(`${name}: GET ${url} answered ${reply.status} without an ETag`);
  const sha = createHash("sha256").update(reply.body).digest("hex");
  if (sha !== latest.sha256) throw new Error(`${name}: GET ${url} did not answer the latest run's model.json (sha256 ${sha}, expected ${latest.sha256})`);
  const again = await request(url, { "if-none-match": etag });
  if (again.status !== 304 || again.body.length) throw new Error(`${name}: If-None-Match ${etag} answered ${again.status} with ${again.body.length} bytes`);
  return { etag, modified: String(reply.headers["last-modified"] ?? new Date().toUTCString()) };
}

/**
 * Copies the application (unless --no-snapshot) and builds runs/ with it into `work/dist`. Others may be
 * editing the working tree: when the copy does not build (a module half-written), it waits and copies
 * again, for at most --snapshot-wait seconds.
 */
async function prepare(options: Options, work: string, say: (line: string) => void): Promise<void> {
  const distDir = path.join(work, "dist");
  const deadline = Date.now() + options.snapshotWait * 1000;
  let from: "worktree" | "head" = options.code === "head" ? "head" : "worktree";
  for (let attempt = 1; ; attempt++) {
    const app = path.join(work, `app-${attempt}`);
    if (options.snapshot || from === "head") {
      await snapshot(app, from);
      codeUsed = from === "head" ? "git HEAD (git archive)" : "a copy of the working tree";
    }
    const logFile = path.join(work, "logs", `build-small-${attempt}.log`);
    say(`building a dist from ${path.relative(work, path.join(APP, "runs")) || "runs"} into ${distDir}${options.snapshot ? ` (application copied to ${app})` : ""}`);
    try {
      await buildDist(path.join(APP, "runs"), distDir, logFile, 300_000);
      return;
    } catch (error) {
      await rm(distDir, { recursive: true, force: true });
      if (options.snapshot || from === "head") await rm(app, { recursive: true, force: true });
      if (from === "head") throw error;
      const why = /Error[^\n]*/.exec((error as Error).message)?.[0] ?? (error as Error).message.split("\n")[0];
      if (Date.now() >= deadline) {
        const changed = uncommitted(SERVING_PATHS);
        if (options.code !== "auto" || changed.length) {
          throw new Error(`the working tree does not build (${why})${changed.length ? `, and the serving code has uncommitted changes (${changed.join(", ")}), so HEAD would not measure it` : ""}`);
        }
        say(`the working tree still does not build (${why}); the serving code is unchanged from HEAD, so running HEAD's application`);
        from = "head";
        continue;
      }
      say(`the working tree does not build now (${why}); trying again in 30 s`);
      await sleep(30_000);
    }
  }
}

async function throughput(options: Options, nginx: string, work: string, say: (line: string) => void): Promise<ThroughputResult> {
  const distDir = path.join(work, "dist");
  const logs = path.join(work, "logs");
  const servers: Servers = { list: [] };
  const ours = await startAshcast(distDir, path.join(logs, "ashcast.log"));
  const first = await request(ours.url);
  const latest = await latestRun(distDir, createHash("sha256").update(first.body).digest("hex"));
  say(`latest run ${latest.reftime}: ${latest.file} (${latest.size} bytes)`);
  const ourCheck = await verify("ashcast", ours.url, latest);
  const ng = await startNginx(nginx, work, distDir, latest, path.join(logs, "nginx.log"));
  const ngCheck = await verify("nginx", ng.url, latest);
  servers.list.push({ name: "nginx", proc: ng.proc, url: ng.url, etag: ngCheck.etag });
  if (options.bare) {
    const bare = await startBare(distDir, latest, ourCheck.etag, ourCheck.modified, path.join(logs, "bare.log"));
    const bareCheck = await verify("bare node:http", bare.url, latest);
    servers.list.push({ name: "bare node:http", proc: bare.proc, url: bare.url, etag: bareCheck.etag });
  }
  servers.list.push({ name: "ashcast", proc: ours.proc, url: ours.url, etag: ourCheck.etag });
  for (const s of servers.list) say(`${s.name.padEnd(15)} pid ${s.proc.pid}  ${s.url}  ETag ${s.etag}`);

  const loadBefore = loadAverage();
  const wrkLog = path.join(logs, "wrk.log");
  const headersFor = (scenario: Scenario, etag: string) => (scenario === "304" ? [`If-None-Match: ${etag}`] : []);
  if (options.warmup > 0) {
    say(`warm-up: ${options.warmup} s per server and scenario`);
    for (const s of servers.list) for (const scenario of ["200", "304"] as const) await runWrk(s.url, headersFor(scenario, s.etag), options.warmup, options.connections, s.proc.pid, wrkLog);
  }
  const runs = new Map<ServerName, Record<Scenario, WrkRun[]>>(servers.list.map((s) => [s.name, { "200": [], "304": [] }]));
  for (let repeat = 0; repeat < options.repeats; repeat++) {
    for (const scenario of ["200", "304"] as const) {
      // Rotate the order so that no server always runs first or last.
      const order = servers.list.map((_, i) => servers.list[(i + repeat) % servers.list.length]!);
      for (const s of order) {
        const run = await runWrk(s.url, headersFor(scenario, s.etag), options.duration, options.connections, s.proc.pid, wrkLog, options.quietWait);
        if (run.errors || run.badStatus) say(`  warning: ${s.name} ${scenario}: ${run.errors} socket errors, ${run.badStatus} non-2xx/3xx`);
        runs.get(s.name)![scenario].push(run);
        say(
          `repeat ${repeat + 1}/${options.repeats} ${scenario} ${s.name.padEnd(15)} ${int(run.rps).padStart(7)} req/s  p50 ${ms(run.p50)} ms  p99 ${ms(run.p99)} ms  ` +
            `server ${run.cpuUs.toFixed(1)} µs/req  cores: server ${run.serverCores.toFixed(2)} wrk ${run.wrkCores.toFixed(2)} others ${run.otherCores.toFixed(2)} (before ${run.busyBefore.toFixed(2)})`,
        );
      }
    }
  }
  const servedMemory = new Map<ServerName, { rss: number; hwm: number }>();
  for (const s of servers.list) servedMemory.set(s.name, memory(s.proc.pid));
  for (const s of servers.list) await stop(s.proc);
  const summaries = new Map<ServerName, Record<Scenario, Summary>>();
  for (const [name, r] of runs) summaries.set(name, { "200": summarise(r["200"]), "304": summarise(r["304"]) });
  return { summaries, latest, servedMemory, loadBefore, loadAfter: loadAverage() };
}

async function rss(options: Options, work: string, say: (line: string) => void): Promise<RssResult> {
  const logs = path.join(work, "logs");
  const runsDir = path.join(work, "rss", "runs");
  const distDir = path.join(work, "rss", "dist");
  say(`generating ${options.rssRuns} runs in ${runsDir}`);
  await generateRuns(runsDir, options.rssRuns, path.join(logs, "new-run.log"));
  say(`building them (bounded to 20 min)`);
  const buildSeconds = await buildDist(runsDir, distDir, path.join(logs, "build-rss.log"), 20 * 60_000);
  const index = await readIndex(distDir);
  const releaseDir = path.resolve(distDir, await readlink(path.join(distDir, "current")));
  const { runChunks } = await readReleaseIndex(distDir, releaseDir);
  let indexBytes = (await stat(path.join(releaseDir, "index.json"))).size;
  for (const name of runChunks) indexBytes += (await stat(path.join(distDir, "index", name))).size;
  say(`built ${index.reftimes.length} runs in ${buildSeconds.toFixed(0)} s; index.json and its run chunks ${(indexBytes / 1024).toFixed(0)} KB`);
  if (index.reftimes.length !== options.rssRuns) throw new Error(`the build published ${index.reftimes.length} runs, not ${options.rssRuns}; see ${path.join(logs, "build-rss.log")}`);

  const server = await startAshcast(distDir, path.join(logs, "ashcast-rss.log"));
  await sleep(500);
  const afterStart = memory(server.proc.pid);
  say(`ashcast on ${options.rssRuns} runs, after start: VmRSS ${mb(afterStart.rss)} MB, VmHWM ${mb(afterStart.hwm)} MB`);

  const base = `http://127.0.0.1:${server.port}${PRODUCT}`;
  const encodings = ["identity", "gzip", "br"] as const;
  const jobs: Array<{ url: string; encoding: (typeof encodings)[number] }> = [];
  for (const reftime of index.reftimes) for (const encoding of encodings) jobs.push({ url: `${base}/?reftime=${encodeURIComponent(reftime)}`, encoding });
  // The KML resources of the newest runs, by name from /resources (which lists them all, or, with
  // ?reftime=, the shared ones and that run's): the names begin with the run's reftime.
  const kmlReftimes = index.reftimes.slice(0, options.kmlRuns);
  for (const reftime of kmlReftimes) {
    const reply = await request(`${base}/resources?reftime=${encodeURIComponent(reftime)}`);
    if (reply.status !== 200) throw new Error(`GET ${base}/resources?reftime=${reftime} answered ${reply.status}`);
    const listed = JSON.parse(reply.body.toString("utf8")) as string[];
    for (const name of listed) {
      if (name.startsWith(`${reftime}/`) && name.endsWith(".kml")) for (const encoding of encodings) jobs.push({ url: `${base}/resources?name=${encodeURIComponent(name)}`, encoding });
    }
  }
  let bodyBytes = 0;
  const warm = async () => {
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        const job = jobs[i]!;
        const reply = await request(job.url, { "accept-encoding": job.encoding });
        if (reply.status !== 200) throw new Error(`GET ${job.url} (${job.encoding}) answered ${reply.status}`);
        bodyBytes += reply.body.length;
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  };
  await warm();
  const kmlRequests = jobs.filter((j) => j.url.includes("/resources?name=")).length;
  if (kmlReftimes.length && !kmlRequests) throw new Error(`/resources listed no KML of the newest ${kmlReftimes.length} runs`);
  const afterWarm = memory(server.proc.pid);
  say(`after ${jobs.length} requests (${(bodyBytes / 1024 / 1024).toFixed(1)} MB of bodies): VmRSS ${mb(afterWarm.rss)} MB, VmHWM ${mb(afterWarm.hwm)} MB`);
  bodyBytes = 0;
  await warm();
  const afterSecondWarm = memory(server.proc.pid);
  say(`after the same again: VmRSS ${mb(afterSecondWarm.rss)} MB, VmHWM ${mb(afterSecondWarm.hwm)} MB`);
  // Memory under load too: the young generation grows with the request rate.
  const loadSeconds = Math.min(options.duration, 5);
  await runWrk(server.url, [], loadSeconds, options.connections, server.proc.pid, path.join(logs, "wrk.log"));
  const afterLoad = memory(server.proc.pid);
  say(`after ${loadSeconds} s of wrk at c=${options.connections} on /: VmRSS ${mb(afterLoad.rss)} MB, VmHWM ${mb(afterLoad.hwm)} MB`);
  await stop(server.proc);
  return { runs: index.reftimes.length, kmlRuns: kmlReftimes.length, buildSeconds, indexBytes, requests: jobs.length, bodyBytes, afterStart, afterWarm, afterSecondWarm, afterLoad, loadSeconds };
}

async function profilePass(options: Options, latest: LatestRun, work: string, say: (line: string) => void): Promise<ProfileResult[]> {
  const distDir = path.join(work, "dist");
  const outDir = await mkdtemp(path.join(os.tmpdir(), "ashcast-serve-profiles-"));
  const results: ProfileResult[] = [];
  for (const scenario of ["200", "304"] as const) {
    const dir = path.join(outDir, scenario);
    await mkdir(dir);
    const server = await startAshcast(distDir, path.join(work, "logs", `ashcast-profile-${scenario}.log`), ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
    const { etag } = await verify("ashcast (profiled)", server.url, latest);
    const headers = scenario === "304" ? [`If-None-Match: ${etag}`] : [];
    if (options.warmup > 0) await runWrk(server.url, headers, options.warmup, options.connections, server.proc.pid, path.join(work, "logs", "wrk.log"));
    const run = await runWrk(server.url, headers, options.duration, options.connections, server.proc.pid, path.join(work, "logs", "wrk.log"));
    await stop(server.proc, 20_000);
    const files = (await readdir(dir)).filter((f) => f.endsWith(".cpuprofile")).map((f) => path.join(dir, f));
    if (!files.length) throw new Error(`no .cpuprofile was written in ${dir}`);
    const file = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!; // the main thread's (any other thread writes a small one)
    const summary = await summariseFile(file, 15, options.warmup * 1000); // the measured run only, not the warm-up
    say(`profiled ${scenario}: ${int(run.rps)} req/s under the profiler; ${file}`);
    results.push({ scenario, file, summary, rps: run.rps });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------
// Report

interface Machine {
  date: string;
  nproc: number;
  cpu: string;
  kernel: string;
  node: string;
  nginx: string;
  wrk: string;
  pinned: boolean;
  code: string;
}

/** The commit of the working tree and whether the application's files differ from it (read-only git). */
function codeVersion(): string {
  const git = (args: string[]) => spawnSync("git", ["-C", REPO, ...args], { encoding: "utf8" });
  const head = git(["rev-parse", "--short", "HEAD"]);
  if (head.status !== 0) return "not a git checkout";
  const changed = uncommitted(["bin", "src", "templates", "runs", "package.json"]).length;
  const serving = uncommitted(SERVING_PATHS).length;
  return `commit ${head.stdout.trim()}; the working tree had ${changed} uncommitted change(s) in bin/ src/ templates/ runs/, ${serving ? `${serving} of them in the serving code` : "none in the serving code (bin/, src/server, src/contract, src/time, templates/)"}`;
}

function throughputMarkdown(t: ThroughputResult, options: Options): string {
  const nginx = t.summaries.get("nginx")!;
  const rows = [
    "| server | 200 req/s | × nginx | p50 ms | p99 ms | CPU µs/req | 304 req/s | × nginx | p50 ms | p99 ms | CPU µs/req | bytes/resp 200 / 304 |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const [name, s] of t.summaries) {
    const a = s["200"];
    const b = s["304"];
    rows.push(
      `| ${name} | ${int(a.rps)} | ${ratio(a.rps / nginx["200"].rps)} | ${ms(a.p50)} | ${ms(a.p99)} | ${a.cpuUs.toFixed(1)} | ${int(b.rps)} | ${ratio(b.rps / nginx["304"].rps)} | ${ms(b.p50)} | ${ms(b.p99)} | ${b.cpuUs.toFixed(1)} | ${int(a.bytesPerRequest)} / ${int(b.bytesPerRequest)} |`,
    );
  }
  const spread = ["", `Spread of req/s over the ${options.repeats} repeats (min–max), and cores used while loaded (medians: server / wrk / everything else on the machine):`, ""];
  const cores = (x: Summary) => `${x.serverCores.toFixed(2)} / ${x.wrkCores.toFixed(2)} / ${x.otherCores.toFixed(2)}`;
  for (const [name, s] of t.summaries) {
    spread.push(
      `- ${name}: 200 ${int(s["200"].rpsMin)}–${int(s["200"].rpsMax)} (${cores(s["200"])}); ` +
        `304 ${int(s["304"].rpsMin)}–${int(s["304"].rpsMax)} (${cores(s["304"])}); ` +
        `RSS after the load ${mb(t.servedMemory.get(name)!.rss)} MB`,
    );
  }
  return [...rows, ...spread].join("\n");
}

function targetsMarkdown(t: ThroughputResult | undefined, r: RssResult | undefined): { table: string; missed: string[] } {
  const rows = ["| target | measured | |", "|---|---|---|"];
  const missed: string[] = [];
  const check = (label: string, value: string, ok: boolean) => {
    rows.push(`| ${label} | ${value} | ${verdict(ok)} |`);
    if (!ok) missed.push(label);
  };
  if (t) {
    const ours = t.summaries.get("ashcast")!;
    const nginx = t.summaries.get("nginx")!;
    const r200 = ours["200"].rps / nginx["200"].rps;
    const r304 = ours["304"].rps / nginx["304"].rps;
    // The same ratio from CPU time per request: what each would reach with its core to itself. When the
    // two disagree, the machine's other load decided the req/s, and the verdict says so.
    const c200 = nginx["200"].cpuUs / ours["200"].cpuUs;
    const c304 = nginx["304"].cpuUs / ours["304"].cpuUs;
    const both = (byRps: number, byCpu: number, target: number) =>
      `${ratio(byRps)}× (by CPU µs/req ${ratio(byCpu)}×${byRps >= target !== byCpu >= target ? "; the two disagree: the machine's other load decided req/s" : ""})`;
    check(`public JSON 200 ≥ ${TARGETS.ratio200}× nginx req/s`, both(r200, c200, TARGETS.ratio200), r200 >= TARGETS.ratio200 && c200 >= TARGETS.ratio200);
    check(`304 ≥ ${TARGETS.ratio304}× nginx req/s`, both(r304, c304, TARGETS.ratio304), r304 >= TARGETS.ratio304 && c304 >= TARGETS.ratio304);
    check(`p99 ≤ ${TARGETS.p99Ms} ms at c=32, 200`, `${ms(ours["200"].p99)} ms`, ours["200"].p99 <= TARGETS.p99Ms);
    check(`p99 ≤ ${TARGETS.p99Ms} ms at c=32, 304`, `${ms(ours["304"].p99)} ms`, ours["304"].p99 <= TARGETS.p99Ms);
  }
  if (r) {
    const peak = Math.max(r.afterLoad.hwm, r.afterLoad.rss);
    check(`RSS with ${r.runs} runs published ≤ ${TARGETS.rssMb} MB`, `${mb(r.afterSecondWarm.rss)} MB warmed, ${mb(r.afterLoad.rss)} MB after load (peak VmHWM ${mb(r.afterLoad.hwm)} MB)`, peak <= TARGETS.rssMb);
  }
  return { table: rows.join("\n"), missed };
}

function readingMarkdown(t: ThroughputResult | undefined, r: RssResult | undefined, machine: Machine): string {
  const lines: string[] = [];
  if (t) {
    const ours = t.summaries.get("ashcast")!;
    const nginx = t.summaries.get("nginx")!;
    const bare = t.summaries.get("bare node:http");
    const cpu200 = nginx["200"].cpuUs / ours["200"].cpuUs;
    const cpu304 = nginx["304"].cpuUs / ours["304"].cpuUs;
    lines.push(
      `- Throughput ratios: ashcast/nginx ${ratio(ours["200"].rps / nginx["200"].rps)}× for 200 and ${ratio(ours["304"].rps / nginx["304"].rps)}× for 304. ` +
        `By server CPU per request (less sensitive to other load on the machine) nginx/ashcast is ${ratio(cpu200)}× for 200 and ${ratio(cpu304)}× for 304 ` +
        `(${nginx["200"].cpuUs.toFixed(1)} vs ${ours["200"].cpuUs.toFixed(1)} µs, ${nginx["304"].cpuUs.toFixed(1)} vs ${ours["304"].cpuUs.toFixed(1)} µs).`,
    );
    if (bare) {
      lines.push(
        `- Bare \`node:http\` with the same bytes and headers reaches ${ratio(bare["200"].rps / nginx["200"].rps)}× / ${ratio(bare["304"].rps / nginx["304"].rps)}× nginx ` +
          `(${bare["200"].cpuUs.toFixed(1)} / ${bare["304"].cpuUs.toFixed(1)} µs/req): that is what Node itself costs here; ` +
          `ashcast spends ${(ours["200"].cpuUs - bare["200"].cpuUs).toFixed(1)} µs (200) and ${(ours["304"].cpuUs - bare["304"].cpuUs).toFixed(1)} µs (304) per request above it.`,
      );
    }
    for (const scenario of ["200", "304"] as const) {
      const n = nginx[scenario];
      if (n.serverCores < 0.85) {
        lines.push(
          `- ${scenario}: nginx used ${n.serverCores.toFixed(2)} of its core while wrk used ${n.wrkCores.toFixed(2)} of its own: nginx was not the limit ` +
            `(${n.wrkCores >= 0.85 ? "the single wrk thread was" : "other load on the machine was"}), so its req/s is understated and the ${scenario} ratio flatters ashcast; ` +
            `the CPU µs/req comparison is the fairer one there.`,
        );
      }
    }
    const busy = Math.max(...[...t.summaries.values()].flatMap((s) => [s["200"].otherCores, s["304"].otherCores]));
    const noisy = [...t.summaries.values()].some((s) => s["200"].rpsMax > 1.25 * s["200"].rpsMin || s["304"].rpsMax > 1.25 * s["304"].rpsMin);
    if (busy > 0.15 || noisy || t.loadBefore > machine.nproc) {
      lines.push(
        `- The machine was shared while measuring (load average ${t.loadBefore.toFixed(1)} before, ${t.loadAfter.toFixed(1)} after, on ${machine.nproc} cores; ` +
          `up to ${busy.toFixed(2)} cores (median of a run) busy besides the server under test and wrk${noisy ? "; req/s varied by more than 25% between repeats" : ""}). ` +
          `Absolute req/s and p99 are therefore pessimistic; the interleaved ratios and the CPU µs/req are the figures to compare.`,
      );
    }
    if (ours["200"].p99 > TARGETS.p99Ms || ours["304"].p99 > TARGETS.p99Ms) {
      lines.push(
        `- p99 at c=32: ashcast ${ms(ours["200"].p99)} / ${ms(ours["304"].p99)} ms against nginx ${ms(nginx["200"].p99)} / ${ms(nginx["304"].p99)} ms on the same machine at the same time.`,
      );
    }
  }
  if (r) {
    lines.push(
      `- Memory: ${r.runs} runs (index.json and its run chunks ${(r.indexBytes / 1024).toFixed(0)} KB) cost ${mb(r.afterStart.rss)} MB RSS after start; ` +
        `${r.requests} requests (every reftime in identity, gzip and br, and every KML of the newest ${r.kmlRuns} runs, ${(r.bodyBytes / 1024 / 1024).toFixed(1)} MB of bodies, under the ${CACHE_MB} MB body cache) ` +
        `bring it to ${mb(r.afterWarm.rss)} MB, a second pass to ${mb(r.afterSecondWarm.rss)} MB, and ${r.loadSeconds} s of wrk at c=32 to ${mb(r.afterLoad.rss)} MB (peak VmHWM ${mb(r.afterLoad.hwm)} MB). ` +
        `The generated runs are small (the \`new-run\` template), so the body cache holds little here; it is bounded at ${CACHE_MB} MB (src/server/releaseSource.ts), ` +
        `so with full-size runs the worst case is about ${mb(r.afterLoad.rss)} + ${CACHE_MB} MB plus Buffer overhead: ${r.afterLoad.rss + CACHE_MB > TARGETS.rssMb ? `over the ${TARGETS.rssMb} MB target unless that cap is lowered` : `still under the ${TARGETS.rssMb} MB target`}.`,
    );
  }
  return lines.join("\n");
}

function profileMarkdown(profiles: ProfileResult[]): string {
  const parts = [
    "Profiles (`node --cpu-prof` on `./bin/ashcast serve`, same load; the profiler itself slows the server down, so read shares, not rates):",
    "",
  ];
  for (const p of profiles) parts.push(formatSummary(p.summary, `${p.scenario}s, ${int(p.rps)} req/s under the profiler`), "");
  return parts.join("\n");
}

function section(machine: Machine, command: string, options: Options, t: ThroughputResult | undefined, r: RssResult | undefined, profiles: ProfileResult[], notes: string): string {
  const { table, missed } = targetsMarkdown(t, r);
  const out = [
    SECTION,
    "",
    `Measured ${machine.date} with \`${command}\`.`,
    `Code: ${machine.code}.`,
    `Machine: ${machine.nproc} cores (${machine.cpu}), Linux ${machine.kernel}, Node ${machine.node}, ${machine.nginx}, ${machine.wrk}. ` +
      (machine.pinned ? `Each server pinned to core ${SERVER_CPU} and wrk to core ${LOAD_CPU} with taskset.` : "Not pinned (taskset missing or fewer than 2 cores)."),
    "",
  ];
  if (t) {
    out.push(
      `Method: one dist/ built from runs/; ashcast (\`./bin/ashcast serve\`), nginx (one worker, sendfile, \`etag on\`, no access log, bench/serve/nginx.conf.template) ` +
        `${t.summaries.has("bare node:http") ? "and bare \`node:http\` (bench/serve/bare.ts: the same bytes and headers from memory) " : ""}each run as a separate process. ` +
        `wrk 1 thread, ${options.connections} keep-alive connections, ${options.duration} s × ${options.repeats} repeats interleaved (server order rotated), ${options.warmup} s warm-up, medians; ` +
        `every request has \`User-Agent: ${UA}\`; no Accept-Encoding, so all send the identity JSON. ` +
        `200: ashcast \`${PRODUCT}/\`, nginx \`/latest.json\` (the same model.json file, ${t.latest.size} bytes). 304: \`If-None-Match\` with each server's own ETag. ` +
        `CPU µs/req is the server's user+system time from /proc divided by the requests it answered. ` +
        `Before each measured run the bench waits up to ${options.quietWait} s for the machine to be nearly idle (< ${QUIET_CORES} cores busy).`,
      "",
      throughputMarkdown(t, options),
      "",
    );
  }
  out.push(table, "");
  if (r) {
    out.push(
      `Memory of \`./bin/ashcast serve\` with ${r.runs} runs published (built in ${r.buildSeconds.toFixed(0)} s), from /proc/<pid>/status:`,
      "",
      "| when | VmRSS MB | RssAnon MB | VmHWM MB |",
      "|---|---|---|---|",
      `| after start | ${mb(r.afterStart.rss)} | ${mb(r.afterStart.anon)} | ${mb(r.afterStart.hwm)} |`,
      `| after ${r.requests} warming requests | ${mb(r.afterWarm.rss)} | ${mb(r.afterWarm.anon)} | ${mb(r.afterWarm.hwm)} |`,
      `| after the same again | ${mb(r.afterSecondWarm.rss)} | ${mb(r.afterSecondWarm.anon)} | ${mb(r.afterSecondWarm.hwm)} |`,
      `| after ${r.loadSeconds} s of wrk, c=32, on \`/\` | ${mb(r.afterLoad.rss)} | ${mb(r.afterLoad.anon)} | ${mb(r.afterLoad.hwm)} |`,
      "",
    );
  }
  out.push("Reading:", "", readingMarkdown(t, r, machine), missed.length ? `- Missed: ${missed.join("; ")}.` : "- All targets measured here were met.", "");
  if (profiles.length) out.push(profileMarkdown(profiles));
  out.push(NOTES_START, notes.trim(), NOTES_END, "");
  return out.join("\n");
}

/** Replaces this benchmark's section of docs/benchmarks.md, or appends it; other sections are left as they are. */
async function writeDocs(render: (notes: string) => string): Promise<void> {
  const existing = await readFile(DOCS_FILE, "utf8").catch(() => undefined);
  if (existing === undefined) {
    await mkdir(path.dirname(DOCS_FILE), { recursive: true });
    await writeFile(DOCS_FILE, `# Benchmarks\n\n${render("")}`);
    return;
  }
  let start = existing.startsWith(`${SECTION}\n`) ? 0 : -1;
  if (start < 0) {
    const at = existing.indexOf(`\n${SECTION}\n`);
    if (at >= 0) start = at + 1;
  }
  if (start < 0) {
    await writeFile(DOCS_FILE, `${existing.trimEnd()}\n\n${render("")}`);
    return;
  }
  const next = existing.indexOf("\n## ", start + SECTION.length);
  const end = next < 0 ? existing.length : next + 1;
  const old = existing.slice(start, end);
  const notes = old.includes(NOTES_START) && old.includes(NOTES_END) ? old.slice(old.indexOf(NOTES_START) + NOTES_START.length, old.indexOf(NOTES_END)) : "";
  const rendered = render(notes);
  await writeFile(DOCS_FILE, `${existing.slice(0, start)}${rendered}${next < 0 ? "" : "\n"}${existing.slice(end)}`);
}

// ---------------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const nginx = which("nginx");
  const wrk = which("wrk");
  if (!nginx || !wrk) {
    process.stderr.write(`bench/serve needs ${[!nginx && "nginx", !wrk && "wrk"].filter(Boolean).join(" and ")}; install with:\n  ${INSTALL}\n`);
    process.exitCode = 2;
    return;
  }
  wrkPath = wrk;
  const nproc = os.availableParallelism();
  taskset = nproc >= 2 ? which("taskset") : undefined;
  if (!taskset) process.stderr.write("note: taskset missing or fewer than 2 cores: servers and wrk are not pinned\n");
  const machine: Machine = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    nproc,
    cpu: os.cpus()[0]?.model.trim() ?? "?",
    kernel: os.release(),
    node: process.version,
    nginx: firstLine(nginx, ["-v"]).replace(/^nginx version: /, ""),
    wrk: firstLine(wrk, ["-v"]).split(" ").slice(0, 2).join(" "),
    pinned: taskset !== undefined,
    code: "",
  };
  const command = ["npm run bench:serve --", ...process.argv.slice(2)].join(" ");
  const say = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-serve-"));
  await mkdir(path.join(work, "logs"));

  say(`working in ${work}; ${machine.nproc} cores, node ${machine.node}, ${machine.nginx}, ${machine.wrk}, load average ${loadAverage().toFixed(1)}`);

  const deadline = setTimeout(() => {
    process.stderr.write(`bench/serve: stopped after ${options.maxMinutes} min (--max-minutes); logs in ${work}/logs\n`);
    killAllNow();
    process.exit(3);
  }, options.maxMinutes * 60_000);
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`bench/serve: ${signal}, stopping; logs in ${work}/logs\n`);
    killAllNow();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", killAllNow);

  let ok = false;
  try {
    await prepare(options, work, say);
    machine.code = `${codeVersion()}; ran ${codeUsed}`;
    const t = options.throughput ? await throughput(options, nginx, work, say) : undefined;
    const profiles = options.profile && options.throughput ? await profilePass(options, t!.latest, work, say) : [];
    const r = options.rss ? await rss(options, work, say) : undefined;
    const body = section(machine, command, options, t, r, profiles, "");
    process.stdout.write(`\n${body}\n`);
    if (options.docs) {
      await writeDocs((notes) => section(machine, command, options, t, r, profiles, notes));
      say(`wrote the section "${SECTION}" of ${path.relative(REPO, DOCS_FILE)}`);
    }
    ok = true;
  } finally {
    clearTimeout(deadline);
    await Promise.all([...procs].map((p) => stop(p, 3000)));
    agent.destroy();
    if (ok && !options.keep) await rm(work, { recursive: true, force: true });
    else say(`kept ${work} (logs in ${work}/logs)`);
  }
}

await main();
