/**
 * `ashcast serve --workers N`: several processes on one listening socket, replaced one at a time on
 * SIGHUP without a failed request, a crashed worker replaced, and one throttle per client across the
 * workers when REDIS_URL is set (in memory, each worker counts on its own: docs/decisions.md).
 */
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { availableParallelism } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWorkers } from "../../src/cli/cluster.ts";
import { freePort, startRedis, type Redis } from "../limits/redisFixtures.ts";
import { addRun, buildSite, http, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";
import { ashcast, USER_AGENT, type Child } from "./originFixtures.ts";
import { REPO } from "./varnishFixtures.ts";

const workerPids = (output: string) => new Set([...output.matchAll(/\[worker (\d+)\] serving http/g)].map((m) => Number(m[1])));

let site: Site;
beforeAll(async () => {
  site = await makeSite("ashcast-workers-");
  await addRun(site, "older", "2024-05-01T12:00:00Z");
  await buildSite(site);
});
afterAll(async () => site?.cleanup());

describe("--workers", () => {
  it("is a whole number from 1 or auto (the cores); anything else names the flag", () => {
    expect(parseWorkers(undefined)).toBe(1);
    expect(parseWorkers("2")).toBe(2);
    expect(parseWorkers("auto")).toBe(availableParallelism());
    for (const bad of ["0", "-1", "1.5", "many", "1e1", "0x2", " 2", "65"]) expect(() => parseWorkers(bad), bad).toThrow(expect.objectContaining({ where: "--workers" }));
    expect(parseWorkers("64")).toBe(64);
  });
});

describe("a worker that cannot start", () => {
  it("stops the start with the worker's own error and exit code 2, not a hang", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    try {
      const port = (taken.address() as { port: number }).port;
      const result = spawnSync("./bin/ashcast", ["serve", "--out", site.distDir, "--port", String(port), "--workers", "2"], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
      expect(result.status, result.stdout + result.stderr).toBe(2);
      expect(result.stderr).toContain(`--port: port ${port} on 127.0.0.1 is in use`);
      expect(result.stderr).toContain("--workers: a server worker stopped before listening");
    } finally {
      taken.close();
    }
  });
});

describe("a worker whose second listener cannot start (--http-port in use)", () => {
  it("is not counted as started: exit code 2 with its error, never \"workers share the listening socket\"", async () => {
    const cert = path.join(site.root, "workers-cert.pem");
    const key = path.join(site.root, "workers-key.pem");
    spawnSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost"], { encoding: "utf8" });
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    try {
      const httpPort = (taken.address() as { port: number }).port;
      const result = spawnSync("./bin/ashcast", ["serve", "--out", site.distDir, "--port", String(await freePort()), "--http-port", String(httpPort), "--tls-cert", cert, "--tls-key", key, "--workers", "2"], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
      expect(result.status, result.stdout + result.stderr).toBe(2);
      expect(result.stderr).toContain(`--http-port: port ${httpPort} on 127.0.0.1 is in use`);
      expect(result.stdout).not.toMatch(/share the listening socket/);
    } finally {
      taken.close();
    }
  });
});

describe("SIGTERM during a SIGHUP reload", () => {
  it("ends the reload and every worker, the new ones included: the primary exits", async () => {
    const port = await freePort();
    const server = await ashcast(["serve", "--out", site.distDir, "--port", String(port), "--workers", "2"], { env: { ASHCAST_WORKERS: "0" }, ready: /2 server workers share the listening socket/ });
    try {
      await waitFor("both workers to serve", () => workerPids(server.output()).size === 2);
      server.process.kill("SIGHUP");
      await waitFor("the first replacement to serve", () => workerPids(server.output()).size === 3, 60_000);
      server.process.kill("SIGTERM");
      await waitFor("the primary to exit", () => server.process.exitCode !== null || server.process.signalCode !== null, 60_000);
      const pids = workerPids(server.output());
      // Give a worker forked in the race a moment to show itself, then none may be alive.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const pid of workerPids(server.output())) pids.add(pid);
      for (const pid of pids) expect(() => process.kill(pid, 0), `worker ${pid} has exited`).toThrow();
      expect(server.output()).not.toMatch(/workers replaced/);
    } finally {
      await server.stop();
    }
  });
});

describe("ashcast serve --workers 2", () => {
  let server: Child;
  let base: string;
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Given by its environment variable, beside the build's own ASHCAST_WORKERS (threads; 0 is valid there, not here).
    const env = { ASHCAST_SERVE_WORKERS: "2", ASHCAST_WORKERS: "0" };
    server = await ashcast(["serve", "--out", site.distDir, "--port", String(port)], { env, ready: /2 server workers share the listening socket/ });
  });
  afterAll(async () => server?.stop());

  it("two processes answer on one port", async () => {
    // Each says so once its server is up (just after the primary saw it listening).
    await waitFor("both workers to say they serve", () => workerPids(server.output()).size === 2);
    for (let i = 0; i < 20; i++) expect((await http(base, "/volcanicashforecast/0.1/reftimes", { headers: USER_AGENT })).status).toBe(200);
  });

  it("SIGHUP replaces every worker one at a time while requests go on, none failing", async () => {
    const before = workerPids(server.output());
    let stop = false;
    const failures: string[] = [];
    let answered = 0;
    // Four clients, each on fresh connections ten times a second (within its limit), during the whole reload.
    const load = Array.from({ length: 4 }, async (_, client) => {
      while (!stop) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const res = await http(base, "/volcanicashforecast/0.1/", { headers: { "user-agent": `poller-${client}/1 ops@example.org` } }).catch((error: Error) => ({ status: 0, error }));
        if (res.status === 200) answered++;
        else failures.push(String("error" in res ? res.error.message : res.status));
      }
    });
    server.process.kill("SIGHUP");
    await waitFor("the workers to be replaced", () => /workers replaced/.test(server.output()) && workerPids(server.output()).size === 4, 60_000);
    stop = true;
    await Promise.all(load);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(0);
    const after = workerPids(server.output());
    expect(after.size).toBe(4);
    const replacements = [...after].filter((pid) => !before.has(pid));
    expect(replacements.length).toBe(2);
    for (const pid of before) expect(() => process.kill(pid, 0), `old worker ${pid} has exited`).toThrow();
  });

  it("a worker that dies is replaced", async () => {
    const alive = [...workerPids(server.output())].filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive.length).toBe(2);
    process.kill(alive[0]!, "SIGKILL");
    await waitFor("a replacement worker", () => /starting another/.test(server.output()) && workerPids(server.output()).size === 5, 60_000);
    for (let i = 0; i < 10; i++) expect((await http(base, "/volcanicashforecast/0.1/reftimes", { headers: USER_AGENT })).status).toBe(200);
  });
});

describe("the throttle across workers", () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await startRedis(site.root);
  });
  afterAll(async () => redis?.stop());

  it("with REDIS_URL, one allowance per client whichever worker answers", async () => {
    const traffic = path.join(site.root, "traffic.json");
    // A burst of 10 and no refill while the test runs.
    await writeFile(traffic, JSON.stringify({ format: 1, limits: { data: { ratePerSecond: 0.001, burst: 10 } }, blockList: path.join(site.root, "blocklist.json"), holdRefusalsMs: 0 }));
    const port = await freePort();
    const server = await ashcast(["serve", "--out", site.distDir, "--port", String(port), "--workers", "2", "--traffic", traffic], { env: { REDIS_URL: redis.url }, ready: /2 server workers share the listening socket/ });
    try {
      const base = `http://127.0.0.1:${port}`;
      const statuses: number[] = [];
      // Fresh connections: the primary hands them to both workers in turn.
      for (let i = 0; i < 30; i++) statuses.push((await http(base, "/volcanicashforecast/0.1/reftimes", { headers: USER_AGENT })).status);
      expect(statuses.filter((s) => s === 200).length).toBe(10);
      expect(statuses.filter((s) => s === 429).length).toBe(20);
    } finally {
      await server.stop();
    }
  });
});
