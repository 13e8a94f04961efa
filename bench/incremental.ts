/**
 * Benchmark: the cost of rebuilding after a change to one run, with 10 runs present and with 1,000.
 *
 *   npm run bench:incremental -- [--runs 10,1000] [--repeats 7] [--cli-repeats 5] [--no-docs]
 *
 * For each N it generates N realistic run folders in a temporary directory (distinct reftimes, a KML
 * advisory with four timed folders of ~50-point polygons, one run in ten with SnapPy's volcano.xml),
 * builds them once (the full build, timed), then, interleaving the N's so that the load of a shared
 * machine falls on all of them alike, R times: changes one file of one run (its description, or one
 * coordinate of its KML) and rebuilds. It also times builds where nothing changed (which must not
 * publish). Builds run in-process and one at a time, with a forced GC before each when available.
 * Then, C times per N, the same change published by `bin/ashcast build` as a process of its own, as an
 * operator runs it (start-up and module loading included).
 *
 * Reported: median and p90 per N, the ratio of the medians largest-N / smallest-N (the smallest N is
 * the reference measured in the same run), a split of the rebuild into stages taken from the build's
 * own log lines (no change to src/), what the cold rebuild's scan did (BuildResult.scan: folders listed,
 * files hashed), the sizes of the per-release lists, and the peak heap. The section
 * "## Incremental rebuild: one changed run among 10 vs 1,000" of docs/benchmarks.md is (re)written with
 * the figures unless --no-docs is given. Timings belong here, never in tests.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { build, type BuildResult } from "../src/build/build.ts";
import { MAX_CHANGELOG_EVENTS } from "../src/build/changelog.ts";
// The tests' seeded mulberry32, so every benchmark run builds the same inputs.
import { seededRandom } from "../test/build/crashFixtures.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const VOLCANO_XML = "/work/shared/data/real/snappy/volcano.xml";
const DOCS_FILE = path.join(REPO, "docs", "benchmarks.md");
const SECTION = "## Incremental rebuild: one changed run among 10 vs 1,000";
const PUBLIC_URL = "https://ashcast.example/volcanicashforecast/0.1";
const HOUR = 3_600_000;
const BASE_REFTIME = Date.UTC(2021, 0, 1, 0);

// ---------------------------------------------------------------------------------------------------
// Options

interface Options {
  runs: number[];
  repeats: number;
  /** Rebuilds per N by `bin/ashcast build` as a process; 0: none. */
  cliRepeats: number;
  docs: boolean;
}

const USAGE = "usage: npm run bench:incremental -- [--runs 10,1000] [--repeats 7] [--cli-repeats 5] [--no-docs]";

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { runs: [10, 1000], repeats: 7, cliRepeats: 5, docs: true };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--runs" && value !== undefined) {
      options.runs = value.split(",").map((v) => Number(v.trim()));
      i++;
    } else if (flag === "--repeats" && value !== undefined) {
      options.repeats = Number(value);
      i++;
    } else if (flag === "--cli-repeats" && value !== undefined) {
      options.cliRepeats = Number(value);
      i++;
    } else if (flag === "--no-docs") {
      options.docs = false;
    } else {
      throw new Error(`unknown argument ${flag ?? ""}; ${USAGE}`);
    }
  }
  if (!options.runs.length || options.runs.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--runs takes positive integers, e.g. --runs 10,1000");
  if (!Number.isInteger(options.repeats) || options.repeats < 1) throw new Error("--repeats takes a positive integer");
  if (!Number.isInteger(options.cliRepeats) || options.cliRepeats < 0) throw new Error("--cli-repeats takes a whole number (0: no process rebuilds)");
  options.runs = [...new Set(options.runs)].sort((a, b) => a - b);
  return options;
}

// ---------------------------------------------------------------------------------------------------
// Realistic run folders

const VOLCANOES = [
  { name: "Hekla", lat: 63.98, lon: -19.7 },
  { name: "Katla", lat: 63.63, lon: -19.05 },
  { name: "Grímsvötn", lat: 64.42, lon: -17.33 },
  { name: "Eyjafjallajökull", lat: 63.63, lon: -19.62 },
  { name: "Bárðarbunga", lat: 64.64, lon: -17.53 },
  { name: "Öræfajökull", lat: 64.0, lon: -16.65 },
  { name: "Jan Mayen (Beerenberg)", lat: 71.08, lon: -8.16 },
] as const;
/** The volcano SnapPy's volcano.xml describes (runs that carry it are drawn for it). */
const ASKJA = { name: "Askja", lat: 65.03, lon: -16.75 } as const;
const TYPES = ["Exercise", "Exercise", "Rehearsal", "Exercise", "Real Eruption"] as const;
const BANDS = ["SFC/FL200", "FL200/350", "FL350/550"] as const;
const STEPS = [0, 6, 12, 18] as const;
const RING_POINTS = 50;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, "Z");
const xml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export interface RunSpec {
  index: number;
  folder: string;
  reftime: number;
  type: string;
  volcano: { name: string; lat: number; lon: number };
  withVolcanoXml: boolean;
}

export function runSpec(index: number): RunSpec {
  const reftime = BASE_REFTIME + index * 6 * HOUR; // four runs a day, all reftimes distinct
  const withVolcanoXml = index % 10 === 3;
  const volcano = withVolcanoXml ? ASKJA : VOLCANOES[index % VOLCANOES.length]!;
  const slug = volcano.name.replace(/æ/g, "ae").replace(/[ðÐ]/g, "d").normalize("NFD").replace(/\p{M}/gu, "").replace(/[^A-Za-z]+/g, "-").replace(/^-|-$/g, "").toLowerCase();
  const folder = `${iso(reftime).slice(0, 13).replace("T", "-")}z-${slug}`;
  return { index, folder, reftime, type: TYPES[index % TYPES.length]!, volcano, withVolcanoXml };
}

export function runJson(spec: RunSpec, revision: number): string {
  const when = iso(spec.reftime);
  const edit = revision ? ` Revised by the duty forecaster (revision ${revision}).` : "";
  return `${JSON.stringify(
    {
      $schema: "../../templates/run.schema.json",
      type: spec.type,
      reftime: when,
      description: `${spec.volcano.name}: ash forecast drawn by the duty forecaster from the ${when.slice(11, 13)}Z analysis. Plume drifting east-north-east, top near FL350.${edit}`,
      layergroups: [{ name: "Forecaster advisory", layers: [{ type: "KML", name: "Ash areas", file: "advisory.kml" }] }],
    },
    null,
    2,
  )}\n`;
}

/** A closed, counter-clockwise ring of ~50 jittered points around an ellipse; `nudge` moves its northernmost vertex. */
function ring(random: () => number, lon: number, lat: number, halfWidth: number, halfHeight: number, nudge: number): string {
  const points: Array<[number, number]> = [];
  for (let i = 0; i < RING_POINTS - 1; i++) {
    const angle = (i / (RING_POINTS - 1)) * 2 * Math.PI;
    const wobble = 0.85 + 0.3 * random();
    points.push([lon + halfWidth * wobble * Math.cos(angle), lat + halfHeight * wobble * Math.sin(angle)]);
  }
  const top = Math.round((RING_POINTS - 1) / 4); // angle π/2: the northern edge
  points[top]![1] += nudge;
  points.push(points[0]!);
  return points.map(([x, y]) => `${x.toFixed(4)},${y.toFixed(4)},0`).join(" ");
}

export function advisoryKml(spec: RunSpec, revision: number): string {
  const random = seededRandom(spec.index * 7919 + 17);
  const { name, lat, lon } = spec.volcano;
  const folders = STEPS.map((step, s) => {
    const begin = iso(spec.reftime + step * HOUR);
    const end = iso(spec.reftime + (step + 6) * HOUR);
    const drift = step / 6;
    const placemarks = BANDS.slice(0, s === 0 ? 2 : 3).map((band, b) => {
      const nudge = s === 0 && b === 0 ? revision * 0.01 : 0; // a forecaster dragging one vertex
      const coordinates = ring(random, lon + 1.2 * drift + 0.3 * b, lat + 0.25 * drift + 0.1 * b, 0.7 + 0.5 * drift - 0.1 * b, 0.4 + 0.25 * drift - 0.05 * b, nudge);
      return `      <Placemark>
        <name>${band}</name>
        <styleUrl>#band-${b}</styleUrl>
        <ExtendedData><Data name="band"><value>${band}</value></Data></ExtendedData>
        <Polygon><tessellate>1</tessellate><outerBoundaryIs><LinearRing>
          <coordinates>${coordinates}</coordinates>
        </LinearRing></outerBoundaryIs></Polygon>
      </Placemark>`;
    });
    return `    <Folder>
      <name>${step === 0 ? "Observation" : `Forecast +${step}H`}</name>
      <description>${xml(`Valid ${begin.slice(11, 16)} to ${end.slice(11, 16)} UTC`)}</description>
      <TimeSpan><begin>${begin}</begin><end>${end}</end></TimeSpan>
${placemarks.join("\n")}
    </Folder>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>${xml(`${name} ash advisory ${iso(spec.reftime).slice(0, 13)}Z (IMO & VAAC London)`)}</name>
    <Style id="band-0"><LineStyle><color>ff000000</color><width>1.5</width></LineStyle><PolyStyle><color>7f00a5ff</color></PolyStyle></Style>
    <Style id="band-1"><LineStyle><color>ff000000</color><width>1.5</width></LineStyle><PolyStyle><color>7f0000ff</color></PolyStyle></Style>
    <Style id="band-2"><LineStyle><color>ff000000</color><width>1.5</width></LineStyle><PolyStyle><color>7f800080</color></PolyStyle></Style>
    <Placemark>
      <name>${xml(name)}</name>
      <Point><coordinates>${lon},${lat}</coordinates></Point>
    </Placemark>
${folders.join("\n")}
  </Document>
</kml>
`;
}

export async function writeRun(runsDir: string, spec: RunSpec): Promise<void> {
  const dir = path.join(runsDir, spec.folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "run.json"), runJson(spec, 0));
  await writeFile(path.join(dir, "advisory.kml"), advisoryKml(spec, 0));
  if (spec.withVolcanoXml) await copyFile(VOLCANO_XML, path.join(dir, "volcano.xml"));
}

// ---------------------------------------------------------------------------------------------------
// Measuring

const gc: (() => void) | undefined = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  try {
    v8.setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
})();

/** Peak V8 heap during a build, sampled every 2 ms (and at its ends); the heap is collected before each build. */
let peakHeap = 0;
const sampleHeap = () => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
};

/** A build's wall time and the times (ms from its start) of the log lines that mark its stages. */
interface Timed {
  ms: number;
  result: BuildResult;
  /** "rebuilding <folder>": scan done, the changed run is about to be read. */
  rebuilding?: number;
  /** First changelog event line: the run is written, published runs decided, models compared. */
  event?: number;
  /** "published release": lists, state, index written, symlink switched, old releases collected. */
  published?: number;
  peakHeap: number;
}

/**
 * `watch` (the watcher's events and the release it published last): the build is told which folder changed
 * and reuses the state it holds in memory, as `ashcast watch` does; absent, a build as `ashcast build` runs it.
 */
async function timedBuild(runsDir: string, distDir: string, now: Date, watch?: { changedFolders: ReadonlySet<string>; previous: BuildResult["current"] }): Promise<Timed> {
  gc?.();
  const marks: Omit<Timed, "ms" | "result" | "peakHeap"> = {};
  peakHeap = 0;
  sampleHeap();
  const sampler = setInterval(sampleHeap, 2);
  const start = performance.now();
  const result = await build({
    runsDir,
    distDir,
    publicUrl: PUBLIC_URL,
    now: () => now,
    ...(watch ?? {}),
    log: (line) => {
      const at = performance.now() - start;
      if (line.startsWith("rebuilding ")) marks.rebuilding ??= at;
      else if (/^(published|updated|withdrawn) /.test(line) && !line.startsWith("published release")) marks.event ??= at;
      else if (line.startsWith("published release")) marks.published = at;
    },
  });
  const ms = performance.now() - start;
  clearInterval(sampler);
  sampleHeap();
  return { ms, result, ...marks, peakHeap };
}

function quantile(values: readonly number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
const median = (values: readonly number[]) => {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Case {
  n: number;
  root: string;
  runsDir: string;
  distDir: string;
  specs: RunSpec[];
  generateMs: number;
  full?: Timed;
  rebuilds: Timed[];
  /** The same change published as `ashcast watch` does: the build is told which folder its events named. */
  watchRebuilds: Timed[];
  noChange: Timed[];
  /** One-run rebuilds by `bin/ashcast build` as a process: wall ms of the whole process. */
  cliRebuilds: number[];
  listBytes: Record<string, number>;
  runsDirEntries: number;
}

const STATE_CHUNKS = "dist/state/: the build state's chunks (one per bucket of folders, 64 at most)";
const INDEX_CHUNKS = "dist/index/: the run list's chunks (one per bucket of reftimes, 64 at most)";
const LIST_FILES = ["state.json", "index.json", "report.json", "reftimes.json", "changelog.rss", "resources/volcanoes.json"] as const;

async function releaseListSizes(distDir: string): Promise<Record<string, number>> {
  const release = path.resolve(distDir, await readlink(path.join(distDir, "current")));
  const sizes: Record<string, number> = {};
  const { runChunks } = JSON.parse(await readFile(path.join(release, "index.json"), "utf8")) as { runChunks: string[] };
  let chunkBytes = 0;
  for (const name of runChunks) chunkBytes += (await stat(path.join(distDir, "index", name))).size;
  sizes[INDEX_CHUNKS] = chunkBytes;
  const { chunks: stateChunks } = JSON.parse(await readFile(path.join(release, "state.json"), "utf8")) as { chunks: string[] };
  let stateBytes = 0;
  for (const name of stateChunks) stateBytes += (await stat(path.join(distDir, "state", name))).size;
  sizes[STATE_CHUNKS] = stateBytes;
  for (const file of LIST_FILES) {
    for (const variant of ["", ".br"]) {
      const size = await stat(path.join(release, file + variant)).then((s) => s.size, () => undefined);
      if (size !== undefined) sizes[file + variant] = size;
    }
  }
  return sizes;
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`benchmark invariant broken: ${message}`);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const tmp = await mkdtemp(path.join(os.tmpdir(), "ashcast-bench-"));
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  let clock = Date.UTC(2024, 4, 1, 12);
  const tick = () => new Date((clock += 60_000)); // each build a minute later: distinct release ids
  try {
    progress(`ashcast incremental benchmark: runs ${options.runs.join(", ")}, ${options.repeats} repeats, gc ${gc ? "forced" : "not available"}, in ${tmp}`);

    // A throwaway build first, so that module loading and JIT warm-up are charged to no N.
    {
      const warm = path.join(tmp, "warmup");
      for (let i = 0; i < 3; i++) await writeRun(path.join(warm, "runs"), runSpec(i));
      await build({ runsDir: path.join(warm, "runs"), distDir: path.join(warm, "dist"), publicUrl: PUBLIC_URL, now: tick });
      await rm(warm, { recursive: true, force: true });
    }

    const cases: Case[] = [];
    for (const n of options.runs) {
      const root = path.join(tmp, `n${n}`);
      const runsDir = path.join(root, "runs");
      const distDir = path.join(root, "dist");
      await mkdir(runsDir, { recursive: true });
      const specs = Array.from({ length: n }, (_, i) => runSpec(i));
      const t0 = performance.now();
      for (const spec of specs) await writeRun(runsDir, spec);
      const generateMs = performance.now() - t0;
      const c: Case = { n, root, runsDir, distDir, specs, generateMs, rebuilds: [], watchRebuilds: [], noChange: [], cliRebuilds: [], listBytes: {}, runsDirEntries: 0 };
      c.full = await timedBuild(runsDir, distDir, tick());
      check(c.full.result.published && c.full.result.report.counts.published === n, `full build of ${n} runs published ${c.full.result.report.counts.published}`);
      check(c.full.result.report.counts.errors === 0, `full build of ${n} runs has errors: ${JSON.stringify(c.full.result.report.runs.flatMap((r) => r.issues).slice(0, 3))}`);
      progress(`N=${n}: generated in ${generateMs.toFixed(0)} ms, full build ${c.full.ms.toFixed(0)} ms`);
      cases.push(c);
    }

    // The feed keeps the last MAX_CHANGELOG_EVENTS changes, whatever N is. A full build of 1,000 runs fills it;
    // a service with 10 runs fills it after as many changes. Every N starts the timed rebuilds with a full
    // history, as a service that has run for a while has, so that only N differs between them.
    for (const c of cases) {
      let events = c.full!.result.current.state?.events.length ?? 0;
      for (let k = 0; events < MAX_CHANGELOG_EVENTS; k++) {
        const spec = c.specs[k % c.n]!;
        await writeFile(path.join(c.runsDir, spec.folder, "run.json"), runJson(spec, 10_000 + k));
        const result = await build({ runsDir: c.runsDir, distDir: c.distDir, publicUrl: PUBLIC_URL, now: tick });
        events = result.current.state?.events.length ?? MAX_CHANGELOG_EVENTS;
      }
      progress(`N=${c.n}: changelog history full (${events} events)`);
    }

    // Interleaved: repeat r changes one run in every N before moving on, so drift hits all N alike.
    // One unrecorded round first (the first incremental build of a process runs colder code paths).
    for (let r = 0; r <= options.repeats; r++) {
      for (const c of cases) {
        const spec = c.specs[Math.floor(((r * 0.618034 + 0.5) % 1) * c.n)]!; // a different run each time
        const revision = r + 1;
        const dir = path.join(c.runsDir, spec.folder);
        const changed = r % 2 === 0 ? "run.json" : "advisory.kml";
        await writeFile(path.join(dir, changed), changed === "run.json" ? runJson(spec, revision) : advisoryKml(spec, revision));
        const timed = await timedBuild(c.runsDir, c.distDir, tick());
        check(timed.result.published, `N=${c.n}: the rebuild after changing ${spec.folder}/${changed} did not publish`);
        check(timed.result.report.counts.rebuilt === 1, `N=${c.n}: ${timed.result.report.counts.rebuilt} runs rebuilt instead of 1`);
        check(timed.result.report.counts.errors === 0, `N=${c.n}: the changed run has errors`);
        check(timed.rebuilding !== undefined && timed.published !== undefined, `N=${c.n}: the build's log lines were not seen`);
        if (r > 0) c.rebuilds.push(timed);
        await writeFile(path.join(dir, changed), changed === "run.json" ? runJson(spec, revision + 1000) : advisoryKml(spec, revision + 1000));
        const watched = await timedBuild(c.runsDir, c.distDir, tick(), { changedFolders: new Set([spec.folder]), previous: timed.result.current });
        check(watched.result.published && watched.result.report.counts.rebuilt === 1, `N=${c.n}: the watch-path rebuild did not rebuild exactly one run`);
        if (r > 0) c.watchRebuilds.push(watched);
        progress(`N=${c.n} rebuild ${r === 0 ? "warm-up" : r} (${changed} of ${spec.folder}): ${timed.ms.toFixed(1)} ms, watch path ${watched.ms.toFixed(1)} ms`);
      }
    }
    for (let r = 0; r < options.repeats; r++) {
      for (const c of cases) {
        const timed = await timedBuild(c.runsDir, c.distDir, tick());
        check(!timed.result.published, `N=${c.n}: a build with no change published a release`);
        c.noChange.push(timed);
      }
    }
    // The same change published by the CLI as an operator runs it: a process per build, interleaved.
    for (let r = 0; r < options.cliRepeats; r++) {
      for (const c of cases) {
        const spec = c.specs[Math.floor(((r * 0.381966 + 0.25) % 1) * c.n)]!;
        await writeFile(path.join(c.runsDir, spec.folder, "run.json"), runJson(spec, 20_000 + r));
        const start = performance.now();
        const cli = spawnSync(path.join(REPO, "bin", "ashcast"), ["build", "--runs", c.runsDir, "--out", c.distDir, "--public-url", PUBLIC_URL], { encoding: "utf8" });
        const ms = performance.now() - start;
        check(cli.status === 0, `N=${c.n}: bin/ashcast build exited ${cli.status}: ${cli.stderr}`);
        check(/published release .*: \d+ run\(s\), 1 rebuilt/.test(cli.stdout), `N=${c.n}: bin/ashcast build did not publish one rebuilt run: ${cli.stdout.slice(0, 300)}`);
        c.cliRebuilds.push(ms);
        progress(`N=${c.n} bin/ashcast build ${r + 1}: ${ms.toFixed(0)} ms`);
      }
    }
    for (const c of cases) {
      c.listBytes = await releaseListSizes(c.distDir);
      c.runsDirEntries = (await readdir(path.join(c.distDir, "runs"))).length;
    }

    const report = render(cases, options);
    process.stdout.write(`${report.table}\n\n${report.ratios}\n\n${report.stages}\n\n${report.sizes}\n`);
    if (options.docs) {
      await writeDocs(report.section);
      progress(`wrote ${path.relative(REPO, DOCS_FILE)}`);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Reporting

const fmt = (ms: number) => (Number.isNaN(ms) ? "–" : ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const kib = (bytes: number | undefined) => (bytes === undefined ? "–" : bytes >= 10 * 1024 ? `${(bytes / 1024).toFixed(0)} KiB` : `${(bytes / 1024).toFixed(1)} KiB`);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

function render(cases: Case[], options: Options) {
  const first = cases[0]!;
  const last = cases[cases.length - 1]!;
  const rebuildMs = (c: Case) => c.rebuilds.map((t) => t.ms);
  const watchMs = (c: Case) => c.watchRebuilds.map((t) => t.ms);
  const noChangeMs = (c: Case) => c.noChange.map((t) => t.ms);
  const rebuildHeap = (c: Case) => median(c.rebuilds.map((t) => t.peakHeap));

  const table = [
    "| runs present | full build (ms) | one-run rebuild median (ms) | p90 (ms) | same, watch path (ms) | p90 (ms) | no-change build median (ms) | p90 (ms) | peak heap, full build (MiB) | peak heap, rebuild (MiB) |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...cases.map(
      (c) =>
        `| ${c.n.toLocaleString("en")} | ${fmt(c.full!.ms)} | ${fmt(median(rebuildMs(c)))} | ${fmt(quantile(rebuildMs(c), 0.9))} | ${fmt(median(watchMs(c)))} | ${fmt(quantile(watchMs(c), 0.9))} | ${fmt(median(noChangeMs(c)))} | ${fmt(quantile(noChangeMs(c), 0.9))} | ${mib(c.full!.peakHeap)} | ${mib(rebuildHeap(c))} |`,
    ),
  ].join("\n");

  const pairs = cases.length > 1 ? `${last.n.toLocaleString("en")} / ${first.n.toLocaleString("en")}` : "";
  const ratios =
    cases.length > 1
      ? [
          `Ratio ${pairs} of the medians: one-run rebuild **${ratio(median(rebuildMs(last)), median(rebuildMs(first)))}** ` +
            `(watch path, told the changed folder: **${ratio(median(watchMs(last)), median(watchMs(first)))}**; median of the per-repeat ratios ` +
            `${ratio(median(last.watchRebuilds.map((t, i) => t.ms / (first.watchRebuilds[i]?.ms ?? Number.NaN))), 1)}), ` +
            `no-change build ${ratio(median(noChangeMs(last)), median(noChangeMs(first)))}, full build ${ratio(last.full!.ms, first.full!.ms)} ` +
            `(per run: ${fmt(last.full!.ms / last.n)} vs ${fmt(first.full!.ms / first.n)} ms).`,
          ...(last.cliRebuilds.length
            ? [
                `\`bin/ashcast build\` as a process (start-up included, ${options.cliRepeats} per N): ${cases.map((c) => `${fmt(median(c.cliRebuilds))} ms with ${c.n.toLocaleString("en")} runs`).join(", ")}, ` +
                  `ratio **${ratio(median(last.cliRebuilds), median(first.cliRebuilds))}**.`,
              ]
            : []),
          `What the one-run rebuild's scan did (\`BuildResult.scan\`, last rebuild): ${cases.map((c) => scanText(c)).join("; ")}.`,
        ].join("\n\n")
      : "(one N only: no ratio)";

  function scanText(c: Case): string {
    const scan = c.rebuilds.at(-1)?.result.scan as BuildResult["scan"] | undefined; // absent in builds before it was counted
    return scan ? `${c.n.toLocaleString("en")} runs: ${scan.folders} folders statted, ${scan.listed} listed, ${scan.hashed} file(s) read and hashed` : `${c.n}: –`;
  }

  // Stages of the one-run rebuild, from the build's own log lines (medians over the repeats).
  const stage = (c: Case, from: (t: Timed) => number | undefined, to: (t: Timed) => number | undefined) =>
    median(c.rebuilds.flatMap((t) => {
      const a = from(t);
      const b = to(t);
      return a === undefined || b === undefined ? [] : [b - a];
    }));
  const stageRows: Array<[string, (c: Case) => number]> = [
    ["start → `rebuilding <run>`: lock, sweep, load the previous index and state (their chunks checked by content hash), scan runs/ (an lstat of every folder and file; a folder listed only when its own stat changed, a file read only when its stat did)", (c) => stage(c, () => 0, (t) => t.rebuilding)],
    ["→ first changelog line: read, validate, render and write the changed run; decide what is served; compare old and new model", (c) => stage(c, (t) => t.rebuilding, (t) => t.event)],
    ["→ `published release`: report, digest, lists + gzip/brotli, the changed state and index chunks, state.json, index.json (fsync), switch, garbage collection", (c) => stage(c, (t) => t.event, (t) => t.published)],
    ["→ return", (c) => stage(c, (t) => t.published, (t) => t.ms)],
  ];
  const stages = [
    `| stage of the one-run rebuild (median ms) | ${cases.map((c) => `${c.n.toLocaleString("en")} runs`).join(" | ")} |${cases.length > 1 ? " difference |" : ""}`,
    `|---|${cases.map(() => "---:").join("|")}|${cases.length > 1 ? "---:|" : ""}`,
    ...stageRows.map(([name, f]) => `| ${name} | ${cases.map((c) => fmt(f(c))).join(" | ")} |${cases.length > 1 ? ` ${fmt(f(last) - f(first))} |` : ""}`),
  ].join("\n");

  const files = [...new Set(cases.flatMap((c) => Object.keys(c.listBytes)))];
  const sizes = [
    `| file of each release | ${cases.map((c) => `${c.n.toLocaleString("en")} runs`).join(" | ")} |`,
    `|---|${cases.map(() => "---:").join("|")}|`,
    ...files.map((file) => `| ${file} | ${cases.map((c) => kib(c.listBytes[file])).join(" | ")} |`),
    `| entries of dist/runs/ | ${cases.map((c) => String(c.runsDirEntries)).join(" | ")} |`,
  ].join("\n");

  const machine = [
    `- Machine: ${os.cpus().length} CPU(s) (nproc ${nproc()}), ${os.cpus()[0]?.model ?? "unknown CPU"}, ${mib(os.totalmem())} MiB RAM, ${os.type()} ${os.release()}; shared and noisy, hence ratios.`,
    `- Code: ${codeVersion()}.`,
    `- Node ${process.version} (the pinned npm package \`node\`), TypeScript run by its native type stripping; GC ${gc ? "forced before each build" : "not forced (no --expose-gc)"}; measured ${new Date().toUTCString()} (\`date\`: ${dateCommand()}).`,
    `- Peak heap: V8 heapUsed sampled every 2 ms during a build, after a forced GC (median over the rebuilds); the process's peak RSS over the whole benchmark was ${mib(process.resourceUsage().maxRSS * 1024)} MiB.`,
    `- Repeats: ${options.repeats} recorded rebuilds and ${options.repeats} no-change builds per N, after one unrecorded warm-up rebuild; N's interleaved; p90 is nearest-rank (with ${options.repeats} repeats, the ${ordinal(Math.ceil(0.9 * options.repeats))} fastest${Math.ceil(0.9 * options.repeats) === options.repeats ? ", i.e. the slowest" : ""}).`,
  ].join("\n");

  const command = `npm run bench:incremental -- --runs ${options.runs.join(",")} --repeats ${options.repeats} --cli-repeats ${options.cliRepeats}`;
  const section = `${SECTION}

Issue acceptance: rebuilding after a change to one run must cost about the same with 1,000 runs present as with 10.
Not a timed test: figures from a benchmark, as ratios against the 10-run case measured in the same process.

**What is measured.** \`bench/incremental.ts\` generates N run folders in a temporary directory (distinct
reftimes six hours apart, run.json + a KML advisory of four timed folders holding 2–3 polygons of ${RING_POINTS}
points each, as a forecaster draws them; one run in ten also carries SnapPy's real \`volcano.xml\`), runs the
full build, then ${options.repeats} times changes one file of one run (alternately the run.json description and one
vertex of the KML) and calls \`build()\` in-process, sequentially, timing wall clock with \`performance.now()\`.
A build where nothing changed (which must return \`published: false\`) is timed too: it is the floor every
build pays before any run is read. Every rebuild is checked to rebuild exactly one run, with no error.
Before the timed rebuilds every N is given a full changelog history (${MAX_CHANGELOG_EVENTS} events, by changing runs
one at a time): a full build of 1,000 runs fills it at once, and the feed's cost depends on its length, not on N.
The *watch path* is the same change published as \`ashcast watch\` publishes it: the build is told which
folder the watcher saw change and is handed the release it published last, so it neither scans the other
folders nor reads back the state it holds in memory.

${machine}

Reproduce (writes this section again):

\`\`\`sh
${command}
\`\`\`

${table}

${ratios}

Stages of the one-run rebuild, from the times at which \`build()\` logs its lines (no change to src/):

${stages}

Per-release files (identity bytes, and the brotli variant where one is written):

${sizes}

${reading(cases, stageRows)}
${GENERATED_END}
`;
  return { table, ratios, stages, sizes, section };
}

/** The interpretation, from this run's figures (the profile behind it is kept below the generated part). */
function reading(cases: Case[], stageRows: ReadonlyArray<readonly [string, (c: Case) => number]>): string {
  const first = cases[0]!;
  const last = cases[cases.length - 1]!;
  if (first === last) return "**Reading.** Only one N was measured: run with `--runs 10,1000` for the comparison.";
  const growth = median(last.rebuilds.map((t) => t.ms)) - median(first.rebuilds.map((t) => t.ms));
  const floor = median(last.noChange.map((t) => t.ms)) - median(first.noChange.map((t) => t.ms));
  const bytes = (c: Case) => (c.listBytes["state.json"] ?? 0) + (c.listBytes["index.json"] ?? 0) + (c.listBytes["report.json"] ?? 0);
  const grew = (i: number) => {
    const f = stageRows[i]?.[1];
    return f ? fmt(f(last) - f(first)) : "–";
  };
  const r = median(last.rebuilds.map((t) => t.ms)) / median(first.rebuilds.map((t) => t.ms));
  const watchRatio = median(last.watchRebuilds.map((t) => t.ms)) / median(first.watchRebuilds.map((t) => t.ms));
  const perRun = (median(last.watchRebuilds.map((t) => t.ms)) - median(first.watchRebuilds.map((t) => t.ms))) / (last.n - first.n);
  // Each repeat times both N back to back: the ratio within a repeat is the least sensitive to the machine's drift.
  const pairRatio = median(last.watchRebuilds.map((t, i) => t.ms / (first.watchRebuilds[i]?.ms ?? Number.NaN)));
  const cliRatio = last.cliRebuilds.length ? `; as a process, start-up included, ${(median(last.cliRebuilds) / median(first.cliRebuilds)).toFixed(2)}` : "";
  const criterion = `the acceptance criterion (about the same cost with ${last.n.toLocaleString("en")} runs as with ${first.n}: a ratio of at most 1.5)`;
  return `**Reading.** The service rebuilds on the watch path: \`ashcast start\` and \`ashcast watch\` keep the release they
published last in memory and are told by the file events which folders changed, so a change costs the changed run
(read, validate, render, compress and write its few artefacts: the second stage above moves by ${grew(1)} ms) and a
release made of what the last one had: the state's chunks and the index entries of unchanged runs are reused, only
the changed run's chunks (state and index) are written, and garbage collection deletes what the retired release
alone used without listing dist/. Ratio **${watchRatio.toFixed(2)}** on the watch path (median of the per-repeat ratios
${pairRatio.toFixed(2)}), about ${(perRun * 1000).toFixed(0)} µs per other published run: ${criterion} is **${watchRatio <= 1.5 ? "met" : "not met"}** there in this run.
What is still O(N) there is a pass over every folder or reftime, about a millisecond each at 1,000 runs: the
served-run decision, the changelog comparison, the report (one entry per folder, 0.1 MB written whole) and its digest,
the reftimes list, and the assembly of the index and state entries.
A cold \`ashcast build\` (ratio **${r.toFixed(2)}**: ${r <= 1.5 ? "within" : "above"} 1.5${cliRatio}) has no watcher to name what
changed. It stats every run folder and every file in it, but lists a folder again only when the folder's own mtime,
ctime or inode moved, and reads a file only when its size, mtime, ctime or inode did, trusting no time from the tick
in which the build began (${last.rebuilds.at(-1)?.result.scan?.listed ?? "–"} folder(s) listed and ${last.rebuilds.at(-1)?.result.scan?.hashed ?? "–"} file(s) hashed in the last rebuild with ${last.n.toLocaleString("en")} runs);
and it reads back the previous state and run list (${kib((last.listBytes[STATE_CHUNKS] ?? 0) + (last.listBytes[INDEX_CHUNKS] ?? 0))} of chunks at ${last.n.toLocaleString("en")} runs, checked by their
content hash rather than field by field): ${grew(0)} ms more before the changed run is read, which is also most of
the no-change build's growth (${fmt(floor)} ms). Neither part can go without missing changes or rebuilding the
release from less than it holds: a file edited in place moves its own times only, not its folder's, so every file
is statted (${last.n.toLocaleString("en")} folders and their files: a few thousand lstat calls), and the release lists every run, so
every run's state is read. The report entry of every folder, which the watch path keeps between builds, is made
again (in the third stage, which grows by ${grew(2)} ms).
With model-output runs, whose rebuild takes seconds (see "Publishing a full-size model run"), either growth is a
few percent of a rebuild. (Total growth of \`ashcast build\`: ${fmt(growth)} ms; state.json, index.json and report.json:
${kib(bytes(first))} → ${kib(bytes(last))}.)`;
}

function ordinal(k: number): string {
  return `${k}${k % 10 === 1 && k % 100 !== 11 ? "st" : k % 10 === 2 && k % 100 !== 12 ? "nd" : k % 10 === 3 && k % 100 !== 13 ? "rd" : "th"}`;
}

/** The commit measured, and whether src/ had uncommitted changes (read-only git commands). */
function codeVersion(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return `commit ${commit}${dirty ? " with uncommitted changes in src/" : ""}`;
  } catch {
    return "not a git checkout";
  }
}

function nproc(): string {
  try {
    return execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {
    return String(os.availableParallelism());
  }
}

function dateCommand(): string {
  try {
    return execFileSync("date", { encoding: "utf8" }).trim();
  } catch {
    return new Date().toString();
  }
}

/** Ends the part of our section the benchmark rewrites; what follows it (up to the next section) is kept. */
const GENERATED_END = "<!-- end of the figures written by bench/incremental.ts; the text below is kept when it rewrites them -->";

/** Writes our section into docs/benchmarks.md, keeping the other sections and our hand-written notes. */
async function writeDocs(section: string): Promise<void> {
  const existing = await readFile(DOCS_FILE, "utf8").catch(() => undefined);
  let text: string;
  if (existing === undefined) {
    text = `# Benchmarks\n\n${section}`;
  } else {
    const start = existing.indexOf(`${SECTION}\n`);
    if (start === -1) {
      text = `${existing.trimEnd()}\n\n${section}`;
    } else {
      const nextHeading = existing.slice(start + SECTION.length).search(/\n## /);
      const end = nextHeading === -1 ? existing.length : start + SECTION.length + nextHeading + 1;
      const ours = existing.slice(start, end);
      const marker = ours.indexOf(GENERATED_END);
      const kept = marker === -1 ? "" : ours.slice(marker + GENERATED_END.length).replace(/^\n/, "");
      const after = existing.slice(end);
      const ourText = `${`${section}${kept}`.trimEnd()}\n`;
      text = `${existing.slice(0, start)}${ourText}${after ? `\n${after}` : ""}`;
    }
  }
  await mkdir(path.dirname(DOCS_FILE), { recursive: true });
  await writeFile(DOCS_FILE, text);
}

// Run only when executed, so a profiling script can import the run generator.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
