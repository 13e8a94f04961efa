/**
 * Several instances, one limit (issue 6, point 5): two `ashcast serve` processes sharing one real
 * redis-server enforce one limit per client; with Redis unreachable or gone, each instance limits on its
 * own (fail open to the in-memory limiter, logged) and keeps serving.
 */
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { promisify } from "node:util";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addRun, buildSite, http, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";
import { freePort, startInstance, startRedis, type Instance, type Redis } from "./redisFixtures.ts";
import { UA } from "./trafficFixtures.ts";

const execFileAsync = promisify(execFile);
let site: Site;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  site = await makeSite("ashcast-redis-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await site.cleanup();
});

async function redisIn(name: string, port?: number): Promise<Redis> {
  const dir = path.join(site.root, name);
  await mkdir(dir, { recursive: true });
  const redis = await startRedis(dir, port);
  stops.push(redis.stop);
  return redis;
}

async function instance(env: Record<string, string>): Promise<Instance> {
  const started = await startInstance({ cwd: site.root, distDir: site.distDir, env });
  stops.push(started.stop);
  return started;
}

const status = async (server: Instance, agent: string = UA["user-agent"]) => (await http(server.base, `${new URL(server.base).pathname}/reftimes`, { headers: { "user-agent": agent } })).status;
/** Nothing refills while the test runs: only the burst counts. */
const limits = (burst: number, redisUrl: string) => ({ REDIS_URL: redisUrl, ASHCAST_RATE_PER_SECOND: "0.001", ASHCAST_RATE_BURST: String(burst) });

describe("throttle state in Redis", () => {
  it("two instances sharing one Redis enforce one limit per client", async () => {
    const redis = await redisIn("shared");
    const [a, b] = await Promise.all([instance(limits(6, redis.url)), instance(limits(6, redis.url))]);
    for (const server of [a, b]) await waitFor("the instance to use Redis", () => server.output.some((line) => line.includes("limits are shared through Redis")));
    // Six requests, alternating between the instances: the client's burst, shared.
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push(await status(i % 2 === 0 ? a : b));
    expect(answers).toEqual([200, 200, 200, 200, 200, 200]);
    // The seventh is refused by either instance (each alone would still allow three more).
    expect(await status(a)).toBe(429);
    expect(await status(b)).toBe(429);
    // Another client has its own allowance on both.
    expect(await status(b, "other-client/1 ops@example.org")).toBe(200);
    expect(await status(a, "other-client/1 ops@example.org")).toBe(200);
    // The password of a REDIS_URL is never logged; the address is.
    expect(a.output.join("\n")).toContain(`redis://127.0.0.1:${redis.port}`);
  });

  it("with Redis unreachable at start, serves and limits per instance, and says so once", async () => {
    const nowhere = `redis://:secret-password@127.0.0.1:${await freePort()}`;
    const server = await instance(limits(3, nowhere));
    await waitFor("the instance to report Redis unreachable", () => server.output.some((line) => line.includes("cannot reach Redis")));
    expect([await status(server), await status(server), await status(server)]).toEqual([200, 200, 200]);
    expect(await status(server)).toBe(429);
    expect(server.output.join("\n")).not.toContain("secret-password");
    expect(server.output.filter((line) => line.includes("cannot reach Redis"))).toHaveLength(1);
  });

  it("refuses a REDIS_URL that is not a Redis address, and a start that fails to listen leaves nothing running", async () => {
    const { startServer } = await import("../../src/server/serve.ts");
    const { trafficFor } = await import("./trafficFixtures.ts");
    await expect(startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", traffic: trafficFor(site), redisUrl: "http://example.org" })).rejects.toThrow(/REDIS_URL is not a Redis address/);
    // The port is taken: the CLI reports it and exits (no Redis client or timer keeps it alive).
    const taken = await instance({ ASHCAST_RATE_BURST: "5" });
    const port = new URL(taken.base).port;
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const bin = new URL("../../bin/ashcast", import.meta.url).pathname;
    const failed = await promisify(execFile)(bin, ["serve", "--dist", site.distDir, "--port", port], { cwd: site.root, env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, timeout: 60_000 }).catch((error: { code: unknown; stderr: string }) => error);
    expect((failed as { code: unknown }).code).toBe(2);
    expect((failed as { stderr: string }).stderr).toMatch(new RegExp(`--port: port ${port} on 127\\.0\\.0\\.1 is in use\n {2}fix: `));
  });

  it("a Redis that answers every command with an error (full): limits stay applied, and it is tried again at growing intervals, not every second", async () => {
    const redis = await redisIn("full");
    const server = await instance(limits(1000, redis.url));
    await waitFor("the instance to use Redis", () => server.output.some((line) => line.includes("limits are shared through Redis")));
    // Full, refusing writes: the connection stays up and every throttle command fails.
    const cli = (...args: string[]) => execFileAsync("redis-cli", ["-p", String(redis.port), ...args]);
    await cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await cli("CONFIG", "SET", "maxmemory", "1");
    const agains = () => server.output.filter((line) => line.includes("limits are shared through Redis at") && line.endsWith(" again")).length;
    const seen: number[] = [];
    for (let until = Date.now() + 20_000; Date.now() < until && seen.length < 3; ) {
      expect(await status(server)).toBe(200); // never an error: its own limiter answers meanwhile
      if (agains() > seen.length) seen.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen.length, server.output.join("\n")).toBe(3);
    // Each wait at least half again as long as the one before (1 s, 2 s, 4 s): it once switched back every second.
    expect(seen[2]! - seen[1]!).toBeGreaterThan(1.4 * (seen[1]! - seen[0]!));
    await cli("CONFIG", "SET", "maxmemory", "0");
  });

  it("when Redis goes away, falls back to its own limiter, and shares again once Redis is back", async () => {
    const redis = await redisIn("restarted");
    const server = await instance(limits(4, redis.url));
    await waitFor("the instance to use Redis", () => server.output.some((line) => line.includes("limits are shared through Redis")));
    expect([await status(server), await status(server)]).toEqual([200, 200]); // 2 of 4 counted in Redis
    await redis.stop();
    await waitFor("the instance to notice", () => server.output.some((line) => line.includes("is not answering")));
    // Its own limiter: a fresh burst of 4 for this client, then 429; never an error.
    expect([await status(server), await status(server), await status(server), await status(server)]).toEqual([200, 200, 200, 200]);
    expect(await status(server)).toBe(429);
    // Redis back (empty: it kept nothing on disk): shared again, and the limit is counted there afresh.
    await redisIn("restarted-again", redis.port);
    await waitFor("the instance to share again", () => server.output.filter((line) => line.includes("limits are shared through Redis")).length >= 2, 30_000);
    expect(await status(server)).toBe(200);
  });
});
