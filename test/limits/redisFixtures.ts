/**
 * A real redis-server for a test (Debian's `redis-server`, installed by scripts/setup-test-env.sh) on a
 * free port, in a temp dir, without persistence; and `ashcast serve` as a child process, as an instance
 * behind a load balancer runs. Everything started here is stopped by the returned `stop`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, connect } from "node:net";
import { fileURLToPath } from "node:url";
import { waitFor } from "../server/serverFixtures.ts";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

/** Whether something on this port answers PING with PONG. */
export function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on("error", () => resolve(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
  });
}

export interface Redis {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export async function startRedis(dir: string, port?: number): Promise<Redis> {
  const chosen = port ?? (await freePort());
  const child = spawn("redis-server", ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
  await waitFor("redis-server to answer", () => pings(chosen), 10_000);
  return { port: chosen, url: `redis://127.0.0.1:${chosen}`, stop: () => stopChild(child) };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

const BIN = fileURLToPath(new URL("../../bin/ashcast", import.meta.url));

export interface Instance {
  base: string;
  output: string[];
  stop(): Promise<void>;
}

/** `ashcast serve` in its own process, in `cwd` (so its config/ is the test's), on a free port. */
export async function startInstance(options: { cwd: string; distDir: string; env: Record<string, string> }): Promise<Instance> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.ASHCAST_TRAFFIC_FILE;
  const child = spawn(BIN, ["serve", "--dist", options.distDir, "--port", String(port), "--host", "127.0.0.1"], { cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString().split("\n").filter(Boolean));
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  await waitFor(`ashcast serve to listen (output: ${output.join(" | ")})`, () => output.some((line) => line.includes("serving http://")) || child.exitCode !== null, 60_000);
  if (child.exitCode !== null) throw new Error(`ashcast serve exited with ${child.exitCode}: ${output.join("\n")}`);
  return { base: `http://127.0.0.1:${port}/volcanicashforecast/0.1`, output, stop: () => stopChild(child) };
}
