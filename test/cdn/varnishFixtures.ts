/**
 * A real varnishd (Debian `varnish` + `varnish-modules`, installed by scripts/setup-test-env.sh) in front
 * of an origin, started by running the shell block of README.md's "Deploying behind a CDN" as it is
 * written, so the tests use the shipped VCL exactly as an operator deploys it. Loopback ports only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, stopChild } from "../limits/redisFixtures.ts";
import { http, waitFor, type RawOptions, type RawResponse } from "../server/serverFixtures.ts";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
const PRODUCT = "/volcanicashforecast/0.1";

export interface Varnish {
  /** `http://127.0.0.1:<port>`, where purges go too. */
  url: string;
  /** The TLS terminator's listener (PROXY protocol): its port. */
  tlsPort: number;
  /** What varnishd wrote (compile errors, panics), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** The first `sh` block of README.md's section "Deploying behind a CDN". */
export async function readmeVarnishBlock(): Promise<string> {
  const readme = await readFile(path.join(REPO, "README.md"), "utf8");
  const section = readme.split(/^## /m).find((part) => part.startsWith("Deploying behind a CDN"));
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README.md has no sh block in its section \"Deploying behind a CDN\"");
  return block;
}

/** Starts Varnish in front of the origin on `originPort` as the README says; `grace` in seconds. */
export async function startVarnish(originPort: number, grace = 60, varnishPort?: number): Promise<Varnish> {
  const dir = await mkdtemp(path.join(tmpdir(), "ashcast-varnish-"));
  // Varnish's compiler runs as its own user (when started as root): it must read the VCL, as in /etc/varnish.
  await chmod(dir, 0o755);
  const port = varnishPort ?? (await freePort());
  const tlsPort = await freePort();
  let output = "";
  const child: ChildProcess = spawn("bash", ["-euc", await readmeVarnishBlock()], {
    cwd: REPO,
    env: { ...process.env, ORIGIN_PORT: String(originPort), VARNISH_ADDRESS: `127.0.0.1:${port}`, VARNISH_TLS_ADDRESS: `127.0.0.1:${tlsPort}`, VARNISH_DIR: dir, GRACE: String(grace) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // Up, and the origin seen healthy by the probe (an answer that is not Varnish's own 503).
    await waitFor(`varnishd to serve (${output})`, async () => {
      if (child.exitCode !== null) throw new Error(`varnishd stopped: ${output}`);
      const res = await http(url, `${PRODUCT}/openapi.json`, { headers: client() }).catch(() => undefined);
      return res !== undefined && res.status === 200;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, tlsPort, output: () => output, stop };
}

/** Headers of a client behind the TLS terminator in front of Varnish. */
export const client = (extra: Record<string, string> = {}): Record<string, string> => ({ "user-agent": "airline-poller/1 ops@example.org", "x-forwarded-proto": "https", ...extra });

/** A request through Varnish to a path below the product's base. */
export const through = (varnish: Varnish, pathBelowBase: string, options: RawOptions & { headers?: Record<string, string> } = {}): Promise<RawResponse> =>
  http(varnish.url, `${PRODUCT}${pathBelowBase}`, { ...options, headers: client(options.headers) });

/** Varnish's verdict on an answer: HIT, MISS, STALE, or MISS for what was passed. */
export const cacheStatus = (res: RawResponse): string | undefined => res.headers["x-cache"] as string | undefined;
/** The reftime of a `/` answer, and the reftimes of a `/reftimes` answer. */
export const latestReftime = (res: RawResponse): string => (res.json() as { meta: { reftime: string } }).meta.reftime;
export const listedReftimes = (res: RawResponse): string[] => (res.json() as [{ reftimes: string[] }])[0].reftimes;
