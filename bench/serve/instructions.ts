/**
 * Benchmark: instructions per request on the serving hot path, Node 20 + tsx (a checkout given by --before)
 * against this tree on the pinned Node 24, counted by valgrind's callgrind. On a shared machine req/s and
 * CPU time swing by tens of per cent with the neighbours' load; an instruction count does not (it counts
 * work, not time), so it tells whether a change of runtime made the hot path do more.
 *
 *   npm run bench:serve:instructions -- --before DIR [--warm 1500] [--requests 4000] [--no-docs]
 *
 * Four servers, one after the other, each under `valgrind --tool=callgrind` on the same dist/ (built from
 * runs/ by this tree): bare node:http (bench/serve/bare.ts with its types stripped, the same JavaScript on
 * both Nodes) on Node 20 and on Node 24, then `ashcast serve` of --before (Node 20 + tsx) and of this tree.
 * Each gets --warm requests (JIT warm-up), its counters zeroed, then --requests 200s of `/` and --requests
 * 304s (If-None-Match with its own ETag), each counted apart. The load comes from another process
 * (bench/serve/fixedLoad.ts: that many keep-alive requests, 8 at a time), which callgrind does not count.
 * Needs valgrind (on every machine of this kind) and a --before checkout with its npm ci done.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { stripTypeScriptTypes } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { writeDocsSection } from "../docsSection.ts";
import { freePort } from "../freePort.ts";

const AFTER = fileURLToPath(new URL("../..", import.meta.url));
const PRODUCT = "/volcanicashforecast/0.1";
const SECTION = "## Serving: instructions per request, Node 20 against Node 24";
const USAGE = "usage: npm run bench:serve:instructions -- --before DIR [--warm N] [--requests N] [--no-docs]";
const SYSTEM_NODE = "/usr/bin/node";

interface Options {
  before: string;
  warm: number;
  requests: number;
  docs: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { before: "", warm: 1500, requests: 4000, docs: true };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const count = () => {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a whole number ≥ 1; ${USAGE}`);
      return n;
    };
    if (flag === "--before") options.before = path.resolve(argv[++i] ?? "");
    else if (flag === "--warm") options.warm = count();
    else if (flag === "--requests") options.requests = count();
    else if (flag === "--no-docs") options.docs = false;
    else throw new Error(`unknown option ${flag}; ${USAGE}`);
  }
  if (!options.before || !existsSync(path.join(options.before, "node_modules", "tsx"))) {
    throw new Error(`--before DIR must be a checkout on Node 20 + tsx with its npm ci done (git worktree add DIR COMMIT; cd DIR; npm ci); ${USAGE}`);
  }
  if (spawnSync("valgrind", ["--version"]).status !== 0) throw new Error("valgrind is needed: apt-get install -y valgrind");
  return options;
}


function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; etag: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { "user-agent": "bench/1 ops@example.org", ...headers } }, (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode ?? 0, etag: response.headers.etag }));
      })
      .on("error", reject);
  });
}

/** `count` keep-alive requests, 8 at a time, from a separate process; throws unless all got `status`. */
function load(url: string, count: number, status: number, etag?: string): void {
  const args = [path.join(AFTER, "bench", "serve", "fixedLoad.ts"), url, String(count), String(status), ...(etag ? [etag] : [])];
  const result = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 30 * 60_000 });
  if (result.status !== 0) throw new Error(`load on ${url}: ${result.stderr || result.stdout}`);
}

function callgrindControl(pid: number, action: string): void {
  const result = spawnSync("callgrind_control", [action, String(pid)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`callgrind_control ${action} ${pid}: ${result.stderr}`);
}

/**
 * The instructions of dump `part` of `pid`: of its main thread (where requests are answered, and the
 * garbage collector's main share), and of all its threads (V8's compiler and GC helpers, libuv's pool), whose
 * work depends on when the JIT decides to compile and so varies more between runs.
 */
function dumpedInstructions(dir: string, pid: number, part: number): { main: number; all: number } {
  const files = readdirSync(dir).filter((name) => name.startsWith(`callgrind.${pid}.${part}-`));
  if (!files.length) throw new Error(`no callgrind dump ${part} of ${pid} in ${dir}`);
  let main = 0;
  let all = 0;
  for (const file of files) {
    const totals = /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(path.join(dir, file), "utf8"));
    if (!totals) throw new Error(`${file}: no totals line`);
    all += Number(totals[1]);
    if (file.endsWith("-01")) main = Number(totals[1]);
  }
  return { main, all };
}

interface Counted {
  name: string;
  runtime: string;
  per200: { main: number; all: number };
  per304: { main: number; all: number };
}

async function measure(name: string, command: string, args: readonly string[], cwd: string, urlPath: string, options: Options, work: string): Promise<Counted> {
  const port = await freePort();
  const outDir = await mkdtemp(path.join(work, "callgrind-"));
  const env = { ...process.env, ASHCAST_RATE_PER_SECOND: "1000000", ASHCAST_RATE_BURST: "1000000" };
  const server: ChildProcess = spawn(
    "valgrind",
    ["--tool=callgrind", "--separate-threads=yes", "--trace-children=no", `--callgrind-out-file=${path.join(outDir, "callgrind.%p")}`, command, ...args.map((a) => a.replace("PORT", String(port)))],
    { cwd, env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  server.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  try {
    const url = `http://127.0.0.1:${port}${urlPath}`;
    for (let tries = 0; ; tries++) {
      const reply = await get(url).catch(() => undefined);
      if (reply?.status === 200) break;
      if (server.exitCode !== null || tries > 600) throw new Error(`${name} did not start under valgrind: ${stderr}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const etag = (await get(url)).etag;
    if (!etag) throw new Error(`${name}: ${url} has no ETag`);
    const runtime = (spawnSync(command, ["--version"], { encoding: "utf8" }).stdout.trim() || "?").replace(/^v/, "Node.js v");
    load(url, options.warm, 200);
    load(url, options.warm, 304, etag);
    callgrindControl(server.pid!, "--zero");
    load(url, options.requests, 200);
    callgrindControl(server.pid!, "--dump");
    load(url, options.requests, 304, etag);
    callgrindControl(server.pid!, "--dump");
    const perRequest = (part: number) => {
      const counted = dumpedInstructions(outDir, server.pid!, part);
      return { main: counted.main / options.requests, all: counted.all / options.requests };
    };
    const per200 = perRequest(1);
    const per304 = perRequest(2);
    const n = (x: number) => Math.round(x).toLocaleString("en-US");
    console.log(`${name} (${runtime}): instructions per 200 ${n(per200.main)} on the main thread (${n(per200.all)} in all threads), per 304 ${n(per304.main)} (${n(per304.all)})`);
    return { name, runtime, per200, per304 };
  } finally {
    server.kill("SIGKILL");
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-instructions-"));
  try {
    const dist = path.join(work, "dist");
    const built = spawnSync(path.join(AFTER, "bin", "ashcast"), ["build", "--runs", path.join(AFTER, "runs"), "--out", dist], { encoding: "utf8" });
    if (built.status !== 0) throw new Error(`ashcast build: ${built.stderr.slice(-1000)}`);
    const release = path.resolve(dist, await readlink(path.join(dist, "current")));
    const index = await readReleaseIndex(dist, release);
    const latest = index.runs[index.reftimes[0] ?? ""];
    if (!latest) throw new Error(`${release} publishes no run`);
    const modelJson = path.join(dist, latest.dir, "model.json");
    // The same JavaScript for both Nodes: Node 20 cannot strip types, so strip them here once.
    const bare = path.join(work, "bare.mjs");
    await writeFile(bare, stripTypeScriptTypes(readFileSync(path.join(AFTER, "bench", "serve", "bare.ts"), "utf8")));
    const bareArgs = [bare, "--file", modelJson, "--etag", '"bench"', "--port", "PORT"];
    const serveArgs = ["serve", "--dist", dist, "--port", "PORT", "--host", "127.0.0.1"];
    const results: Counted[] = [];
    for (const node of [SYSTEM_NODE, process.execPath]) results.push(await measure("bare node:http", node, bareArgs, work, "/", options, work));
    results.push(await measure("ashcast before", SYSTEM_NODE, [path.join(options.before, "bin", "ashcast"), ...serveArgs], options.before, `${PRODUCT}/`, options, work));
    results.push(await measure("ashcast after", process.execPath, [path.join(AFTER, "src", "cli", "ashcast.ts"), ...serveArgs], AFTER, `${PRODUCT}/`, options, work));
    const section = report(options, results);
    console.log(`\n${section}`);
    if (options.docs) writeDocsSection(SECTION, section);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function report(options: Options, results: readonly Counted[]): string {
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  const [bare20, bare24, before, after] = results as [Counted, Counted, Counted, Counted];
  const change = (a: number, b: number) => `${b >= a ? "+" : "−"}${(Math.abs(b / a - 1) * 100).toFixed(0)} %`;
  return [
    SECTION,
    "",
    `Written by \`npm run bench:serve:instructions -- --before DIR\` (bench/serve/instructions.ts) on ${new Date().toISOString().slice(0, 10)}: instructions counted by callgrind in the`,
    `server process, per request, after ${n(options.warm)} warm-up requests of each kind, over ${n(options.requests)} requests of each (8 keep-alive connections).`,
    "An instruction count does not depend on the neighbours' load, so this is the before/after that holds on a shared machine; it does not",
    "count cache misses or system-call time (the kernel's share), which req/s in the section above does. The main thread answers the",
    "requests; the other threads (V8's compiler and garbage-collection helpers) work when the JIT decides to, so their share varies between runs.",
    "The main thread's count varies too, since what the JIT has compiled by the time counting starts depends on timing: repeats of the same",
    "server differ by up to about 15 %, so smaller differences are not findings.",
    "",
    "| server | 200: main thread | 200: all threads | 304: main thread | 304: all threads |",
    "|---|---|---|---|---|",
    ...results.map((r) => `| ${r.name} on ${r.runtime} | ${n(r.per200.main)} | ${n(r.per200.all)} | ${n(r.per304.main)} | ${n(r.per304.all)} |`),
    "",
    `Main thread, Node 24 against Node 20 on the same JavaScript (bare node:http): ${change(bare20.per200.main, bare24.per200.main)} for 200s, ${change(bare20.per304.main, bare24.per304.main)} for 304s.`,
    `Main thread, ashcast after (Node 24, type stripping) against before (Node 20, tsx): ${change(before.per200.main, after.per200.main)} for 200s, ${change(before.per304.main, after.per304.main)} for 304s.`,
    `ashcast's own work above bare node:http on the same Node (main thread, 200 / 304): ${n(before.per200.main - bare20.per200.main)} / ${n(before.per304.main - bare20.per304.main)} instructions before, ${n(after.per200.main - bare24.per200.main)} / ${n(after.per304.main - bare24.per304.main)} after.`,
    "",
  ].join("\n");
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
