/**
 * The pieces bench/cdn/run.ts and bench/cdn/varnishParams.ts share: processes started in their own group
 * (pinned with taskset when asked), ashcast serve, Varnish as README.md's "Deploying behind a CDN" block
 * starts it, nginx serving one file, and wrk with the server's CPU time per request.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../freePort.ts";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(REPO, "bin/ashcast");
export const PRODUCT = "/volcanicashforecast/0.1";
export const UA = "ashcast-bench/1 ops@example.org";
const CLK_TCK = 100;

// ---------------------------------------------------------------------------------------------------
// Processes: each in its own group, all killed on the way out

export const procs = new Set<ChildProcess>();
export const hasTaskset = spawnSync("taskset", ["-V"]).error === undefined;
export function launch(command: string, args: readonly string[], options: { cpu?: number; env?: NodeJS.ProcessEnv; capture?: boolean } = {}): ChildProcess & { output: () => string } {
  const [cmd, argv] = hasTaskset && options.cpu !== undefined ? ["taskset", ["-c", String(options.cpu), command, ...args]] : [command, [...args]];
  const child = spawn(cmd, argv, { cwd: REPO, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  procs.add(child);
  child.once("exit", () => procs.delete(child));
  return Object.assign(child, { output: () => output });
}
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(-child.pid!, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** CPU seconds of a process and its descendants. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    let total = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) total += cpuSeconds(Number(child));
    }
    return total;
  } catch {
    return 0;
  }
}
export async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers: { "user-agent": UA, ...headers } });
  return { status: res.status, body: await res.text() };
}
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

// ---------------------------------------------------------------------------------------------------
// Servers

export async function startOrigin(distDir: string, workers: number, cpu: number | undefined): Promise<{ proc: ChildProcess & { output: () => string }; port: number }> {
  const port = await freePort();
  // The throttle stays on, with a limit one load generator never reaches; Varnish is the trusted proxy.
  const env = { ASHCAST_RATE_PER_SECOND: "1000000", ASHCAST_RATE_BURST: "1000000" };
  const proc = launch(BIN, ["serve", "--dist", distDir, "--port", String(port), "--trusted-proxies", "127.0.0.1", "--workers", String(workers)], { env, ...(cpu === undefined ? {} : { cpu }) });
  await until("ashcast serve", async () => (await get(`http://127.0.0.1:${port}${PRODUCT}/.json`, { "x-forwarded-proto": "https" })).status === 200);
  return { proc, port };
}

/** The first `sh` block of README.md's section "Deploying behind a CDN": how Varnish is started. */
export async function readmeVarnishBlock(): Promise<string> {
  const readme = await readFile(path.join(REPO, "README.md"), "utf8");
  return /```sh\n([\s\S]*?)```/.exec(readme.split(/^## /m).find((s) => s.startsWith("Deploying behind a CDN"))!)![1]!;
}

/**
 * README.md's "Deploying behind a CDN" block, run as it is, on core 0. Only for comparing settings
 * (bench/cdn/varnishParams.ts): `params` are appended to its varnishd command line (a later `-p` wins),
 * `vcl` is a file copied in place of deploy/varnish/ashcast.vcl, `workdir` replaces its `-n` directory, `name` keeps
 * several apart in `work`.
 */
export async function startVarnish(work: string, originPort: number, variant: { name?: string; params?: readonly string[]; vcl?: string; workdir?: string } = {}): Promise<{ proc: ChildProcess & { output: () => string }; url: string; dir: string }> {
  let block = (await readmeVarnishBlock()).trimEnd();
  if (variant.workdir) block = block.replace('-n "$VARNISH_DIR/work"', `-n '${variant.workdir}'`);
  if (variant.params?.length) block += ` ${variant.params.map((p) => `'${p}'`).join(" ")}`;
  if (variant.vcl) block = block.replace("cp deploy/varnish/ashcast.vcl ", `cp '${variant.vcl}' `).replace(/\n(exec varnishd)/, `\nmv "$VARNISH_DIR/${path.basename(variant.vcl)}" "$VARNISH_DIR/ashcast.vcl"\n$1`);
  const dir = path.join(work, variant.name ? `varnish-${variant.name}` : "varnish");
  await mkdir(dir, { recursive: true });
  chmodSync(work, 0o755);
  chmodSync(dir, 0o755);
  const port = await freePort();
  const tlsPort = await freePort();
  const proc = launch("bash", ["-euc", block], { cpu: 0, env: { ORIGIN_PORT: String(originPort), VARNISH_ADDRESS: `127.0.0.1:${port}`, VARNISH_TLS_ADDRESS: `127.0.0.1:${tlsPort}`, VARNISH_DIR: dir, GRACE: "60" } });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await get(`${url}${PRODUCT}/.json`, { "x-forwarded-proto": "https" }).then((r) => r.status === 200, () => false))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`varnishd did not start: ${proc.output()}`);
    await sleep(50);
  }
  return { proc, url, dir };
}

export async function startNginx(work: string, file: string, workers: number, cpu: number | undefined): Promise<{ proc: ChildProcess; url: string }> {
  const prefix = path.join(work, `nginx-${workers}`);
  await mkdir(prefix, { recursive: true });
  const port = await freePort();
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username} ${spawnSync("id", ["-gn"], { encoding: "utf8" }).stdout.trim()};` : "";
  const config = (await readFile(path.join(REPO, "bench/serve/nginx.conf.template"), "utf8"))
    .replaceAll("{{USER}}", user)
    .replace("worker_processes 1;", `worker_processes ${workers};`)
    .replaceAll("{{PREFIX}}", prefix)
    .replaceAll("{{PORT}}", String(port))
    .replaceAll("{{ROOT}}", path.dirname(file))
    .replaceAll("{{LATEST_FILE}}", path.basename(file));
  await writeFile(path.join(prefix, "nginx.conf"), config);
  const proc = launch("nginx", ["-p", prefix, "-c", path.join(prefix, "nginx.conf"), "-e", path.join(prefix, "error.log")], cpu === undefined ? {} : { cpu });
  const url = `http://127.0.0.1:${port}/latest.json`;
  await until("nginx", async () => (await get(url)).status === 200);
  return { proc, url };
}

/** `cpuUs`: the server's CPU time per request, what contention on a shared machine disturbs least. */
export interface Wrk { rps: number; p99: number; serverCores: number; wrkCores: number; cpuUs: number }
export async function wrk(url: string, headers: Record<string, string>, seconds: number, serverPid: number, cpu: number | undefined): Promise<Wrk> {
  const args = ["-t1", "-c32", `-d${seconds}s`, "--latency", "-H", `User-Agent: ${UA}`, ...Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]), url];
  const serverBefore = cpuSeconds(serverPid);
  const started = performance.now();
  const proc = launch("wrk", args, cpu === undefined ? {} : { cpu });
  let wrkCpu = 0;
  const sampler = setInterval(() => (wrkCpu = Math.max(wrkCpu, cpuSeconds(proc.pid!))), 200);
  await new Promise((resolve) => proc.once("exit", resolve));
  clearInterval(sampler);
  const elapsed = (performance.now() - started) / 1000;
  const out = proc.output();
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p99m = /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(out);
  if (!Number.isFinite(rps) || /Non-2xx/.test(out)) throw new Error(`wrk against ${url} failed:\n${out}`);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const serverCpu = cpuSeconds(serverPid) - serverBefore;
  return { rps, p99: p99m ? Number(p99m[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[p99m[2]!]! : NaN, serverCores: serverCpu / elapsed, wrkCores: wrkCpu / seconds, cpuUs: (serverCpu / requests) * 1e6 };
}

/** Median of `repeats` runs, taken in turn with the other servers' runs (same conditions). */
export async function compare(names: string[], run: (name: string) => Promise<Wrk>, repeats: number): Promise<Map<string, Wrk>> {
  const runs = new Map<string, Wrk[]>(names.map((n) => [n, []]));
  for (let r = 0; r < repeats; r++) for (const name of names) runs.get(name)!.push(await run(name));
  return new Map(names.map((n) => {
    const list = runs.get(n)!;
    const of = (key: keyof Wrk) => median(list.map((w) => w[key]));
    return [n, { rps: of("rps"), p99: of("p99"), serverCores: of("serverCores"), wrkCores: of("wrkCores"), cpuUs: of("cpuUs") }];
  }));
}

export function varnishCounters(dir: string): { client: number; backend: number } {
  const out = spawnSync("varnishstat", ["-n", path.join(dir, "work"), "-1", "-f", "MAIN.client_req", "-f", "MAIN.backend_req"], { encoding: "utf8" }).stdout;
  const value = (name: string) => Number(new RegExp(`^${name.replace(".", "\\.")}\\s+(\\d+)`, "m").exec(out)?.[1]);
  return { client: value("MAIN.client_req"), backend: value("MAIN.backend_req") };
}
