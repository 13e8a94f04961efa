/**
 * Shared helpers of the crash and watch tests: run folders written from scratch (run.json plus KML
 * layers with several timesteps), a check that the tree `dist/current` serves is a whole release,
 * the CLI as a child process, and a seeded pseudo-random generator.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { contentHash } from "../../src/build/updateRun.ts";
import { AshModel, type RunType } from "../../src/contract/ashModel.ts";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { CURRENT_LINK, INDEX_FILE, RUN_ARTEFACTS_FILE, RunArtefacts, type Artefact, type ReleaseIndex } from "../../src/contract/releaseIndex.ts";
import { formatInstant, parseInstant } from "../../src/time/instant.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const PUBLIC_URL = "http://127.0.0.1:8080/volcanicashforecast/0.1";

// ---------------------------------------------------------------------------------------------
// Temporary directories

export async function makeTempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), `ashcast-${prefix}-`));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until it holds; fails with `what` after `timeoutMs` (generous: never a timing assertion). */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Seeded pseudo-random numbers (mulberry32), so that a failing run can be reproduced from its seed

export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// Run folders

export interface RunSpec {
  /** Any accepted spelling; published normalised. */
  reftime: string;
  description: string;
  type?: RunType;
  /** Timesteps of each KML layer (6-hourly from the reftime). */
  steps: number;
  /** KML files, each one layer listed in run.json. */
  layers: readonly string[];
  volcano?: { name: string; lat: number; lon: number };
}

export const HOUR_MS = 3_600_000;

/** `base` plus `hours`, as published (`YYYY-MM-DDTHH:MM:SSZ`). */
export function reftimeAt(hours: number, base = "2024-05-01T00:00:00Z"): string {
  return formatInstant(parseInstant(base)! + hours * HOUR_MS);
}

/** The timesteps every layer of the run has, as published. */
export function expectedTimes(spec: RunSpec): string[] {
  const t0 = parseInstant(spec.reftime)!;
  return Array.from({ length: spec.steps }, (_, k) => formatInstant(t0 + k * 6 * HOUR_MS));
}

export function layerName(file: string): string {
  return `Layer ${file.replace(/\.kml$/, "")}`;
}

export function runJson(spec: RunSpec): string {
  return `${JSON.stringify(
    {
      type: spec.type ?? "Exercise",
      reftime: spec.reftime,
      description: spec.description,
      layergroups: [{ name: "Forecaster advisory", layers: spec.layers.map((file) => ({ type: "KML", name: layerName(file), file })) }],
    },
    null,
    2,
  )}\n`;
}

function ring(lon: number, lat: number, halfWidth: number, halfHeight: number, points = 8): string {
  const out: string[] = [];
  for (let i = 0; i <= points; i++) {
    const angle = ((i % points) / points) * 2 * Math.PI;
    out.push(`${(lon + halfWidth * Math.cos(angle)).toFixed(4)},${(lat + halfHeight * Math.sin(angle)).toFixed(4)},0`);
  }
  return out.join(" ");
}

const BANDS = ["SFC/FL200", "FL200/FL350"];

/** A forecaster's KML: one Folder per timestep (a TimeSpan each), three flight-level bands per step. */
export function advisoryKml(spec: RunSpec, layerIndex = 0): string {
  const volcano = spec.volcano ?? { name: "Hekla", lat: 63.98, lon: -19.7 };
  const t0 = parseInstant(spec.reftime)!;
  const folders: string[] = [];
  for (let k = 0; k < spec.steps; k++) {
    const begin = formatInstant(t0 + k * 6 * HOUR_MS);
    const end = formatInstant(t0 + (k + 1) * 6 * HOUR_MS);
    const placemarks = BANDS.map(
      (band, b) => `      <Placemark>
        <name>${band}</name>
        <styleUrl>#ash${b}</styleUrl>
        <ExtendedData><Data name="band"><value>${band}</value></Data></ExtendedData>
        <Polygon><outerBoundaryIs><LinearRing><coordinates>${ring(volcano.lon + 0.8 * k + 0.1 * layerIndex, volcano.lat + 0.15 * k - 0.2 * b, 0.5 + 0.3 * k, 0.3 + 0.1 * k)}</coordinates></LinearRing></outerBoundaryIs></Polygon>
      </Placemark>`,
    ).join("\n");
    folders.push(`    <Folder>
      <name>${k === 0 ? "Observation" : `Forecast +${6 * k}H`}</name>
      <TimeSpan><begin>${begin}</begin><end>${end}</end></TimeSpan>
${placemarks}
    </Folder>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>${volcano.name} ash advisory ${spec.reftime} (layer ${layerIndex + 1})</name>
    <description>${escapeXml(spec.description)}</description>
${BANDS.map((_, b) => `    <Style id="ash${b}"><LineStyle><color>ff0000ff</color><width>2</width></LineStyle><PolyStyle><color>40${(b * 60).toString(16).padStart(2, "0")}00ff</color></PolyStyle></Style>`).join("\n")}
    <Placemark>
      <name>${volcano.name}</name>
      <Point><coordinates>${volcano.lon},${volcano.lat}</coordinates></Point>
    </Placemark>
${folders.join("\n")}
  </Document>
</kml>
`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** File name to content of a run folder. */
export function runFiles(spec: RunSpec): Map<string, string> {
  const files = new Map<string, string>([["run.json", runJson(spec)]]);
  spec.layers.forEach((file, i) => files.set(file, advisoryKml(spec, i)));
  return files;
}

export async function writeRun(runsDir: string, folder: string, spec: RunSpec): Promise<void> {
  const dir = path.join(runsDir, folder);
  await mkdir(dir, { recursive: true });
  for (const [name, body] of runFiles(spec)) await writeFile(path.join(dir, name), body);
}

// ---------------------------------------------------------------------------------------------
// The served tree

export interface ServedTree {
  release: string;
  index: ReleaseIndex;
  models: Map<string, AshModel>;
}

const sha256 = (body: Buffer) => createHash("sha256").update(body).digest("hex");

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Checks every stored body of `artefacts` (identity, gzip, br): inside dist (under `under` when given),
 * present, of the size and (decoded) sha256 the list says. Returns the identity bodies by key.
 */
async function verifyArtefacts(distDir: string, artefacts: Readonly<Record<string, Artefact>>, where: string, problems: string[], under?: string): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  for (const [key, artefact] of Object.entries(artefacts)) {
    const variants = [["identity", artefact.identity], ["gzip", artefact.gzip], ["br", artefact.br]] as const;
    for (const [encoding, stored] of variants) {
      if (!stored) continue;
      const at = `${where}: ${key} (${encoding}: ${stored.file})`;
      if (path.isAbsolute(stored.file) || stored.file.split("/").includes("..") || (under !== undefined && !stored.file.startsWith(`${under}/`))) {
        problems.push(`${at}: not a path inside ${under ?? "dist"}`);
        continue;
      }
      const body = await readIfExists(path.join(distDir, stored.file));
      if (!body) {
        problems.push(`${at}: file missing`);
        continue;
      }
      if (body.length !== stored.size) problems.push(`${at}: ${body.length} bytes, index says ${stored.size}`);
      let identity: Buffer;
      try {
        identity = encoding === "identity" ? body : encoding === "gzip" ? gunzipSync(body) : brotliDecompressSync(body);
      } catch (error) {
        problems.push(`${at}: does not decode: ${(error as Error).message}`);
        continue;
      }
      if (sha256(identity) !== artefact.sha256) problems.push(`${at}: sha256 ${sha256(identity)} differs from the index's ${artefact.sha256}`);
      if (encoding === "identity") bodies.set(key, body);
    }
  }
  return bodies;
}

/**
 * Checks that what `dist/current` serves is one whole release: the link resolves to a release whose
 * index passes the schema; every artefact of the release (lists, shared resources) and of each run it
 * serves (the run directory's artefacts.json) exists with its size and hash, identity, gzip and br;
 * the lists agree with the index; every run's model and timestep resources are there.
 * Returns the problems found (empty when whole) and, when something is served, what it is.
 */
export async function inspectServedTree(distDir: string): Promise<{ problems: string[]; served?: ServedTree }> {
  const problems: string[] = [];
  const link = path.join(distDir, CURRENT_LINK);
  const linkStat = await lstat(link).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!linkStat) return { problems }; // nothing served yet: allowed, never a broken one
  if (!linkStat.isSymbolicLink()) return { problems: ["dist/current is not a symbolic link"] };
  const target = await readlink(link);
  if (!/^releases\/[^/]+$/.test(target) || path.basename(target).startsWith(".tmp-")) problems.push(`dist/current points at ${target}, not at releases/<id>`);
  const release = path.basename(target);
  const indexBody = await readIfExists(path.join(distDir, target, INDEX_FILE));
  if (!indexBody) return { problems: [...problems, `dist/current -> ${target}, which has no ${INDEX_FILE}`] };
  let index: ReleaseIndex;
  try {
    index = await readReleaseIndex(distDir, path.resolve(distDir, target)); // index.json and its run chunks, checked
  } catch (error) {
    return { problems: [...problems, `${target}: ${(error as Error).message}`] };
  }
  if (index.release !== release) problems.push(`index.release is ${index.release} but dist/current points at ${release}`);

  // The release's own artefacts: lists and shared resources.
  const bodies = await verifyArtefacts(distDir, index.artefacts, `release ${release}`, problems);
  for (const [list, key] of Object.entries(index.lists)) {
    if (!index.artefacts[key]) problems.push(`list ${list} (${key}) is not an artefact of the release`);
  }
  for (const [name, key] of Object.entries(index.resources)) {
    if (!index.artefacts[key]) problems.push(`resource ${name} -> ${key} is not an artefact of the release`);
  }
  const reftimesBody = bodies.get(index.lists.reftimes);
  if (reftimesBody) {
    const reftimesJson: unknown = JSON.parse(reftimesBody.toString("utf8"));
    if (JSON.stringify(reftimesJson) !== JSON.stringify([{ reftimes: index.reftimes }])) {
      problems.push(`reftimes.json ${JSON.stringify(reftimesJson)} differs from index.reftimes ${JSON.stringify(index.reftimes)}`);
    }
  }
  if (JSON.stringify([...index.reftimes].sort().reverse()) !== JSON.stringify(index.reftimes)) problems.push("index.reftimes is not newest first");
  if (JSON.stringify(Object.keys(index.runs).sort()) !== JSON.stringify([...index.reftimes].sort())) problems.push("index.runs and index.reftimes name different reftimes");

  // Each served run: its directory's artefact list, every artefact in it, its model and its resources.
  const models = new Map<string, AshModel>();
  for (const [reftime, run] of Object.entries(index.runs)) {
    const where = `run ${reftime} (${run.dir})`;
    if (!/^runs\/[^/]+$/.test(run.dir) || path.basename(run.dir).startsWith(".tmp-")) {
      problems.push(`${where}: not a run directory of dist`);
      continue;
    }
    const listBody = await readIfExists(path.join(distDir, run.dir, RUN_ARTEFACTS_FILE));
    if (!listBody) {
      problems.push(`${where}: ${RUN_ARTEFACTS_FILE} missing`);
      continue;
    }
    const list = RunArtefacts.safeParse(JSON.parse(listBody.toString("utf8")));
    if (!list.success) {
      problems.push(`${where}: ${RUN_ARTEFACTS_FILE} breaks the RunArtefacts schema`);
      continue;
    }
    if (list.data.reftime !== reftime) problems.push(`${where}: ${RUN_ARTEFACTS_FILE} is for ${list.data.reftime}`);
    if (contentHash(list.data.artefacts) !== run.contentSha256) problems.push(`${where}: contentSha256 ${run.contentSha256} is not the hash of its artefacts (${contentHash(list.data.artefacts)})`);
    const runBodies = await verifyArtefacts(distDir, list.data.artefacts, where, problems, run.dir);
    for (const [name, key] of Object.entries(list.data.resources)) {
      if (!list.data.artefacts[key]) problems.push(`${where}: resource ${name} -> ${key} is not one of its artefacts`);
      if (!name.startsWith(`${reftime}/`)) problems.push(`${where}: resource ${name} is not under its reftime`);
    }
    if (run.png !== undefined && !list.data.artefacts[run.png]) problems.push(`${where}: png ${run.png} is not one of its artefacts`);
    const body = runBodies.get(run.json);
    if (!body) {
      problems.push(`${where}: model ${run.json} is not readable`);
      continue;
    }
    const model = AshModel.safeParse(JSON.parse(body.toString("utf8")));
    if (!model.success) {
      problems.push(`${where}: model breaks the AshModel schema`);
      continue;
    }
    if (model.data.meta.reftime !== reftime) problems.push(`${where}: model says reftime ${model.data.meta.reftime}`);
    for (const group of model.data.layergroups) {
      for (const layer of group.layers) {
        if (layer.type !== "KML") continue;
        for (const step of layer.timesteps) {
          const name = resourceNameOf(step.url);
          if (!name || !list.data.resources[name]) problems.push(`${where}: timestep ${step.time} of ${layer.name} has no resource (${step.url})`);
        }
      }
    }
    models.set(reftime, model.data);
  }
  return { problems, served: { release, index, models } };
}

/**
 * What `dist/current` serves now, as a server would read it (index, then each run's artefact list and
 * model), without the integrity checks; undefined when nothing is served or the release was replaced
 * while it was being read. Throws when the release still served cannot be read.
 */
export async function readServed(distDir: string): Promise<ServedTree | undefined> {
  let index: ReleaseIndex;
  try {
    index = await readReleaseIndex(distDir, path.join(distDir, CURRENT_LINK));
  } catch (error) {
    const missing = error as NodeJS.ErrnoException;
    if (missing.code === "ENOENT" && missing.path?.endsWith(INDEX_FILE)) return undefined; // no release yet
    throw error;
  }
  const models = new Map<string, AshModel>();
  for (const [reftime, run] of Object.entries(index.runs)) {
    try {
      const list = RunArtefacts.parse(JSON.parse(await readFile(path.join(distDir, run.dir, RUN_ARTEFACTS_FILE), "utf8")));
      const file = list.artefacts[run.json]?.identity.file;
      if (!file) throw new Error(`no artefact ${run.json}`);
      models.set(reftime, AshModel.parse(JSON.parse(await readFile(path.join(distDir, file), "utf8"))));
    } catch (error) {
      // Only a problem if the release is still the one served (else it was replaced while we read).
      const now = await readlink(path.join(distDir, CURRENT_LINK)).catch(() => "");
      if (path.basename(now) !== index.release) return undefined;
      throw new Error(`release ${index.release} is served but the model of ${reftime} is unreadable: ${(error as Error).message}`);
    }
  }
  return { release: index.release, index, models };
}

/** `./resources?name=<name>` to `<name>`. */
export function resourceNameOf(url: string | undefined): string | undefined {
  const match = /^\.\/resources\?name=(.+)$/.exec(url ?? "");
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/** Times of each KML layer of a served model, by layer name. */
export function layerTimes(model: AshModel): Map<string, string[]> {
  return new Map(model.layergroups.flatMap((g) => g.layers.map((l) => [l.name, l.timesteps.map((s) => s.time)] as const)));
}

/** Every `.tmp-*` entry anywhere under `dir`, relative to it. */
export async function findTemporaries(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    const entries = await readdir(path.join(dir, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const child = path.join(relative, entry.name);
      if (entry.name.startsWith(".tmp-")) found.push(child);
      if (entry.isDirectory()) await visit(child);
    }
  };
  await visit("");
  return found.sort();
}

// ---------------------------------------------------------------------------------------------
// The CLI as a child process

export interface SpawnedBuild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

export function spawnCli(args: readonly string[]): SpawnedBuild {
  const child = spawn("./bin/ashcast", [...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited };
}

export function spawnBuild(runsDir: string, distDir: string): SpawnedBuild {
  return spawnCli(["build", "--runs", runsDir, "--out", distDir, "--public-url", PUBLIC_URL]);
}
