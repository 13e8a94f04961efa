/**
 * Which varnishd settings bring a cache hit's cost near nginx's on one core. Varnish is started as README.md's
 * "Deploying behind a CDN" block starts it, once per candidate with that candidate's extra arguments (a later
 * `-p` wins over the block's; `vsl_mask=default` undoes its log mask), all at once on core 0 and idle but for
 * the one measured; nginx serves the same bytes on core 0; wrk runs on core 1. Each candidate's run comes right
 * after an nginx run (the pair gives its ratio), candidates in a rotated order each round; before every run the
 * script waits while other work keeps the machine busy (sampled from /proc/stat while everything here is idle),
 * and it records the load and the other work during each run. Prints, per candidate, the medians of: server µs
 * of CPU per hit, req/s, the pair's ratio to nginx.
 * Usage: npm run bench:cdn:params -- [--duration S] [--repeats N] [--only "name;name"] [--quiet-cores C]
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { BIN, PRODUCT, REPO, UA, median, procs, sleep, startNginx, startOrigin, startVarnish, stop, wrk, type Wrk } from "./common.ts";

interface Options { duration: number; repeats: number; only?: string[]; quietCores: number }
function parseOptions(argv: readonly string[]): Options {
  const o: Options = { duration: 5, repeats: 3, quietCores: 0.3 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--only") o.only = (argv[++i] ?? "").split(";");
    else if (flag === "--duration" || flag === "--repeats" || flag === "--quiet-cores") {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} needs a positive number`);
      if (flag === "--duration") o.duration = value;
      else if (flag === "--repeats") o.repeats = value;
      else o.quietCores = value;
    } else throw new Error(`unknown option ${flag}; usage: npm run bench:cdn:params -- [--duration S] [--repeats N] [--only "name;name"] [--quiet-cores C]`);
  }
  return o;
}

/** Every VSL tag this varnishd knows (`varnishd -x vsl`), to measure the log's whole cost. */
const allVslTags = (): string[] => [...spawnSync("varnishd", ["-x", "vsl"], { encoding: "utf8" }).stdout.matchAll(/^([A-Z][A-Za-z0-9_]+)\n-+$/gm)].map((m) => m[1]!);

/** The records one cache hit writes to the shared-memory log (`varnishlog -g raw` of a hit). */
const HIT_RECORDS = ["SessOpen", "SessClose", "Begin", "End", "Link", "Timestamp", "VCL_use", "ReqStart", "ReqMethod", "ReqURL", "ReqProtocol", "ReqHeader", "ReqUnset", "VCL_call", "VCL_return", "Hit", "RespProtocol", "RespStatus", "RespReason", "RespHeader", "RespUnset", "Filters", "ReqAcct"];
const mask = (tags: readonly string[]) => ["-p", `vsl_mask=${tags.map((t) => `-${t}`).join(",")}`];
/** Varnish's own log, as before README.md masked a hit's records; a candidate's `-p vsl_mask=-X` adds to what is masked. */
const DEFAULT_LOG = ["-p", "vsl_mask=default"];

/**
 * The least VCL that reaches the origins: no rules of ours, every request looked up, the built-in subroutines after.
 * (The empty test of ashcast_purgers is there because varnishd refuses a VCL with an acl it never uses.)
 */
const BARE_VCL = `vcl 4.1;
import directors;
probe ashcast_health { .request = "GET /volcanicashforecast/0.1/healthz HTTP/1.1" "Host: ashcast" "User-Agent: varnish-health-probe" "X-Forwarded-Proto: https" "Connection: close"; .interval = 1s; }
sub vcl_init { new origins = directors.round_robin(); call ashcast_add_origins; }
include "ashcast-origin.vcl";
sub vcl_recv { set req.backend_hint = origins.backend(); if (client.ip ~ ashcast_purgers) {} return (hash); }
`;

/**
 * Each candidate is README.md's block (which masks a hit's records but Begin, End and Link) plus its arguments.
 * `tmpfs`: varnishd's working directory (-n: the shared-memory log and counters) on /dev/shm instead of beside the VCL.
 */
interface Candidate { name: string; params?: string[]; vcl?: (text: string) => string; tmpfs?: boolean }
const CANDIDATES: Candidate[] = [
  { name: "readme" },
  // The log: Varnish's default, then parts of a hit's records masked, then everything.
  { name: "vsl_mask=default", params: DEFAULT_LOG },
  { name: "vsl_mask=default,-Timestamp", params: [...DEFAULT_LOG, "-p", "vsl_mask=-Timestamp"] },
  { name: "vsl_mask=default,-headers", params: [...DEFAULT_LOG, "-p", "vsl_mask=-ReqHeader,-RespHeader,-ReqUnset,-RespUnset"] },
  { name: "vsl_mask=all hit records", params: mask(HIT_RECORDS) },
  { name: "vsl_mask=all", params: mask(allVslTags()) },
  { name: "vsl_mask=default, -n on tmpfs", params: DEFAULT_LOG, tmpfs: true },
  { name: "-n on tmpfs", tmpfs: true },
  // Threads, sessions, workspaces, storage, the waiter, the log's sizes.
  { name: "thread_pools=1", params: ["-p", "thread_pools=1"] },
  { name: "thread_pool_min=20 max=100", params: ["-p", "thread_pool_min=20", "-p", "thread_pool_max=100"] },
  { name: "timeout_linger=1", params: ["-p", "timeout_linger=1"] },
  { name: "timeout_linger=0", params: ["-p", "timeout_linger=0"] },
  { name: "vsl_reclen=64", params: ["-p", "vsl_reclen=64"] },
  { name: "vsl_space=8M", params: ["-p", "vsl_space=8M"] },
  { name: "vsl_buffer=64k", params: ["-p", "vsl_buffer=64k", "-p", "workspace_client=112k"] },
  { name: "-W epoll", params: ["-W", "epoll"] },
  { name: "workspace_client=256k", params: ["-p", "workspace_client=256k"] },
  { name: "http_resp_hdr_len=4k", params: ["-p", "http_resp_hdr_len=4k"] },
  { name: "-s malloc 64m", params: ["-s", "malloc,64m"] },
  // Fewer bytes per answer: Varnish's own headers (nothing documented or tested reads them).
  { name: "no Via/X-Varnish", vcl: (text) => text.replace(/\n    unset resp\.http\.xkey;\n/, "\n    unset resp.http.xkey;\n    unset resp.http.Via;\n    unset resp.http.X-Varnish;\n") },
  // varnishd's floor: none of our VCL (every request looked up as Varnish's built-in rules would) and no log at all.
  { name: "floor: bare VCL, no log", params: mask(allVslTags()), vcl: () => BARE_VCL },
];

/** The machine's CPU counters (/proc/stat's first line). */
const cpuTimes = () => readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
/** Cores kept busy by everything on the machine between two readings of `cpuTimes`. */
function busyBetween(a: number[], b: number[]): number {
  const d = b.map((v, i) => v - a[i]!);
  const total = d.reduce((x, y) => x + y, 0);
  return ((total - d[3]! - d[4]!) / total) * os.cpus().length;
}
/** Cores kept busy over one second by everything on the machine (this script's servers are idle then). */
async function busyCores(): Promise<number> {
  const a = cpuTimes();
  await sleep(1000);
  return busyBetween(a, cpuTimes());
}
/** wrk as common.ts runs it, plus the cores the rest of the machine kept busy meanwhile (`others`). */
async function measured(url: string, headers: Record<string, string>, seconds: number, pid: number): Promise<Wrk & { others: number }> {
  const before = cpuTimes();
  const w = await wrk(url, headers, seconds, pid, 1);
  return { ...w, others: Math.max(0, busyBetween(before, cpuTimes()) - w.serverCores - w.wrkCores) };
}

/** Waits (up to 20 min) while other work keeps more than `limit` cores busy; returns what it saw last. */
async function waitQuiet(limit: number, say: (line: string) => void): Promise<number> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const busy = await busyCores();
    if (busy <= limit || Date.now() > deadline) return busy;
    const top = spawnSync("ps", ["-eo", "pcpu,args", "--sort=-pcpu"], { encoding: "utf8" }).stdout.split("\n").slice(1, 4).map((l) => l.trim().slice(0, 110));
    say(`  waiting: ${busy.toFixed(2)} cores busy elsewhere (load ${os.loadavg()[0]!.toFixed(1)}): ${top.join(" | ")}`);
    await sleep(15_000);
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const candidates = options.only ? CANDIDATES.filter((c) => options.only!.includes(c.name)) : CANDIDATES;
  if (options.only && candidates.length !== options.only.length) throw new Error(`--only names candidates of: ${CANDIDATES.map((c) => c.name).join("; ")}`);
  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-varnish-params-"));
  process.once("exit", () => procs.forEach((p) => { try { process.kill(-p.pid!, "SIGKILL"); } catch { /* gone */ } }));
  const shmDirs: string[] = [];
  try {
    const runsDir = path.join(work, "runs");
    const distDir = path.join(work, "dist");
    await mkdir(runsDir, { recursive: true });
    for (let i = 0; i < 5; i++) {
      const made = spawnSync(BIN, ["new-run", `run-${i}`, "--runs", runsDir, "--reftime", `2024-05-01T0${i}:00:00Z`, "--type", "Exercise"], { cwd: REPO, encoding: "utf8" });
      if (made.status !== 0) throw new Error(made.stderr);
    }
    const built = spawnSync(BIN, ["build", "--runs", runsDir, "--out", distDir], { cwd: REPO, encoding: "utf8" });
    if (built.status !== 0) throw new Error(built.stderr);

    const origin = await startOrigin(distDir, 1, 0);
    const varnishes = new Map<string, Awaited<ReturnType<typeof startVarnish>>>();
    for (const c of candidates) {
      let vcl: string | undefined;
      if (c.vcl) {
        vcl = path.join(work, `variant-${varnishes.size}.vcl`);
        await writeFile(vcl, c.vcl(await readFile(path.join(REPO, "deploy/varnish/ashcast.vcl"), "utf8")));
      }
      const workdir = c.tmpfs ? await mkdtemp("/dev/shm/ashcast-bench-varnish-") : undefined;
      if (workdir) {
        shmDirs.push(workdir);
        await chmod(workdir, 0o755);
      }
      varnishes.set(c.name, await startVarnish(work, origin.port, { name: String(varnishes.size), ...(c.params ? { params: c.params } : {}), ...(vcl ? { vcl } : {}), ...(workdir ? { workdir } : {}) }));
    }
    const hitUrl = (url: string) => `${url}${PRODUCT}/.json`;
    const hitHeaders = { "X-Forwarded-Proto": "https" };
    const headerBytes = new Map<string, number>();
    for (const [name, v] of varnishes) {
      const curl = () => spawnSync("curl", ["-s", "-D", "-", "-o", "/dev/null", "-H", `User-Agent: ${UA}`, "-H", "X-Forwarded-Proto: https", hitUrl(v.url)], { encoding: "utf8" }).stdout;
      curl(); // the identity variant wrk asks for, stored
      const res = curl();
      // A hit: our VCL's X-Cache, or Varnish's own two transaction ids (the bare VCL).
      if (!/^x-cache: HIT/im.test(res) && !/^x-varnish: \d+ \d+/im.test(res)) throw new Error(`${name}: the second request is not a hit:\n${res}`);
      headerBytes.set(name, Buffer.byteLength(res));
    }
    const latestFile = path.join(work, "static", "latest.json");
    await mkdir(path.dirname(latestFile), { recursive: true });
    await writeFile(latestFile, Buffer.from(await (await fetch(hitUrl(varnishes.values().next().value!.url), { headers: { "user-agent": UA, "x-forwarded-proto": "https" } })).arrayBuffer()));
    const nginx = await startNginx(work, latestFile, 1, 0);
    const nginxHeaderBytes = Buffer.byteLength(spawnSync("curl", ["-s", "-D", "-", "-o", "/dev/null", nginx.url], { encoding: "utf8" }).stdout);
    say(`${candidates.length} varnishd on core 0, nginx on core 0, wrk on core 1; ${options.repeats} rounds × ${options.duration} s per run; hit header bytes: nginx ${nginxHeaderBytes}, ${[...headerBytes].map(([n, b]) => `${n} ${b}`).join(", ")}`);

    interface Run { v: Wrk & { others: number }; n: Wrk & { others: number }; busy: number; load: number }
    const runs = new Map<string, Run[]>(candidates.map((c) => [c.name, []]));
    for (let r = 0; r < options.repeats; r++) {
      const order = candidates.map((_, i) => candidates[(i + r) % candidates.length]!);
      for (const c of order) {
        const busy = await waitQuiet(options.quietCores, say);
        const load = os.loadavg()[0]!;
        const n = await measured(nginx.url, {}, options.duration, nginx.proc.pid!);
        const varnish = varnishes.get(c.name)!;
        const v = await measured(hitUrl(varnish.url), hitHeaders, options.duration, varnish.proc.pid!);
        runs.get(c.name)!.push({ v, n, busy, load });
        say(`round ${r + 1} ${c.name.padEnd(28)} ${v.cpuUs.toFixed(1).padStart(5)} µs/hit (nginx ${n.cpuUs.toFixed(1)})  ${v.rps.toFixed(0).padStart(6)} req/s (nginx ${n.rps.toFixed(0)})  ${(v.rps / n.rps).toFixed(2)}×  others before ${busy.toFixed(2)}, during ${n.others.toFixed(2)}/${v.others.toFixed(2)} cores, load ${load.toFixed(1)}`);
      }
    }

    const fmt = (x: number, d = 0) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
    // A pair counts when neither run shared the machine with more than --quiet-cores of other work.
    say(`\nmedians of the pairs where other work kept ≤ ${options.quietCores} cores busy during both runs:\n`);
    say(`| candidate (added to README.md's varnishd line) | µs CPU/hit | nginx µs CPU/req | hit CPU × nginx | req/s | × nginx (paired) | ratios of the pairs counted | pairs counted | other work during (cores, max) | load before |`);
    say(`|---|---|---|---|---|---|---|---|---|---|`);
    for (const c of candidates) {
      const all = runs.get(c.name)!;
      const clean = all.filter((x) => x.v.others <= options.quietCores && x.n.others <= options.quietCores);
      const list = clean.length > 0 ? clean : all;
      const m = (f: (x: Run) => number) => median(list.map(f));
      say(`| ${c.name} | ${fmt(m((x) => x.v.cpuUs), 1)} | ${fmt(m((x) => x.n.cpuUs), 1)} | ${fmt(m((x) => x.v.cpuUs / x.n.cpuUs), 2)} | ${fmt(m((x) => x.v.rps))} | ${fmt(m((x) => x.v.rps / x.n.rps), 2)} | ${list.map((x) => fmt(x.v.rps / x.n.rps, 2)).join(", ")} | ${clean.length} of ${all.length} | ${fmt(Math.max(...list.map((x) => Math.max(x.v.others, x.n.others))), 2)} | ${fmt(Math.min(...list.map((x) => x.load)), 1)}–${fmt(Math.max(...list.map((x) => x.load)), 1)} |`);
    }
  } finally {
    await Promise.all([...procs].map(stop));
    await rm(work, { recursive: true, force: true });
    for (const dir of shmDirs) await rm(dir, { recursive: true, force: true });
  }
}

await main();
