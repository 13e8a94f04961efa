/**
 * `serve --workers` when workers keep dying at start: a real cause (the traffic file, which every worker
 * reads before it listens, broken by an edit after the start), real processes, real kills. A replacement
 * that fails is retried with growing waits; after five in a row the primary says so and the other worker
 * serves on; the cause removed, the next try brings the worker back; with no worker left, the primary
 * stops with an error naming --workers and exit code 2.
 */
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../limits/redisFixtures.ts";
import { addRun, buildSite, http, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";
import { ashcast, USER_AGENT, type Child } from "./originFixtures.ts";

const workerPids = (output: string) => [...new Set([...output.matchAll(/\[worker (\d+)\] serving http/g)].map((m) => Number(m[1])))];
/** The waits the primary announced before each replacement ("starting another in 0.4 s"). */
const announcedWaits = (output: string) => [...output.matchAll(/starting another in ([\d.]+) s/g)].map((m) => Number(m[1]));

let site: Site;
let traffic: string;
const validTraffic = () => writeFile(traffic, JSON.stringify({ format: 1, blockList: path.join(site.root, "blocklist.json") }));
/** An edit that leaves the file half-written: every worker that starts from now on refuses it. */
const breakTraffic = () => writeFile(traffic, '{ "format": 1, "limits": ');

beforeAll(async () => {
  site = await makeSite("ashcast-crash-loop-");
  await addRun(site, "older", "2024-05-01T12:00:00Z");
  await buildSite(site);
  traffic = path.join(site.root, "traffic.json");
});
afterAll(async () => site?.cleanup());

let server: Child | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function serveTwoWorkers(): Promise<{ base: string; pids: number[] }> {
  await validTraffic();
  const port = await freePort();
  server = await ashcast(["serve", "--out", site.distDir, "--port", String(port), "--workers", "2", "--traffic", traffic], { ready: /2 server workers share the listening socket/ });
  await waitFor("both workers to say they serve", () => workerPids(server!.output()).length === 2);
  return { base: `http://127.0.0.1:${port}`, pids: workerPids(server.output()) };
}

describe("serve --workers with workers that die at start", () => {
  it("retries with growing waits, says when it is a crash loop, serves on with the other worker, and recovers once the cause is gone", async () => {
    const { base, pids } = await serveTwoWorkers();
    await breakTraffic();
    process.kill(pids[0]!, "SIGKILL");
    await waitFor("five failed starts in a row", () => /5 workers in a row stopped within 10 s of starting/.test(server!.output()), 60_000);
    const output = server!.output();
    // Each replacement printed the worker's own error, naming the file, then the primary's next wait.
    expect(output).toContain(traffic);
    expect(output).toContain(`worker ${pids[0]} stopped (SIGKILL); starting another`);
    expect(output).toMatch(/worker \d+ stopped \(exit code 2\) before listening; starting another in/);
    // The kill counts among the five when the worker had lived under 10 s: either way the waits are these.
    expect(announcedWaits(output).slice(0, 5)).toEqual([0.1, 0.2, 0.4, 0.8, 1.6]);
    expect(output).toMatch(/1 worker still serves; starting another in 1\.6 s, then at most every 30 s until one stays up/);
    // The primary is still there, and the other worker answers every request.
    expect(server!.process.exitCode).toBeNull();
    for (let i = 0; i < 10; i++) expect((await http(base, "/volcanicashforecast/0.1/reftimes", { headers: USER_AGENT })).status).toBe(200);

    await validTraffic();
    await waitFor("a replacement that starts", () => workerPids(server!.output()).length === 3, 60_000);
    for (let i = 0; i < 10; i++) expect((await http(base, "/volcanicashforecast/0.1/reftimes", { headers: USER_AGENT })).status).toBe(200);
  });

  it("stops with an error naming --workers and exit code 2 when no worker is left serving", async () => {
    const { pids } = await serveTwoWorkers();
    await breakTraffic();
    const exited = once(server!.process, "exit");
    for (const pid of pids) process.kill(pid, "SIGKILL");
    const [code] = (await exited) as [number | null];
    const output = server!.output();
    expect(code, output).toBe(2);
    expect(output).toMatch(/no worker is left serving/);
    expect(output).toMatch(/--workers: \d+ server workers in a row stopped within 10 s of starting, and none is left serving/);
    expect(output).toMatch(/fix: read the workers' errors above/);
  });
});
