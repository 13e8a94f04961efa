/** `ashcast start`: one process that watches runs/ (builds in a worker thread) and serves dist/. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newRun } from "../../src/cli/newRun.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
let child: ChildProcess | undefined;
let scratch: string | undefined;
afterAll(async () => {
  child?.kill("SIGTERM");
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("ashcast start", () => {
  it("serves the runs it builds, and publishes a change without a restart", async () => {
    scratch = await mkdtemp(path.join(tmpdir(), "ashcast-start-"));
    const runs = path.join(scratch, "runs");
    const folder = await newRun({ runsDir: runs, name: "2024-05-01-hekla", type: "Exercise", reftime: "2024-05-01T12:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7 } });
    const port = await freePort();
    const { MALLOC_ARENA_MAX: _unset, ...env } = process.env;
    child = spawn("./bin/ashcast", ["start", "--runs", runs, "--out", path.join(scratch, "dist"), "--port", String(port)], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const base = `http://127.0.0.1:${port}/volcanicashforecast/0.1`;
    const headers = { "user-agent": "ashcast-test/1 ops@example.org" };

    const first = await until("the first run served", async () => {
      const res = await fetch(`${base}/`, { headers });
      return res.status === 200 ? ((await res.json()) as { meta: { description: string } }) : undefined;
    });
    expect(first.meta.description).toMatch(/^Hekla: ash forecast drawn by the duty forecaster/);

    const manifestPath = path.join(folder, "run.json");
    const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as Record<string, unknown>;
    await writeFile(manifestPath, JSON.stringify({ ...manifest, description: "Hekla: plume to 10 km, drifting north-east." }));
    const second = await until("the change served", async () => {
      const res = await fetch(`${base}/`, { headers });
      const model = (await res.json()) as { meta: { description: string } };
      return model.meta.description.startsWith("Hekla: plume to 10 km") ? model : undefined;
    });
    expect(second.meta.description).toBe("Hekla: plume to 10 km, drifting north-east.");
    const health = await (await fetch(`${base}/healthz`, { headers })).text();
    expect(health).toMatch(/^status: ok\nruns: 1\nlatest reftime: 2024-05-01T12:00:00Z\n/);
    // The launcher gives a server its smaller young generation (RSS under point-query load: docs/benchmarks.md).
    const commandLine = (await readFile(`/proc/${child.pid}/cmdline`, "utf8")).split("\0");
    expect(commandLine).toContain("--max-semi-space-size=16");
    // … and two malloc arenas, not glibc's eight per core (peak RSS of a build: docs/benchmarks.md).
    const environment = (await readFile(`/proc/${child.pid}/environ`, "utf8")).split("\0");
    expect(environment).toContain("MALLOC_ARENA_MAX=2");
  });
});
