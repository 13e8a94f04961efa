/**
 * Benchmark: the traffic guard (issue 6). Two questions, each answered by ratios measured in one run:
 *
 * 1. Abuse. One abusive client (one User-Agent, one address; wrk with several keep-alive connections,
 *    as fast as it can) against the public data route while well-behaved clients (each its own
 *    User-Agent, a steady rate below the limit, keep-alive) keep fetching the same route. Their p99
 *    latency with the abuser is compared with their p99 on the idle service (target: at most 2×), and
 *    the abuser's answered requests with its limit (rate × duration + burst).
 * 2. Cost. The same server with and without the guard (bench/limits/server.ts, `--no-guard`), the guard
 *    on with a limit the load never reaches, wrk at c=32 on the hot route: req/s and server CPU µs per
 *    request. With `--before COMMIT`, also `ashcast serve` of that commit (git archive into the temp dir,
 *    this tree's node_modules) beside this tree's `ashcast serve`, both with the same high limit: what
 *    the whole change costs per request, measured in the same run.
 *
 *   npm run bench:limits -- [--duration 15] [--repeats 3] [--clients 16] [--client-rate 20]
 *                               [--rate 50] [--burst 100] [--abuser-connections 8] [--cost-duration 10]
 *                               [--quiet-wait 20] [--no-cost] [--no-docs] [--before COMMIT]
 *
 * The server is pinned to core 0 (taskset); wrk and the well-behaved clients (this process) to core 1,
 * wrk at nice 19 so the clients' own timing is not delayed by the load generator beside them. Only
 * 127.0.0.1 is loaded; every phase is bounded; every process started is stopped at the end. Figures are
 * printed and written to the section "## Limits: an abusive client among well-behaved ones" of
 * docs/benchmarks.md (unless --no-docs); text between `<!-- limits-notes:start -->` and
 * `<!-- limits-notes:end -->` in that section is kept.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BENCHMARKS_DOC, writeDocsSection } from "../docsSection.ts";
import { freePort } from "../freePort.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SERVER = path.join(REPO, "bench", "limits", "server.ts");
const SECTION = "## Limits: an abusive client among well-behaved ones";
const NOTES_START = "<!-- limits-notes:start -->";
const NOTES_END = "<!-- limits-notes:end -->";

/** The hand-written notes of the section, kept when the figures are written again. */
function keptNotes(): string {
  const text = readFileSync(BENCHMARKS_DOC, "utf8");
  const start = text.indexOf(NOTES_START, text.indexOf(SECTION));
  const end = text.indexOf(NOTES_END, start);
  return start >= 0 && end > start ? text.slice(start, end + NOTES_END.length) : `${NOTES_START}\n${NOTES_END}`;
}
const PRODUCT = "/volcanicashforecast/0.1";
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const CLK_TCK = 100;

interface Options {
  duration: number;
  repeats: number;
  clients: number;
  clientRate: number;
  rate: number;
  burst: number;
  abuserConnections: number;
  costDuration: number;
  quietWait: number;
  cost: boolean;
  docs: boolean;
  /** A commit whose `ashcast serve` is measured beside this tree's (the cost of the whole change, not only the guard). */
  before: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { duration: 15, repeats: 3, clients: 16, clientRate: 20, rate: 50, burst: 100, abuserConnections: 8, costDuration: 10, quietWait: 20, cost: true, docs: true, before: undefined };
  const names: Record<string, keyof Options> = {
    "--duration": "duration",
    "--repeats": "repeats",
    "--clients": "clients",
    "--client-rate": "clientRate",
    "--rate": "rate",
    "--burst": "burst",
    "--abuser-connections": "abuserConnections",
    "--cost-duration": "costDuration",
    "--quiet-wait": "quietWait",
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--no-cost") options.cost = false;
    else if (flag === "--no-docs") options.docs = false;
    else if (flag === "--before") {
      options.before = argv[++i];
      if (!options.before || spawnSync("git", ["rev-parse", "--verify", `${options.before}^{commit}`], { cwd: REPO }).status !== 0) throw new Error("--before takes a commit of this repository");
    }
    else if (names[flag]) {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} takes a positive number`);
      (options as unknown as Record<string, number>)[names[flag]] = value;
    } else throw new Error(`unknown argument ${flag}`);
  }
  if (options.clientRate >= options.rate) throw new Error("--client-rate must stay below --rate: the well-behaved clients must never be throttled");
  return options;
}

// ---------------------------------------------------------------------------------------------------
// Processes

const children = new Set<ChildProcess>();
const taskset = spawnSync("which", ["taskset"], { encoding: "utf8" }).stdout.trim() || undefined;
const pinned = (cpu: number, command: string, args: string[]): [string, string[]] => (taskset ? [taskset, ["-c", String(cpu), command, ...args]] : [command, args]);

function start(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(command, args, { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  try {
    process.kill(-child.pid!, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}

async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stop));
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)));


interface Server {
  child: ChildProcess;
  pid: number;
  url: string;
}

/** The server, pinned to core 0; its pid is node's own (taskset execs it). */
async function startServerProcess(distDir: string, guard: boolean, env: Record<string, string>, holdMs?: number): Promise<Server> {
  const port = await freePort();
  const [command, args] = pinned(SERVER_CPU, process.execPath, [SERVER, "--dist", distDir, "--port", String(port), ...(guard ? [] : ["--no-guard"]), ...(holdMs !== undefined ? ["--hold-ms", String(holdMs)] : [])]);
  const child = start(command, args, { ...process.env, ...env });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes("ready ")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
    await sleep(50);
  }
  return { child, pid: child.pid!, url: `http://127.0.0.1:${port}${PRODUCT}/` };
}

/** `ashcast serve` of an application directory (this tree, or an archived commit), pinned to core 0. */
async function startCliServer(appDir: string, distDir: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const [command, args] = pinned(SERVER_CPU, path.join(appDir, "bin", "ashcast"), ["serve", "--dist", distDir, "--port", String(port), "--host", "127.0.0.1"]);
  const child = start(command, args, { ...process.env, ...env });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes("serving http://")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`ashcast serve (${appDir}) did not start:\n${output}`);
    await sleep(50);
  }
  return { child, pid: child.pid!, url: `http://127.0.0.1:${port}${PRODUCT}/` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function machineBusySeconds(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return (fields.reduce((a, b) => a + b, 0) - idle) / CLK_TCK;
}

async function waitQuiet(maxSeconds: number): Promise<number> {
  const deadline = Date.now() + maxSeconds * 1000;
  for (;;) {
    const before = machineBusySeconds();
    await sleep(1000);
    const busy = machineBusySeconds() - before;
    if (busy < 0.25 || Date.now() >= deadline) return busy;
  }
}

// ---------------------------------------------------------------------------------------------------
// Load

interface WrkResult {
  rps: number;
  /** How long wrk says it ran. */
  seconds: number;
  requests: number;
  refused: number;
  p99Ms: number;
}

function parseWrk(output: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const total = /(\d+) requests in ([\d.]+)(ms|s|m),/.exec(output);
  const requests = Number(total?.[1]);
  const seconds = total ? Number(total[2]) * ({ ms: 0.001, s: 1, m: 60 } as Record<string, number>)[total[3]!]! : Number.NaN;
  const refused = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(output);
  const p99Ms = p99 ? Number(p99[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[p99[2]!]! : Number.NaN;
  if (!Number.isFinite(rps) || !Number.isFinite(requests)) throw new Error(`could not read wrk's output:\n${output}`);
  return { rps, seconds, requests, refused, p99Ms };
}

async function wrk(url: string, agent: string, seconds: number, connections: number, nice: boolean): Promise<WrkResult> {
  const wrkArgs = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "2s", "--latency", "-H", `User-Agent: ${agent}`, url];
  const [command, args] = pinned(LOAD_CPU, nice ? "nice" : "wrk", nice ? ["-n", "19", "wrk", ...wrkArgs] : wrkArgs);
  const child = start(command, args);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await once(child, "exit");
  return parseWrk(output);
}

interface AbuseRun {
  label: string;
  server: Server;
  idle: ClientsResult[];
  loaded: ClientsResult[];
  abusers: WrkResult[];
  quiet: number[];
}

interface ClientsResult {
  latenciesMs: number[];
  ok: number;
  other: number;
}

/** `count` clients, each its own User-Agent and keep-alive connection, each sending one request every 1/rate s. */
async function wellBehaved(url: string, count: number, rate: number, seconds: number): Promise<ClientsResult> {
  const result: ClientsResult = { latenciesMs: [], ok: 0, other: 0 };
  const until = performance.now() + seconds * 1000;
  const interval = 1000 / rate;
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const headers = { "user-agent": `good-client-${index}/1 ops@example.org` };
      // Spread the clients over the interval, so their requests do not all arrive together.
      let next = performance.now() + (interval * index) / count;
      while (next < until) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        const started = performance.now();
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.get(url, { agent, headers }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          });
          req.on("error", reject);
        });
        result.latenciesMs.push(performance.now() - started);
        if (status === 200) result.ok++;
        else result.other++;
        next += interval;
      }
      agent.destroy();
    }),
  );
  return result;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const median = (values: readonly number[]) => percentile(values, 50);
const fmt = (n: number, digits = 2) => n.toFixed(digits);
const int = (n: number) => Math.round(n).toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (spawnSync("which", ["wrk"]).status !== 0) throw new Error("wrk is needed: apt-get update && apt-get install -y wrk");
  // This process sends the well-behaved requests: on the load core, beside wrk.
  if (taskset) spawnSync(taskset, ["-a", "-pc", String(LOAD_CPU), String(process.pid)], { stdio: "ignore" });
  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-limits-"));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const distDir = path.join(work, "dist");
    say(`building ${path.join(REPO, "runs")} into ${distDir}`);
    const built = spawnSync(path.join(REPO, "bin", "ashcast"), ["build", "--runs", path.join(REPO, "runs"), "--out", distDir], { cwd: REPO, encoding: "utf8" });
    if (built.status !== 0 && built.status !== 1) throw new Error(`build failed:\n${built.stdout}${built.stderr}`);

    // 1. Abuse: refusals held (the default) and answered at once, each on its own server, repeats interleaved.
    const limitEnv = { ASHCAST_RATE_PER_SECOND: String(options.rate), ASHCAST_RATE_BURST: String(options.burst) };
    const modes: AbuseRun[] = [];
    for (const holdMs of [undefined, 0]) {
      const server = await startServerProcess(distDir, true, limitEnv, holdMs);
      modes.push({ label: holdMs === 0 ? "refusals answered at once (holdRefusalsMs 0)" : "refusals held (default, holdRefusalsMs 1000)", server, idle: [], loaded: [], abusers: [], quiet: [] });
      await wellBehaved(server.url, options.clients, options.clientRate, 2); // warm-up
    }
    for (let repeat = 0; repeat < options.repeats; repeat++) {
      for (const mode of repeat % 2 === 0 ? modes : [...modes].reverse()) {
        mode.quiet.push(await waitQuiet(options.quietWait));
        say(`repeat ${repeat + 1}, ${mode.label}: idle service, ${options.clients} clients × ${options.clientRate} req/s for ${options.duration} s`);
        mode.idle.push(await wellBehaved(mode.server.url, options.clients, options.clientRate, options.duration));
        say(`repeat ${repeat + 1}, ${mode.label}: the same, with one abuser at full speed (${options.abuserConnections} connections)`);
        const [clients, abuser] = await Promise.all([
          wellBehaved(mode.server.url, options.clients, options.clientRate, options.duration),
          wrk(mode.server.url, "abuser/1 greedy@example.org", options.duration, options.abuserConnections, true),
        ]);
        mode.loaded.push(clients);
        mode.abusers.push(abuser);
      }
    }
    for (const mode of modes) await stop(mode.server.child);

    // 2. Cost on the hot path: the guard on and off (same code), and with --before the whole change (two CLIs).
    const cost: CostRun[] = [];
    if (options.cost) {
      const high = { ASHCAST_RATE_PER_SECOND: "1000000", ASHCAST_RATE_BURST: "1000000" };
      const variants: Array<{ label: string; start: () => Promise<Server> }> = [
        { label: "guard off", start: () => startServerProcess(distDir, false, high) },
        { label: "guard on", start: () => startServerProcess(distDir, true, high) },
      ];
      if (options.before) {
        const beforeDir = path.join(work, "before");
        await mkdir(beforeDir);
        const archive = spawnSync("sh", ["-c", `git archive ${options.before} | tar -x -C ${JSON.stringify(beforeDir)}`], { cwd: REPO });
        if (archive.status !== 0) throw new Error(`git archive ${options.before} failed: ${archive.stderr}`);
        await symlink(path.join(REPO, "node_modules"), path.join(beforeDir, "node_modules"));
        variants.push({ label: `ashcast serve at ${options.before}`, start: () => startCliServer(beforeDir, distDir, high) }, { label: "ashcast serve, this tree", start: () => startCliServer(REPO, distDir, high) });
      }
      for (let repeat = 0; repeat < options.repeats; repeat++) {
        for (const variant of repeat % 2 === 0 ? variants : [...variants].reverse()) {
          const s = await variant.start();
          await wrk(s.url, "bench/1 ops@example.org", 2, 32, false); // warm-up
          await waitQuiet(options.quietWait);
          const before = cpuSeconds(s.pid);
          const result = await wrk(s.url, "bench/1 ops@example.org", options.costDuration, 32, false);
          const cpu = cpuSeconds(s.pid) - before;
          if (result.refused > 0) throw new Error(`the high limit refused ${result.refused} requests: the cost run would measure 429s`);
          cost.push({ label: variant.label, rps: result.rps, cpuUs: (cpu * 1e6) / result.requests, p99Ms: result.p99Ms });
          say(`cost, ${variant.label}: ${int(result.rps)} req/s, ${fmt((cpu * 1e6) / result.requests, 1)} µs CPU/req`);
          await stop(s.child);
        }
      }
    }

    const section = report(options, modes, cost);
    say(section);
    if (options.docs) writeDocsSection(SECTION, `${section}\n${keptNotes()}\n`);
  } finally {
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

interface CostRun {
  label: string;
  rps: number;
  cpuUs: number;
  p99Ms: number;
}

function report(options: Options, modes: AbuseRun[], cost: CostRun[]): string {
  // What the limit allows over the time wrk really ran (it runs a little over --duration).
  const allowedFor = (a: WrkResult) => Math.ceil(options.rate * a.seconds) + options.burst;
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8" }).stdout.trim();
  const dirty = spawnSync("git", ["status", "--porcelain", "src", "bench"], { cwd: REPO, encoding: "utf8" }).stdout.trim().split("\n").filter(Boolean).length;
  const lines = [
    SECTION,
    "",
    `Measured ${new Date().toISOString().slice(0, 19)}Z with \`npm run bench:limits --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}\`; commit ${commit}${dirty ? ` with ${dirty} uncommitted change(s) in src/ or bench/` : ""}.`,
    `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}; server pinned to core ${SERVER_CPU}, wrk (nice 19) and the well-behaved clients to core ${LOAD_CPU}${taskset ? "" : " (no taskset: not pinned)"}. Cores busy before each repeat (after waiting up to ${options.quietWait} s for quiet): ${modes.flatMap((m) => m.quiet).map((q) => fmt(q)).join(", ")}.`,
    "",
    `**Abuse.** The data class limited to ${options.rate} req/s with bursts of ${options.burst} per client (\`ASHCAST_RATE_PER_SECOND\`, \`ASHCAST_RATE_BURST\`). ${options.clients} well-behaved clients (each its own User-Agent, one keep-alive connection, ${options.clientRate} req/s: ${options.clients * options.clientRate} req/s in all) fetch \`/\` (the latest run's JSON) for ${options.duration} s on the idle service, then ${options.duration} s again while one abuser (one User-Agent, ${options.abuserConnections} keep-alive connections, wrk at full speed) hammers the same route; ${options.repeats} repeats, on two servers: refusals held (the default) and answered at once, interleaved. Latency is measured by the clients per request (send to last byte).`,
    "",
    "| refusals | repeat | idle p50 ms | idle p99 ms | with abuser p50 ms | with abuser p99 ms | p99 ratio | abuser req/s | abuser answered 200 | allowed (rate × wrk's s + burst) | well-behaved non-200 |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const verdicts: string[] = [];
  for (const mode of modes) {
    const idleP99 = mode.idle.map((x) => percentile(x.latenciesMs, 99));
    const loadedP99 = mode.loaded.map((x) => percentile(x.latenciesMs, 99));
    const ratios = loadedP99.map((value, i) => value / idleP99[i]!);
    const pooled = percentile(mode.loaded.flatMap((x) => x.latenciesMs), 99) / percentile(mode.idle.flatMap((x) => x.latenciesMs), 99);
    const answered = mode.abusers.map((a) => a.requests - a.refused);
    const notOk = [...mode.idle, ...mode.loaded].reduce((sum, x) => sum + x.other, 0);
    mode.idle.forEach((idle, i) =>
      lines.push(
        `| ${mode.label.split(" (")[0]} | ${i + 1} | ${fmt(percentile(idle.latenciesMs, 50))} | ${fmt(idleP99[i]!)} | ${fmt(percentile(mode.loaded[i]!.latenciesMs, 50))} | ${fmt(loadedP99[i]!)} | ${fmt(ratios[i]!)} | ${int(mode.abusers[i]!.rps)} | ${int(answered[i]!)} | ${int(allowedFor(mode.abusers[i]!))} | ${idle.other + mode.loaded[i]!.other} |`,
      ),
    );
    const held = answered.every((n, i) => n <= allowedFor(mode.abusers[i]!));
    verdicts.push(
      `- ${mode.label}: well-behaved p99 with the abuser / idle **${fmt(median(ratios))}×** (median of the repeats; ${fmt(pooled)}× over all samples pooled) — target ≤ 2×: ${median(ratios) <= 2 ? "met" : "**not met**"}. The abuser sent ${int(median(mode.abusers.map((a) => a.rps)))} req/s (median) and was answered 200 ${answered.map(int).join(", ")} times against at most ${mode.abusers.map((a) => int(allowedFor(a))).join(", ")} allowed: ${held ? "held to its limit" : "**over its limit**"}. Well-behaved clients got ${notOk} answers other than 200.`,
    );
  }
  lines.push("", ...verdicts);
  if (cost.length) {
    const labels = [...new Set(cost.map((c) => c.label))];
    const of = (label: string) => cost.filter((c) => c.label === label);
    const med = (label: string, key: "rps" | "cpuUs" | "p99Ms") => median(of(label).map((c) => c[key]));
    lines.push(
      "",
      `**Cost on the hot path.** The same server (bench/limits/server.ts) with the guard on (limit 1,000,000 req/s: every request classified, keyed and counted, none refused) and off${options.before ? `, and \`ashcast serve\` at ${options.before} beside this tree's (the same high limit)` : ""}; wrk 1 thread, 32 keep-alive connections, ${options.costDuration} s on \`/\` with a User-Agent, ${options.repeats} repeats interleaved (order alternating), medians.`,
      "",
      "| server | req/s | p99 ms | server CPU µs/req | req/s of the repeats |",
      "|---|---|---|---|---|",
      ...labels.map((label) => `| ${label} | ${int(med(label, "rps"))} | ${fmt(med(label, "p99Ms"))} | ${fmt(med(label, "cpuUs"), 1)} | ${of(label).map((c) => int(c.rps)).join(", ")} |`),
      "",
      `- The guard: ${fmt(med("guard on", "rps") / med("guard off", "rps"), 3)}× the req/s, ${fmt(med("guard on", "cpuUs") - med("guard off", "cpuUs"), 1)} µs of server CPU per request.`,
    );
    if (options.before) {
      const a = `ashcast serve at ${options.before}`;
      const b = "ashcast serve, this tree";
      lines.push(`- The whole change (\`ashcast serve\`, this tree vs ${options.before}): ${fmt(med(b, "rps") / med(a, "rps"), 3)}× the req/s, ${fmt(med(b, "cpuUs") - med(a, "cpuUs"), 1)} µs of server CPU per request.`);
    }
  }
  lines.push("", "The machine is shared (2 cores, other work running): absolute figures vary between runs; the ratios measured within one run are the figures to compare.", "");
  return lines.join("\n");
}

await main();
