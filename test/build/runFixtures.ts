/**
 * Test helpers for the build tests: temp workspaces, run folders written the way forecasters (and the
 * model chain) write them, real inputs from /work/shared/data/real, and a reader of the published
 * release that follows `dist/current` exactly as the server would.
 * No mocks: everything is real files in a directory under os.tmpdir(), removed by `cleanup()`.
 */
import { copyFile, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AshModel, type RunType } from "../../src/contract/ashModel.ts";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { RUN_ARTEFACTS_FILE, RunArtefacts, type Artefact, type ListArtefact, type ReleaseIndex } from "../../src/contract/releaseIndex.ts";

export const REAL_DATA = "/work/shared/data/real";
export const REAL_VOLCANO_XML = path.join(REAL_DATA, "snappy/volcano.xml");
export const REAL_THREDDS_CAPABILITIES = path.join(REAL_DATA, "wms-capabilities/thredds-ncwms-1.3.0-time-list.xml");
export const REAL_MAPSERVER_CAPABILITIES = path.join(REAL_DATA, "wms-capabilities/mapserver-1.3.0-time-period.xml");

/** The layer of the real MapServer document whose time Dimension is `1995-01-01/2015-12-31/PT5M`. */
export const MAPSERVER_LAYER = "nexrad-n0r-wmst";
export const MAPSERVER_BASE_URL = "http://mesonet.agron.iastate.edu/cgi-bin/wms/nexrad/n0r-t.cgi";
/** A named layer of the real THREDDS document (potential_temperature), times listed one by one. */
export const THREDDS_LAYER = "T";
export const THREDDS_BASE_URL = "http://dataserver.nccs.nasa.gov/thredds/wms/seasonal/ocn_ana_3D_ll";

/** Description that the build must derive from the real volcano.xml (see describeEruption's doc). */
export const ASKJA_DESCRIPTION =
  "Askja (65.03°N, 16.75°W, 1516 m a.s.l.): eruption at 2016-11-03 08:00 UTC, ash column 0–7000 m above the vent (top 8516 m a.s.l.), mass eruption rate 100000 kg/s.";

export const PUBLIC_URL = "https://ash.example.org/volcanicashforecast/0.1";

const HOUR_MS = 3_600_000;

/** `YYYY-MM-DDTHH:MM:SSZ` of an instant. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `ms` of an ISO instant (throws on nonsense, so a typo in a test fails loudly). */
export function ms(text: string): number {
  const value = Date.parse(text);
  if (!Number.isFinite(value)) throw new Error(`not an instant: ${text}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Workspaces and clocks

export interface Workspace {
  root: string;
  runsDir: string;
  distDir: string;
  cleanup(): Promise<void>;
}

/** A fresh temp directory with an empty `runs/` (dist/ is left for the build to create). */
export async function makeWorkspace(prefix = "ashcast-build-"): Promise<Workspace> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  const runsDir = path.join(root, "runs");
  await mkdir(runsDir);
  return { root, runsDir, distDir: path.join(root, "dist"), cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** A clock that always says `at`. */
export const fixedClock = (at: string): (() => Date) => () => new Date(at);

// ---------------------------------------------------------------------------------------------
// Run folders

/**
 * Fields of run.json to set or override. A key given as `undefined` is removed (JSON drops it), so
 * `{ type: undefined }` writes a run.json without a type.
 */
export type ManifestOverrides = Record<string, unknown>;

export interface KmlRunOptions {
  type?: RunType;
  /** As written in run.json (any accepted spelling); default 2024-05-01T12:00:00Z. */
  reftime?: string;
  description?: string;
  /** File name of the KML, default advisory.kml. */
  kmlFile?: string;
  /** Extra text in the Document name, to make two runs' content differ. */
  label?: string;
  manifest?: ManifestOverrides;
}

export interface WrittenKmlRun {
  dir: string;
  folder: string;
  /** Normalised reftime. */
  reftime: string;
  /** The two times of the KML (begin of each Folder's TimeSpan). */
  times: [string, string];
  kmlFile: string;
  /** Placemark name of each time's feature: the per-time KML must hold its own and not the other. */
  featureAt: Record<string, string>;
}

/** Name of the placemark valid from `time` in twoFolderKml. */
export const featureName = (time: string): string => `ash-cloud-${time.replace(/[-:]/g, "")}`;

/**
 * A KML with one untimed placemark (the vent) and two Folders, each with a TimeSpan and one polygon:
 * [t0, t0+6h) and [t0+6h, t0+12h).
 */
export function twoFolderKml(reftimeMs: number, label = ""): string {
  const t0 = iso(reftimeMs);
  const t6 = iso(reftimeMs + 6 * HOUR_MS);
  const t12 = iso(reftimeMs + 12 * HOUR_MS);
  const folder = (name: string, begin: string, end: string, ring: string) => `
    <Folder>
      <name>${name}</name>
      <TimeSpan><begin>${begin}</begin><end>${end}</end></TimeSpan>
      <Placemark>
        <name>${featureName(begin)}</name>
        <Polygon><outerBoundaryIs><LinearRing><coordinates>${ring}</coordinates></LinearRing></outerBoundaryIs></Polygon>
      </Placemark>
    </Folder>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>Test ash advisory${label ? ` ${label}` : ""}</name>
    <Placemark>
      <name>vent</name>
      <Point><coordinates>-19.70,63.98</coordinates></Point>
    </Placemark>${folder("Observation", t0, t6, "-20.0,63.8 -19.0,63.8 -19.0,64.2 -20.0,64.2 -20.0,63.8")}${folder("Forecast +6H", t6, t12, "-19.0,64.0 -17.0,64.0 -17.0,64.8 -19.0,64.8 -19.0,64.0")}
  </Document>
</kml>
`;
}

function manifestText(base: Record<string, unknown>, overrides: ManifestOverrides = {}): string {
  return `${JSON.stringify({ ...base, ...overrides }, null, 2)}\n`;
}

/** A run folder with run.json and a KML of two timed Folders. */
export async function writeKmlRun(runsDir: string, folder: string, options: KmlRunOptions = {}): Promise<WrittenKmlRun> {
  const dir = path.join(runsDir, folder);
  await mkdir(dir, { recursive: true });
  const reftimeText = options.reftime ?? "2024-05-01T12:00:00Z";
  const reftimeMs = ms(reftimeText);
  const kmlFile = options.kmlFile ?? "advisory.kml";
  await writeFile(path.join(dir, kmlFile), twoFolderKml(reftimeMs, options.label));
  await writeFile(
    path.join(dir, "run.json"),
    manifestText(
      {
        type: options.type ?? "Exercise",
        reftime: reftimeText,
        description: options.description ?? `Test run ${folder}`,
        layergroups: [{ name: "Forecaster advisory", layers: [{ type: "KML", name: "Ash areas", file: kmlFile }] }],
      },
      options.manifest,
    ),
  );
  const times: [string, string] = [iso(reftimeMs), iso(reftimeMs + 6 * HOUR_MS)];
  return { dir, folder, reftime: iso(reftimeMs), times, kmlFile, featureAt: Object.fromEntries(times.map((t) => [t, featureName(t)])) };
}

export interface WmsRunOptions {
  type?: RunType;
  reftime?: string;
  manifest?: ManifestOverrides;
  /** Replaces the capabilities text before it is written (for broken variants of the real file). */
  editCapabilities?: (xml: string) => string;
  /** File name of the capabilities in the folder; default capabilities.xml. */
  capabilitiesFile?: string;
}

export interface WrittenWmsRun {
  dir: string;
  folder: string;
  reftime: string;
  layer: string;
  baseUrl: string;
  capabilitiesFile: string;
}

/**
 * A WMS run on the real MapServer capabilities (time `1995-01-01/2015-12-31/PT5M`). The layer is
 * given by `wms_layer`; base_url has no query, so timestep urls take `?TIME=`.
 * Default reftime 2006-06-23T00:00:00Z: the default 72 h window holds 865 five-minute steps.
 */
export async function writeMapServerRun(runsDir: string, folder: string, options: WmsRunOptions = {}): Promise<WrittenWmsRun> {
  const dir = path.join(runsDir, folder);
  await mkdir(dir, { recursive: true });
  const capabilitiesFile = options.capabilitiesFile ?? "capabilities.xml";
  const real = await readFile(REAL_MAPSERVER_CAPABILITIES, "latin1");
  await writeFile(path.join(dir, capabilitiesFile), options.editCapabilities ? options.editCapabilities(real) : real, "latin1");
  const reftimeText = options.reftime ?? "2006-06-23T00:00:00Z";
  await writeFile(
    path.join(dir, "run.json"),
    manifestText(
      {
        type: options.type ?? "Exercise",
        reftime: reftimeText,
        description: `Radar run ${folder}`,
        layergroups: [
          { name: "Radar", layers: [{ type: "WMS", name: "NEXRAD reflectivity", base_url: MAPSERVER_BASE_URL, capabilities: capabilitiesFile, wms_layer: MAPSERVER_LAYER }] },
        ],
      },
      options.manifest,
    ),
  );
  return { dir, folder, reftime: iso(ms(reftimeText)), layer: MAPSERVER_LAYER, baseUrl: MAPSERVER_BASE_URL, capabilitiesFile };
}

/**
 * A WMS run on the real THREDDS ncWMS capabilities (time Dimension: a comma list of monthly times
 * 1993-01-01T12:00:00Z ... 2015-07-01T12:00:00Z). The layer is named by LAYERS= in base_url only.
 */
export async function writeThreddsRun(runsDir: string, folder: string, options: WmsRunOptions = {}): Promise<WrittenWmsRun> {
  const dir = path.join(runsDir, folder);
  await mkdir(dir, { recursive: true });
  const capabilitiesFile = options.capabilitiesFile ?? "capabilities.xml";
  const real = await readFile(REAL_THREDDS_CAPABILITIES, "utf8");
  await writeFile(path.join(dir, capabilitiesFile), options.editCapabilities ? options.editCapabilities(real) : real);
  const reftimeText = options.reftime ?? "2015-06-30T00:00:00Z";
  const baseUrl = `${THREDDS_BASE_URL}?SERVICE=WMS&REQUEST=GetMap&VERSION=1.3.0&LAYERS=${THREDDS_LAYER}&STYLES=boxfill/rainbow&CRS=CRS:84&FORMAT=image/png&TRANSPARENT=true`;
  await writeFile(
    path.join(dir, "run.json"),
    manifestText(
      {
        type: options.type ?? "Exercise",
        reftime: reftimeText,
        description: `Ocean analysis run ${folder}`,
        layergroups: [{ name: "Ocean", layers: [{ type: "WMS", name: "Potential temperature", base_url: baseUrl, capabilities: capabilitiesFile }] }],
      },
      options.manifest,
    ),
  );
  return { dir, folder, reftime: iso(ms(reftimeText)), layer: THREDDS_LAYER, baseUrl, capabilitiesFile };
}

/** The listed times of a layer of the real THREDDS document, normalised and sorted. */
export async function threddsListedTimes(layer = THREDDS_LAYER): Promise<string[]> {
  const xml = await readFile(REAL_THREDDS_CAPABILITIES, "utf8");
  const at = xml.indexOf(`<Name>${layer}</Name>`);
  if (at < 0) throw new Error(`layer ${layer} not in the THREDDS document`);
  const dimension = /<Dimension name="time"[^>]*>([\s\S]*?)<\/Dimension>/.exec(xml.slice(at));
  if (!dimension) throw new Error(`layer ${layer} has no time Dimension`);
  return [...new Set(dimension[1]!.split(",").map((t) => iso(ms(t.trim()))))].sort();
}

/**
 * A run with the real volcano.xml, a KML, and a run.json WITHOUT description: the build must take the
 * description from volcano.xml. Default reftime 2016-11-03T00:00:00Z (model_start_time of the file).
 */
export async function writeVolcanoRun(runsDir: string, folder: string, options: Omit<KmlRunOptions, "description"> = {}): Promise<WrittenKmlRun> {
  const written = await writeKmlRun(runsDir, folder, { reftime: "2016-11-03T00:00:00Z", ...options, manifest: { description: undefined, ...options.manifest } });
  await copyFile(REAL_VOLCANO_XML, path.join(written.dir, "volcano.xml"));
  return written;
}

/** Rewrites run.json of a folder through `edit` (parsed JSON in, JSON out). */
export async function editManifest(runDir: string, edit: (manifest: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const file = path.join(runDir, "run.json");
  const manifest = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  await writeFile(file, manifestText(edit(manifest)));
}

// ---------------------------------------------------------------------------------------------
// The published release

export type Encoding = "identity" | "gzip" | "br";

export interface Release {
  id: string;
  /** Absolute path of the release directory `dist/current` points at. */
  dir: string;
  index: ReleaseIndex;
  /** Every artefact served: the release's own and each published run's (from its artefacts.json), with the Last-Modified served. */
  artefacts: Record<string, ListArtefact>;
  /** Every resource name served (shared and per run) to its artefact key. */
  resources: Record<string, string>;
  artefact(key: string): ListArtefact;
  /** The stored body of an artefact, in one of its encodings. */
  body(key: string, encoding?: Encoding): Promise<Buffer>;
  text(key: string): Promise<string>;
  json(key: string): Promise<unknown>;
  /** The artefact key of a `/resources?name=` name. */
  resourceKey(name: string): string;
  /** The AshModel served for a reftime, parsed with the schema. */
  model(reftime: string): Promise<AshModel>;
}

/** Follows `dist/current`, reads index.json and its run chunks as the server does (checked with the contract's schemas). */
export async function readRelease(distDir: string): Promise<Release> {
  const link = path.join(distDir, "current");
  if (!(await lstat(link)).isSymbolicLink()) throw new Error(`${link} is not a symlink`);
  const dir = path.resolve(distDir, await readlink(link));
  const index = await readReleaseIndex(distDir, dir);
  const artefacts: Record<string, ListArtefact> = { ...index.artefacts };
  const resources: Record<string, string> = { ...index.resources };
  for (const run of Object.values(index.runs)) {
    const list = RunArtefacts.parse(JSON.parse(await readFile(path.join(distDir, run.dir, RUN_ARTEFACTS_FILE), "utf8")));
    for (const [key, entry] of Object.entries(list.artefacts)) artefacts[key] = { ...entry, modified: run.modified };
    Object.assign(resources, list.resources);
  }
  const artefact = (key: string): ListArtefact => {
    const found = artefacts[key];
    if (!found) throw new Error(`no artefact ${key} in release ${index.release}`);
    return found;
  };
  const body = async (key: string, encoding: Encoding = "identity"): Promise<Buffer> => {
    const stored = artefact(key)[encoding];
    if (!stored) throw new Error(`artefact ${key} has no ${encoding} body`);
    return readFile(path.join(distDir, stored.file));
  };
  const resourceKey = (name: string): string => {
    const key = resources[name];
    if (!key) throw new Error(`no resource ${name} in release ${index.release}`);
    return key;
  };
  return {
    id: path.basename(dir),
    dir,
    index,
    artefacts,
    resources,
    artefact,
    body,
    text: async (key) => (await body(key)).toString("utf8"),
    json: async (key) => JSON.parse((await body(key)).toString("utf8")) as unknown,
    resourceKey,
    model: async (reftime) => {
      const run = index.runs[reftime];
      if (!run) throw new Error(`reftime ${reftime} is not published in release ${index.release}`);
      return AshModel.parse(JSON.parse((await body(run.json)).toString("utf8")));
    },
  };
}

/** The run directory (`runs/<compact>-<hash>`) holding an artefact, from its identity file. */
export const runDirOf = (artefact: Artefact): string => artefact.identity.file.split("/").slice(0, 2).join("/");

/** The `name=` of a resource url `./resources?name=...`. */
export function resourceNameOf(url: string): string {
  const prefix = "./resources?name=";
  if (!url.startsWith(prefix)) throw new Error(`not a resource url: ${url}`);
  return decodeURIComponent(url.slice(prefix.length));
}

/** Every file under `dir` (relative path → size and mtime), symlinks as their target: to prove nothing was written. */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (sub: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.join(sub, entry.name);
      const stats = await lstat(path.join(dir, rel));
      if (entry.isDirectory()) {
        out[`${rel}/`] = "dir";
        await walk(rel);
      } else if (entry.isSymbolicLink()) {
        out[rel] = `-> ${await readlink(path.join(dir, rel))}`;
      } else {
        out[rel] = `${stats.size} ${stats.mtimeMs}`;
      }
    }
  };
  await walk("");
  return out;
}
