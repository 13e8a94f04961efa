/** `ashcast serve` and `ashcast watch` as child processes on one published tree, as on a shared volume. */
import { spawn, type ChildProcess } from "node:child_process";
import { REPO } from "./varnishFixtures.ts";
import { stopChild } from "../limits/redisFixtures.ts";
import { waitFor } from "../server/serverFixtures.ts";

export interface Child {
  process: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `./bin/ashcast <args>`; with `ready`, waits until its output matches. */
export async function ashcast(args: readonly string[], options: { env?: NodeJS.ProcessEnv; ready?: RegExp } = {}): Promise<Child> {
  const child = spawn("./bin/ashcast", args, { cwd: REPO, env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const handle: Child = { process: child, output: () => output, stop: () => stopChild(child) };
  if (options.ready) {
    const ready = options.ready;
    try {
      await waitFor(`ashcast ${args[0]} to be ready`, () => {
        if (child.exitCode !== null) throw new Error(`ashcast ${args.join(" ")} stopped: ${output}`);
        return ready.test(output);
      }, 60_000);
    } catch (error) {
      await handle.stop();
      throw error;
    }
  }
  return handle;
}

export const USER_AGENT = { "user-agent": "airline-poller/1 ops@example.org" } as const;
