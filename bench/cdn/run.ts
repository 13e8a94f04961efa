/**
 * Behind a CDN: a real Varnish (deploy/varnish/ashcast.vcl, started by README.md's block) in front of
 * `ashcast serve`, next to nginx serving the same bytes, with wrk. Measures, in one run on 127.0.0.1:
 *   1. cache hits through Varnish against nginx serving the same file (servers on core 0, wrk on core 1);
 *   2. publish → new `/` through Varnish (from the switch of dist/current), and origin requests per
 *      10,000 client requests under load while `ashcast build --purge` publishes every 10 s;
 *   3. `ashcast serve --workers 1|2` next to nginx with 1 and 2 workers, unpinned, wrk's own CPU stated.
 * Writes the section "Behind a CDN" of docs/benchmarks.md. Needs varnish, varnish-modules, nginx-light
 * and wrk (scripts/setup-test-env.sh installs the first two; `apt-get install -y nginx-light wrk`).
 * Usage: npm run bench:cdn -- [--duration S] [--repeats N] [--publishes N] [--load-seconds S] [--no-docs]
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeDocsSection } from "../docsSection.ts";
import { BIN, PRODUCT, REPO, UA, compare, get, hasTaskset, launch, median, procs, sleep, startNginx, startOrigin, startVarnish, stop, until, varnishCounters, wrk, type Wrk } from "./common.ts";

const HEADING = "## Behind a CDN: Varnish hits, purge latency, --workers";

interface Options { duration: number; repeats: number; publishes: number; loadSeconds: number; docs: boolean }
function parseOptions(argv: readonly string[]): Options {
  const o: Options = { duration: 5, repeats: 3, publishes: 10, loadSeconds: 30, docs: true };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--no-docs") o.docs = false;
    else if (["--duration", "--repeats", "--publishes", "--load-seconds"].includes(flag)) {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} needs a positive number`);
      const key = ({ "--duration": "duration", "--repeats": "repeats", "--publishes": "publishes", "--load-seconds": "loadSeconds" } as const)[flag as "--duration"];
      o[key] = value;
    } else throw new Error(`unknown option ${flag}; usage: npm run bench:cdn -- [--duration S] [--repeats N] [--publishes N] [--load-seconds S] [--no-docs]`);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  for (const tool of ["varnishd", "nginx", "wrk"]) if (spawnSync("which", [tool]).status !== 0) throw new Error(`${tool} is missing: bash scripts/setup-test-env.sh && apt-get install -y nginx-light wrk`);
  const work = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-cdn-"));
  process.once("exit", () => procs.forEach((p) => { try { process.kill(-p.pid!, "SIGKILL"); } catch { /* gone */ } }));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const runsDir = path.join(work, "runs");
  const distDir = path.join(work, "dist");
  let reftimeHour = 0;
  const addRun = () => {
    const reftime = new Date(Date.UTC(2024, 4, 1, reftimeHour++)).toISOString().replace(".000Z", "Z");
    const made = spawnSync(BIN, ["new-run", `run-${reftimeHour}`, "--runs", runsDir, "--reftime", reftime, "--type", "Exercise"], { cwd: REPO, encoding: "utf8" });
    if (made.status !== 0) throw new Error(made.stderr);
    return reftime;
  };
  const build = (purge?: string) => launch(BIN, ["build", "--runs", runsDir, "--out", distDir, ...(purge ? ["--purge", purge] : [])]);
  try {
    await mkdir(runsDir, { recursive: true });
    for (let i = 0; i < 5; i++) addRun();
    await new Promise((resolve) => build().once("exit", resolve));

    // 1. Hits: Varnish (and the origin behind it) on core 0, nginx on core 0, wrk on core 1.
    const origin = await startOrigin(distDir, 1, 0);
    const varnish = await startVarnish(work, origin.port);
    const latestFile = path.join(work, "static", "latest.json");
    await mkdir(path.dirname(latestFile), { recursive: true });
    await writeFile(latestFile, Buffer.from(await (await fetch(`${varnish.url}${PRODUCT}/.json`, { headers: { "user-agent": UA, "x-forwarded-proto": "https" } })).arrayBuffer()));
    const nginx1 = await startNginx(work, latestFile, 1, 0);
    say(`hits: ${options.repeats} × ${options.duration} s each, varnish and nginx in turn`);
    const hits = await compare(["varnish", "nginx"], (name) => (name === "varnish" ? wrk(`${varnish.url}${PRODUCT}/.json`, { "X-Forwarded-Proto": "https" }, options.duration, varnish.proc.pid!, 1) : wrk(nginx1.url, {}, options.duration, nginx1.proc.pid!, 1)), options.repeats);
    await stop(nginx1.proc);

    // 2. Publish → new / through Varnish, from the moment dist/current switches; and each of two more
    // `ashcast serve` processes on the same dist/ (as on a shared volume) switching to the new release.
    const others = [await startOrigin(distDir, 1, undefined), await startOrigin(distDir, 1, undefined)];
    const servedRelease = async (port: number) => /release: (\S+)/.exec((await get(`http://127.0.0.1:${port}${PRODUCT}/healthz`, { "x-forwarded-proto": "https" })).body)?.[1];
    const switches: number[] = [];
    const latencies: number[] = [];
    for (let i = 0; i < options.publishes; i++) {
      const reftime = addRun();
      const before = await readlink(path.join(distDir, "current"));
      const publisher = build(`${varnish.url}/`);
      let switched = 0;
      await until("the switch", async () => (await readlink(path.join(distDir, "current"))) !== before && (switched = performance.now()) > 0, 60_000, 2);
      const release = path.basename(await readlink(path.join(distDir, "current")));
      const serversSwitched = [origin.port, ...others.map((o) => o.port)].map((port) => until(`server ${port} to switch`, async () => (await servedRelease(port)) === release, 30_000, 5).then(() => switches.push(performance.now() - switched)));
      await until("the new run through Varnish", async () => JSON.parse((await get(`${varnish.url}${PRODUCT}/`, { "x-forwarded-proto": "https" })).body).meta.reftime === reftime, 30_000, 5);
      latencies.push(performance.now() - switched);
      await Promise.all(serversSwitched);
      await new Promise((resolve) => publisher.exitCode === null ? publisher.once("exit", resolve) : resolve(null));
    }
    say(`publish → new /: median ${median(latencies).toFixed(0)} ms`);
    for (const o of others) await stop(o.proc);

    // Hit ratio under load while publishing every 10 s.
    const counters = varnishCounters(varnish.dir);
    const load = wrk(`${varnish.url}${PRODUCT}/`, { "X-Forwarded-Proto": "https", "Accept-Encoding": "gzip" }, options.loadSeconds, varnish.proc.pid!, 1);
    let publishedUnderLoad = 0;
    for (let t = 5; t < options.loadSeconds; t += 10) {
      await sleep(t === 5 ? 5000 : 10_000);
      addRun();
      build(`${varnish.url}/`);
      publishedUnderLoad++;
    }
    const underLoad = await load;
    const after = varnishCounters(varnish.dir);
    const clientRequests = after.client - counters.client;
    const originRequests = after.backend - counters.backend;
    await stop(varnish.proc);
    await stop(origin.proc);

    // 3. Workers, unpinned: both cores for the server, and wrk competing with it (its CPU stated).
    const servers = new Map<string, { pid: number; url: string; headers: Record<string, string>; proc: ChildProcess }>();
    for (const workers of [1, 2]) {
      const o = await startOrigin(distDir, workers, undefined);
      servers.set(`ashcast --workers ${workers}`, { pid: o.proc.pid!, url: `http://127.0.0.1:${o.port}${PRODUCT}/.json`, headers: { "X-Forwarded-Proto": "https" }, proc: o.proc });
      const n = await startNginx(work, latestFile, workers, undefined);
      servers.set(`nginx ${workers} worker${workers > 1 ? "s" : ""}`, { pid: n.proc.pid!, url: n.url, headers: {}, proc: n.proc });
    }
    say("workers: unpinned");
    const scaling = await compare([...servers.keys()], (name) => { const s = servers.get(name)!; return wrk(s.url, s.headers, options.duration, s.pid, undefined); }, options.repeats);
    for (const s of servers.values()) await stop(s.proc);

    const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
    const v = hits.get("varnish")!;
    const ng = hits.get("nginx")!;
    const row = (name: string, w: Wrk, ref?: Wrk) => `| ${name} | ${fmt(w.rps)} | ${ref ? fmt(w.rps / ref.rps, 2) : ""} | ${fmt(w.p99, 2)} | ${fmt(w.cpuUs)} | ${fmt(w.serverCores, 2)} | ${fmt(w.wrkCores, 2)} |`;
    const busy = os.loadavg()[0]!;
    const section = `${HEADING}

\`npm run bench:cdn\` (bench/cdn/run.ts), ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), shared with other work; wrk 1 thread, 32 connections, keep-alive, medians of ${options.repeats} × ${options.duration} s, taken in turn. The same ${fmt(readFileSync(latestFile).length)}-byte AshModel JSON (identity) from each server. Varnish runs deploy/varnish/ashcast.vcl as README.md starts it.

**Cache hits** (Varnish and nginx ${hasTaskset ? "pinned to core 0, wrk to core 1" : "unpinned: taskset missing"}):

| server | req/s | × nginx | p99 ms | server µs CPU/req | server cores | wrk cores |
|---|---|---|---|---|---|---|
${row("Varnish hits (ashcast behind it idle)", v, ng)}
${row("nginx, static file, 1 worker", ng, ng)}

Target ≥ 0.8× nginx: ${v.rps / ng.rps >= 0.8 ? "met" : "not met"} (${fmt(v.rps / ng.rps, 2)}×; CPU per hit ${fmt(v.cpuUs / ng.cpuUs, 2)}× nginx's). Load average at the end of the run: ${fmt(busy, 1)} on ${os.cpus().length} cores (other work on the machine competes with every server here alike).

**Publish → new \`/\` through Varnish**, from the switch of \`dist/current\` to the first answer through Varnish naming the new run (\`ashcast build --purge\`, ${options.publishes} publishes): median ${fmt(median(latencies))} ms, max ${fmt(Math.max(...latencies))} ms (target ≤ 1 s median). Without the purge a cached \`/\` stays up to its s-maxage (600 s). Three \`ashcast serve\` processes on the same dist/ (the origin and two more) each served the new release ${fmt(median(switches))} ms after the switch (median of ${switches.length}; max ${fmt(Math.max(...switches))} ms; target ≤ 1 s).

**Origin requests during publishes**: wrk on \`/\` (gzip) through Varnish for ${options.loadSeconds} s at ${fmt(underLoad.rps)} req/s while \`ashcast build --purge\` published a new run every 10 s (${publishedUnderLoad} publishes): ${fmt(clientRequests)} client requests, ${fmt(originRequests)} reached the origin (Varnish's MAIN.client_req and MAIN.backend_req): **${fmt((originRequests / clientRequests) * 10000, 2)} origin requests per 10,000 client requests** (hit ratio ${fmt(100 - (originRequests / clientRequests) * 100, 4)} %).

**\`--workers\`** (unpinned: the servers may use both cores, and wrk runs on the same two cores, so its own CPU is listed; on this 2-core machine the load generator takes a large share):

| server | req/s | × nginx 1 worker | p99 ms | server µs CPU/req | server cores | wrk cores |
|---|---|---|---|---|---|---|
${[...scaling.entries()].map(([name, w]) => row(name, w, scaling.get("nginx 1 worker"))).join("\n")}
`;
    say(`\n${section}`);
    if (options.docs) writeDocsSection(HEADING, section);
  } finally {
    await Promise.all([...procs].map(stop));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
