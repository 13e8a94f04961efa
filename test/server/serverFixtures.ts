/**
 * Helpers for the server tests: real run folders (made by `ashcast new-run`'s own code), real builds
 * into temp directories, the real server on 127.0.0.1 port 0, and raw HTTP requests through node:http
 * (exact request headers, bodies as sent: nothing decompressed or normalised behind the test's back).
 * No mocks anywhere; everything lives under os.tmpdir() and is removed by `cleanup()`.
 */
import { mkdir, mkdtemp, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { newRun } from "../../src/cli/newRun.ts";
import type { RunType } from "../../src/contract/ashModel.ts";
import { Problem } from "../../src/contract/problem.ts";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { startServer, type RunningServer, type ServeOptions } from "../../src/server/serve.ts";

export const PUBLIC_URL = "https://ash.example.org/volcanicashforecast/0.1";
export const HEKLA = { name: "Hekla", lat: 63.98, lon: -19.7 } as const;

// ---------------------------------------------------------------------------------------------
// Workspaces, runs, builds

export interface Site {
  root: string;
  runsDir: string;
  distDir: string;
  cleanup(): Promise<void>;
}

/** A fresh temp directory with an empty `runs/`; `dist/` is left for the build to create. */
export async function makeSite(prefix = "ashcast-server-"): Promise<Site> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  const runsDir = path.join(root, "runs");
  await mkdir(runsDir);
  return { root, runsDir, distDir: path.join(root, "dist"), cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** A valid run folder, exactly as `ashcast new-run NAME --type TYPE --reftime REFTIME` makes it. Returns its directory. */
export async function addRun(site: Site, name: string, reftime: string, type: RunType = "Exercise"): Promise<string> {
  return newRun({ runsDir: site.runsDir, name, type, reftime, volcano: HEKLA });
}

/** Rewrites the run.json of a run folder. */
export async function editRunJson(runDir: string, edit: (manifest: Record<string, unknown>) => void): Promise<void> {
  const file = path.join(runDir, "run.json");
  const manifest = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  edit(manifest);
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** A run folder the build must refuse: its run.json has no type (the build never guesses one). */
export async function addInvalidRun(site: Site, name: string, reftime: string): Promise<string> {
  const dir = await addRun(site, name, reftime);
  await editRunJson(dir, (manifest) => {
    delete manifest.type;
  });
  return dir;
}

export async function buildSite(site: Site, now?: string): Promise<BuildResult> {
  return build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, ...(now ? { now: () => new Date(now) } : {}) });
}

// ---------------------------------------------------------------------------------------------
// The published release, read the way the server reads it

export interface StoredBodyInfo {
  file: string;
  size: number;
  etag: string;
}

/** One published artefact, with the instant its Last-Modified must show. */
export interface PublishedArtefact {
  contentType: string;
  sha256: string;
  modified: string;
  identity: StoredBodyInfo;
  gzip?: StoredBodyInfo;
  br?: StoredBodyInfo;
}

export interface Published {
  id: string;
  built: string;
  /** Newest first. */
  reftimes: string[];
  runs: Record<string, { json: string; png?: string }>;
  lists: { reftimes: string; changelog: string; report: string };
  /** Every resource name the release offers (shared ones and every run's) to its artefact key. */
  resources: Record<string, string>;
  /** The shared resource names plus those of one run. */
  resourcesOf(reftime: string): string[];
  artefact(key: string): PublishedArtefact;
  /** Stored bytes of an artefact in one encoding. */
  body(key: string, encoding?: "identity" | "gzip" | "br"): Promise<Buffer>;
}

interface RawArtefact extends Omit<PublishedArtefact, "modified"> {
  modified?: string;
}
interface RawIndex {
  format: number;
  release: string;
  built: string;
  reftimes: string[];
  runs: Record<string, { json: string; png?: string; dir?: string; modified?: string }>;
  resources: Record<string, string>;
  lists: { reftimes: string; changelog: string; report: string };
  artefacts: Record<string, RawArtefact>;
}

/**
 * dist/current → index.json and its run chunks (read and checked as the server reads them) → files. Release
 * index format 1 listed every artefact in index.json; later formats keep each run's artefacts (and the
 * run's Last-Modified) in `<run dir>/artefacts.json`: both are read here.
 */
export async function readPublished(distDir: string): Promise<Published> {
  const dir = path.resolve(distDir, await readlink(path.join(distDir, "current")));
  const raw = (await readReleaseIndex(distDir, dir)) as RawIndex;
  const artefacts = new Map<string, PublishedArtefact>();
  const resources: Record<string, string> = { ...raw.resources };
  const runResources = new Map<string, string[]>();
  for (const [key, artefact] of Object.entries(raw.artefacts)) artefacts.set(key, { ...artefact, modified: artefact.modified! });
  for (const [reftime, run] of Object.entries(raw.runs)) {
    if (run.dir === undefined) {
      runResources.set(reftime, Object.keys(raw.resources).filter((name) => name.startsWith(`${reftime}/`)));
      continue;
    }
    const list = JSON.parse(await readFile(path.join(distDir, run.dir, "artefacts.json"), "utf8")) as { artefacts: Record<string, RawArtefact>; resources: Record<string, string> };
    for (const [key, artefact] of Object.entries(list.artefacts)) artefacts.set(key, { ...artefact, modified: artefact.modified ?? run.modified! });
    Object.assign(resources, list.resources);
    runResources.set(reftime, Object.keys(list.resources));
  }
  for (const [key, artefact] of artefacts) if (!artefact.modified) throw new Error(`no Last-Modified instant for artefact ${key}`);
  const shared = Object.keys(raw.resources).filter((name) => ![...runResources.values()].some((names) => names.includes(name)));
  const artefact = (key: string): PublishedArtefact => {
    const found = artefacts.get(key);
    if (!found) throw new Error(`release ${raw.release} has no artefact ${key}`);
    return found;
  };
  return {
    id: path.basename(dir),
    built: raw.built,
    reftimes: raw.reftimes,
    runs: Object.fromEntries(Object.entries(raw.runs).map(([reftime, run]) => [reftime, { json: run.json, ...(run.png ? { png: run.png } : {}) }])),
    lists: raw.lists,
    resources,
    resourcesOf: (reftime) => [...shared, ...(runResources.get(reftime) ?? [])],
    artefact,
    body: async (key, encoding = "identity") => {
      const stored = artefact(key)[encoding];
      if (!stored) throw new Error(`artefact ${key} has no ${encoding} body`);
      return readFile(path.join(distDir, stored.file));
    },
  };
}

/**
 * Publishes a release whose index.json is not JSON, switched in exactly as a build switches:
 * a temporary symlink renamed over `dist/current`. Returns the release id.
 */
export async function publishBrokenRelease(distDir: string, id = "zz-broken"): Promise<string> {
  const dir = path.join(distDir, "releases", id);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "index.json"), "{ this is not JSON");
  const link = path.join(distDir, `.tmp-test-${process.pid}-${id}`);
  await symlink(path.posix.join("releases", id), link);
  await rename(link, path.join(distDir, "current"));
  return id;
}

// ---------------------------------------------------------------------------------------------
// The server

export async function serve(site: Site, options: Partial<Omit<ServeOptions, "distDir">> = {}): Promise<RunningServer> {
  return startServer({ port: 0, host: "127.0.0.1", ...options, distDir: site.distDir });
}

/** Waits (polling, generous timeout) until `check` holds; never a timing assertion, only a wait. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Asks the server's release source to look at dist/current again until it serves `releaseId`. */
export async function untilServing(server: RunningServer, releaseId: string): Promise<void> {
  await waitFor(`the server to serve release ${releaseId}`, async () => {
    await server.source.refresh();
    return server.source.current?.id === releaseId;
  });
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as they came over the socket (still compressed when Content-Encoding says so). */
  body: Buffer;
  text(): string;
  json(): unknown;
}

export interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as the request body (with its Content-Length). */
  body?: string | Buffer;
  agent?: Agent;
}

/**
 * One request over a real socket. `target` is either an absolute URL, or a path appended verbatim to
 * the server's base path (so `%2e%2e%2f` and raw `+` reach the server exactly as written).
 */
export function http(server: RunningServer | string, target: string, options: RawOptions = {}): Promise<RawResponse> {
  const baseUrl = new URL(typeof server === "string" ? server : server.url);
  const requestPath = /^https?:/.test(target) ? new URL(target).pathname + new URL(target).search : `${typeof server === "string" ? "" : baseUrl.pathname}${target}`;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: baseUrl.hostname, port: baseUrl.port, method: options.method ?? "GET", path: requestPath, headers: options.headers ?? {}, agent: options.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: () => body.toString("utf8"), json: () => JSON.parse(body.toString("utf8")) as unknown });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The origin (scheme, host, port) of a running server, for requests outside its base path. */
export const originOf = (server: RunningServer): string => new URL(server.url).origin;

/** Asserts an RFC 9457 problem answer with this status; returns the parsed body. */
export function expectProblem(res: RawResponse, status: number): Problem {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toBe("application/problem+json");
  const problem = Problem.parse(res.json());
  expect(problem).toEqual({ type: "about:blank", title: expect.any(String), status, detail: expect.any(String) });
  expect(problem.title.length).toBeGreaterThan(0);
  expect(problem.detail.length).toBeGreaterThan(0);
  return problem;
}

/** A header that must be present once, as a string. */
export function header(res: RawResponse, name: string): string {
  const value = res.headers[name.toLowerCase()];
  if (typeof value !== "string") throw new Error(`expected one ${name} header, got ${JSON.stringify(value)} (status ${res.status})`);
  return value;
}
