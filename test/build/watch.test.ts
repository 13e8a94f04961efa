/**
 * `watchRuns` against real files and the real chokidar watcher: runs copied in slowly are never
 * published half-written, `*.part` files and folders wait until renamed, temporaries trigger
 * nothing, changes during a build are not lost, deleted runs are
 * withdrawn and bad runs are reported while the others stay served.
 * A poller reads `dist/current` every ~20 ms and records every release ever served.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { copyFile, mkdir, open, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { BuildResult } from "../../src/build/build.ts";
import { closeStepPool, stepPoolWorkers } from "../../src/build/stepPool.ts";
import { watchRuns, type WatchOptions, type Watcher } from "../../src/build/watch.ts";
import type { AshModel } from "../../src/contract/ashModel.ts";
import type { RunReport } from "../../src/contract/buildReport.ts";
import { UserError } from "../../src/errors.ts";
import {
  PUBLIC_URL,
  expectedTimes,
  inspectServedTree,
  layerName,
  layerTimes,
  makeTempDir,
  readServed,
  reftimeAt,
  removeDir,
  runFiles,
  runJson,
  seededRandom,
  sleep,
  waitFor,
  writeRun,
  type RunSpec,
  type ServedTree,
} from "./crashFixtures.ts";

const DEBOUNCE_MS = 150;
/** A bundled sample run's model output (EEMEP, NetCDF-4). */
const SAMPLE_RUN = new URL("../../runs/2026-03-14-hekla-exercise/", import.meta.url).pathname;
const SAMPLE_OUTPUT = "eemep_hour_20260314T060000.nc";
const STABILITY_MS = 300;
/** Long enough for any event chokidar would deliver to have started a build (stability + poll + debounce, twice over). */
const QUIET_MS = 2 * (STABILITY_MS + 100 + DEBOUNCE_MS);

// ---------------------------------------------------------------------------------------------
// What dist/current serves

type Sample = ServedTree;

/** Records every release ever served, sampling dist/current every ~20 ms. */
class ServedPoller {
  readonly releases = new Map<string, Sample>();
  readonly problems: string[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  private readonly distDir: string;

  constructor(distDir: string) {
    this.distDir = distDir;
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const sample = await readServed(this.distDir);
        if (sample && !this.releases.has(sample.release)) this.releases.set(sample.release, sample);
      } catch (error) {
        this.problems.push((error as Error).message);
      }
      await sleep(20);
    }
  }

  /** Every recorded release that serves `reftime`, with its model. */
  serving(reftime: string): Array<{ release: string; model: AshModel }> {
    return [...this.releases.values()].flatMap((s) => (s.models.has(reftime) ? [{ release: s.release, model: s.models.get(reftime)! }] : []));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

// ---------------------------------------------------------------------------------------------
// A watch session: runs/, dist/, the watcher, its build outcomes and a poller

interface Outcome {
  result?: BuildResult;
  error?: unknown;
}

interface Session {
  root: string;
  runsDir: string;
  distDir: string;
  watcher: Watcher;
  outcomes: Outcome[];
  logs: string[];
  poller: ServedPoller;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startSession(setup: (runsDir: string) => Promise<void>, options: { watch?: Partial<WatchOptions> } = {}): Promise<Session> {
  const root = await makeTempDir("watch");
  cleanups.push(() => removeDir(root));
  const runsDir = path.join(root, "runs");
  const distDir = path.join(root, "dist");
  await mkdir(runsDir, { recursive: true });
  await setup(runsDir);
  const outcomes: Outcome[] = [];
  const logs: string[] = [];
  const watcher = await watchRuns({
    runsDir,
    distDir,
    publicUrl: PUBLIC_URL,
    debounceMs: DEBOUNCE_MS,
    stabilityMs: STABILITY_MS,
    log: (line) => logs.push(line),
    onBuild: (outcome) => outcomes.push(outcome),
    ...options.watch,
  });
  cleanups.push(() => watcher.close());
  await watcher.idle();
  expect(outcomes.length, "the first build").toBeGreaterThanOrEqual(1);
  expect(outcomes[0]?.error).toBeUndefined();
  const poller = new ServedPoller(distDir);
  cleanups.push(() => poller.stop());
  return { root, runsDir, distDir, watcher, outcomes, logs, poller };
}

const spec = (hours: number, description: string, extra: Partial<RunSpec> = {}): RunSpec => ({
  reftime: reftimeAt(hours),
  description,
  steps: 3,
  layers: ["advisory.kml"],
  ...extra,
});

/** Layer name to its expected times: every layer of the run, every timestep. */
const wholeLayers = (run: RunSpec) => new Map(run.layers.map((file) => [layerName(file), expectedTimes(run)]));

const reportOf = (outcome: Outcome | undefined, folder: string): RunReport | undefined => outcome?.result?.report.runs.find((r) => r.folder === folder);

async function servedModel(distDir: string, reftime: string): Promise<AshModel | undefined> {
  return (await readServed(distDir).catch(() => undefined))?.models.get(reftime);
}

/** Waits until the served model of `reftime` satisfies `check`. */
async function waitServed(session: Session, reftime: string, what: string, check: (model: AshModel | undefined) => boolean, timeoutMs = 30_000): Promise<void> {
  await waitFor(what, async () => check(await servedModel(session.distDir, reftime)), timeoutMs);
}

/**
 * Writes `body` in chunks with pauses, as a slow copy does: by default small chunks and pauses shorter
 * than the stability threshold; `chunks` splits it into that many parts instead. `stall`, when given, is
 * awaited once after the first chunk: a copy that stalls mid-file, so that a build surely sees it half-written.
 */
async function writeSlowly(file: string, body: string, random: () => number, options: { pauseMs?: [number, number]; chunks?: number; stall?: () => Promise<void> } = {}): Promise<number> {
  const { pauseMs = [40, 120], chunks, stall } = options;
  const handle = await open(file, "w");
  let written = 0;
  try {
    for (let at = 0; at < body.length; written++) {
      const size = chunks ? Math.ceil(body.length / chunks) : 250 + Math.floor(random() * 500);
      await handle.write(body.slice(at, at + size));
      at += size;
      if (written === 0) await stall?.();
      await sleep(pauseMs[0] + Math.floor(random() * (pauseMs[1] - pauseMs[0])));
    }
  } finally {
    await handle.close();
  }
  return written;
}

async function expectWholeTree(distDir: string): Promise<void> {
  const { problems, served } = await inspectServedTree(distDir);
  expect(problems).toEqual([]);
  expect(served).toBeDefined();
}

// ---------------------------------------------------------------------------------------------

describe("watchRuns: files arriving slowly", () => {
  test("a run copied in slowly is never published half-written, and is published once whole", async () => {
    const random = seededRandom(20240501);
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const b = spec(6, "Run B, copied slowly.", { steps: 4, layers: ["advisory.kml", "cloud.kml"] });
    const buildsBefore = s.outcomes.length;

    await mkdir(path.join(s.runsDir, "run-b"));
    let chunks = 0;
    // The copy stalls once, mid-file, until a build has looked at the half-copied run.
    const stall = () => waitFor("a build of half-copied run B", async () => s.outcomes.slice(buildsBefore).some((o) => reportOf(o, "run-b")));
    for (const [name, body] of runFiles(b)) {
      if (name === "run.json") await writeFile(path.join(s.runsDir, "run-b", name), body);
      else chunks += await writeSlowly(path.join(s.runsDir, "run-b", name), body, random, chunks === 0 ? { stall } : {});
    }
    expect(chunks).toBeGreaterThan(8);
    await waitServed(s, b.reftime, "run B published", (model) => model !== undefined);
    await s.watcher.idle();
    // The poller samples on its own schedule: on a loaded machine it may not have read the release serving B yet.
    await waitFor("the poller to sample a release serving run B", () => s.poller.serving(b.reftime).length > 0);
    await s.poller.stop();

    expect(s.poller.problems).toEqual([]);
    // Builds ran while B was half-copied, and none of them published it.
    const during = s.outcomes.slice(buildsBefore).filter((o) => reportOf(o, "run-b") && reportOf(o, "run-b")!.status !== "published");
    expect(during.length, "a build saw run B half-copied").toBeGreaterThan(0);
    for (const o of during) expect(reportOf(o, "run-b")!.status).toBe("invalid");
    // Every release that ever served B served all of it.
    const served = s.poller.serving(b.reftime);
    expect(served.length).toBeGreaterThan(0);
    for (const { release, model } of served) {
      expect(layerTimes(model), `release ${release}`).toEqual(wholeLayers(b));
      expect(model.meta.timesteps.map((t) => t.time), `release ${release}`).toEqual(expectedTimes(b));
      expect(model.meta.description).toBe(b.description);
    }
    for (const sample of s.poller.releases.values()) expect(sample.models.has(a.reftime), `run A served by ${sample.release}`).toBe(true);
    await expectWholeTree(s.distDir);
    // The publish latency of the change, in whole milliseconds.
    expect(s.logs.some((line) => /^published \d+ ms after the last change was written$/.test(line)), s.logs.join("\n")).toBe(true);
  });

  test("a new folder whose file is still being written starts no build by itself: its files' events do, once they stop growing", async () => {
    const s = await startSession((runs) => writeRun(runs, "run-a", spec(0, "Run A.")));
    await s.watcher.idle();
    const buildsBefore = s.outcomes.length;
    const folder = path.join(s.runsDir, "run-c");
    await mkdir(folder);
    const growing = await open(path.join(folder, "advisory.kml"), "w");
    try {
      // Written to every 100 ms for longer than any debounce: neither the folder's event nor the file's starts a build.
      for (let i = 0; i < QUIET_MS / 100; i++) {
        await growing.write(`<!-- ${i} -->\n`);
        await sleep(100);
      }
      expect(s.outcomes.slice(buildsBefore).filter((o) => reportOf(o, "run-c") !== undefined)).toEqual([]);
    } finally {
      await growing.close();
    }
    await s.poller.stop();
  });

  test("a run rewritten slowly in place keeps its last good version served until the new one is whole", async () => {
    const random = seededRandom(77);
    const before = spec(0, "Run A, first version.", { steps: 3, layers: ["advisory.kml", "cloud.kml"] });
    const s = await startSession((runs) => writeRun(runs, "run-a", before));
    const after: RunSpec = { ...before, description: "Run A, second version.", steps: 6 };

    // run.json first (a change that starts a build), then each KML slowly, truncated as a copy does; the
    // first stalls mid-file until a build has seen the half-rewritten run.
    const stall = () => waitFor("a build of half-rewritten run A", async () => s.outcomes.some((o) => reportOf(o, "run-a")?.status === "kept-last-good"));
    let first = true;
    for (const [name, body] of runFiles(after)) {
      if (name === "run.json") await writeFile(path.join(s.runsDir, "run-a", name), body);
      else await writeSlowly(path.join(s.runsDir, "run-a", name), body, random, first ? { stall } : {});
      if (name !== "run.json") first = false;
    }
    await waitServed(s, after.reftime, "the second version published", (model) => model?.meta.description === after.description && model.meta.timesteps.length === 6);
    await s.watcher.idle();
    await s.poller.stop();

    expect(s.poller.problems).toEqual([]);
    const keptLastGood = s.outcomes.filter((o) => reportOf(o, "run-a")?.status === "kept-last-good");
    expect(keptLastGood.length, "a build saw the run half-rewritten").toBeGreaterThan(0);
    const oldTimes = expectedTimes(before);
    const newTimes = expectedTimes(after);
    for (const { release, model } of s.poller.serving(before.reftime)) {
      // Each layer whole, in its old or its new version; never a run without its layers.
      const layers = layerTimes(model);
      expect([...layers.keys()].sort(), `release ${release}`).toEqual(before.layers.map(layerName).sort());
      for (const [name, times] of layers) expect([oldTimes, newTimes], `release ${release}, ${name}`).toContainEqual(times);
    }
    expect(s.poller.serving(before.reftime).length, "the run was served throughout").toBe(s.poller.releases.size);
    await expectWholeTree(s.distDir);
  });

  test("a NAME.part folder is never published, however slowly it fills; renamed, it is", async () => {
    const random = seededRandom(5);
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const b = spec(6, "Run B, uploaded as run-b.part.");
    const buildsBefore = s.outcomes.length;

    const staging = path.join(s.runsDir, "run-b.part");
    await mkdir(staging);
    for (const [name, body] of runFiles(b)) {
      // Long pauses (longer than the stability threshold) inside and between files.
      await writeSlowly(path.join(staging, name), body, random, { pauseMs: [STABILITY_MS + 150, STABILITY_MS + 300], chunks: 2 });
    }
    await sleep(QUIET_MS);
    expect(s.outcomes.length, "a change inside run-b.part started a build").toBe(buildsBefore);
    expect(await servedModel(s.distDir, b.reftime)).toBeUndefined();

    await rename(staging, path.join(s.runsDir, "run-b"));
    await waitServed(s, b.reftime, "run B published after the rename", (model) => model !== undefined);
    await s.watcher.idle();
    await s.poller.stop();
    expect(s.poller.problems).toEqual([]);
    for (const { release, model } of s.poller.serving(b.reftime)) expect(layerTimes(model), `release ${release}`).toEqual(wholeLayers(b));
    expect(reportOf(s.outcomes.at(-1), "run-b")?.status).toBe("published");
    await expectWholeTree(s.distDir);
  });

  test("a *.part file inside a run folder makes the run wait until it is renamed", async () => {
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const c = spec(12, "Run C, its KML still arriving.");
    const files = runFiles(c);
    const dir = path.join(s.runsDir, "run-c");
    await mkdir(dir);
    await writeFile(path.join(dir, "advisory.kml.part"), files.get("advisory.kml")!);
    await writeFile(path.join(dir, "run.json"), files.get("run.json")!);

    await waitFor("a build reporting run C as waiting", () => s.outcomes.some((o) => reportOf(o, "run-c")?.status === "waiting"));
    await s.watcher.idle();
    expect(await servedModel(s.distDir, c.reftime)).toBeUndefined();
    const waiting = s.outcomes.map((o) => reportOf(o, "run-c")).find((r) => r?.status === "waiting")!;
    expect(waiting.issues.map((i) => i.file)).toContain("run-c/advisory.kml.part");

    await rename(path.join(dir, "advisory.kml.part"), path.join(dir, "advisory.kml"));
    await waitServed(s, c.reftime, "run C published after the rename", (model) => model !== undefined);
    await s.watcher.idle();
    await s.poller.stop();
    expect(s.poller.problems).toEqual([]);
    for (const { release, model } of s.poller.serving(c.reftime)) expect(layerTimes(model), `release ${release}`).toEqual(wholeLayers(c));
    await expectWholeTree(s.distDir);
  });
});

describe("watchRuns: what does not start a build", () => {
  test("editor temporaries and hidden files start no build; a real change does", async () => {
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const buildsBefore = s.outcomes.length;
    const kml = runFiles(a).get("advisory.kml")!;

    const junk = [
      "run-a/.advisory.kml.swp",
      "run-a/.advisory.kml.swx",
      "run-a/advisory.kml~",
      "run-a/#advisory.kml#",
      "run-a/advisory.kml.tmp",
      "run-a/.~lock.run.json#",
      "run-a/.DS_Store",
      ".DS_Store",
      ".hidden-run/run.json",
    ];
    await mkdir(path.join(s.runsDir, ".hidden-run"));
    for (let round = 0; round < 2; round++) {
      for (const file of junk) await writeFile(path.join(s.runsDir, file), `${kml}<!-- round ${round} -->`);
      await sleep(STABILITY_MS);
    }
    await rm(path.join(s.runsDir, "run-a", "advisory.kml~"));
    await sleep(QUIET_MS);
    expect(s.outcomes.length, `builds started by temporaries: ${s.logs.filter((l) => l.startsWith("change:")).join(" | ")}`).toBe(buildsBefore);

    // The watcher is alive: a real change is built, and the temporaries are not inputs of the run.
    const a2 = { ...a, description: "Run A, edited." };
    await writeFile(path.join(s.runsDir, "run-a", "run.json"), runJson(a2));
    await waitServed(s, a.reftime, "the edit published", (model) => model?.meta.description === a2.description);
    await s.watcher.idle();
    const report = reportOf(s.outcomes.at(-1), "run-a")!;
    expect(report.status).toBe("published");
    expect(report.issues).toEqual([]);
    expect(s.outcomes.at(-1)!.result!.report.runs.map((r) => r.folder)).toEqual(["run-a"]);
    await expectWholeTree(s.distDir);
  });
});

describe("watchRuns: changes, withdrawals and bad runs", () => {
  test("changes arriving during a build start another build after it: none is lost", async () => {
    const RUNS = 12;
    // Heavier runs than elsewhere, so that the build outlasts the watcher's delay (stability + debounce).
    const specs = Array.from({ length: RUNS }, (_, i) => spec(6 * i, `Run ${i}, version 0.`, { steps: 5, layers: ["advisory.kml", "cloud.kml"] }));
    const folder = (i: number) => `run-${String(i).padStart(2, "0")}`;
    let onLog: ((line: string) => void) | undefined;
    /** Builds started (the watcher logs `change: ...` as a build triggered by changes starts). */
    let startedBuilds = 1;
    const s = await startSession(
      async (runs) => {
        for (const [i, run] of specs.entries()) await writeRun(runs, folder(i), run);
      },
      {
        watch: {
          log: (line) => {
            if (line.startsWith("change: ")) startedBuilds++;
            onLog?.(line);
          },
        },
      },
    );

    // Start a long build (every run changed), and while it runs (it has rebuilt its second run: runs
    // are handled in name order, after all were scanned), change two runs in quick succession.
    const x = 3;
    const y = RUNS - 2;
    let startedAtTrigger = 0;
    let resolveTriggered!: (buildsDone: number) => void;
    const triggered = new Promise<number>((resolve) => (resolveTriggered = resolve));
    onLog = (line) => {
      if (!line.startsWith(`rebuilding ${folder(1)}: `)) return;
      onLog = undefined;
      const buildsDone = s.outcomes.length;
      startedAtTrigger = startedBuilds;
      void (async () => {
        await writeFile(path.join(s.runsDir, folder(x), "run.json"), runJson({ ...specs[x]!, description: "X changed during a build." }));
        await sleep(30);
        await writeFile(path.join(s.runsDir, folder(y), "run.json"), runJson({ ...specs[y]!, description: "Y changed during a build." }));
        resolveTriggered(buildsDone);
      })();
    };
    for (const [i, run] of specs.entries()) await writeFile(path.join(s.runsDir, folder(i), "run.json"), runJson({ ...run, description: `Run ${i}, version 1.` }));
    const buildsDoneAtChange = await triggered;
    const changedAt = performance.now();
    await waitFor("the build running during the changes to end", () => s.outcomes.length > buildsDoneAtChange);
    const endedAfter = Math.round(performance.now() - changedAt);
    // Diagnostic only: the next build started at once (a change arrived during the build) or after the debounce.
    await new Promise((resolve) => setImmediate(resolve));
    const nextAtOnce = startedBuilds > startedAtTrigger;
    console.log(`[watch] the build running when X and Y changed ended ${endedAfter} ms later; the next build ${nextAtOnce ? "started at once" : "started after the debounce"}`);

    await waitServed(s, specs[x]!.reftime, "X's change published", (model) => model?.meta.description === "X changed during a build.");
    await waitServed(s, specs[y]!.reftime, "Y's change published", (model) => model?.meta.description === "Y changed during a build.");
    await s.watcher.idle();
    await s.poller.stop();
    expect(s.poller.problems).toEqual([]);
    // The build that was running when they changed finished, and another one after it published them.
    expect(s.outcomes.length).toBeGreaterThanOrEqual(buildsDoneAtChange + 2);
    expect(s.outcomes.every((o) => o.error === undefined)).toBe(true);
    const served = await readServed(s.distDir);
    for (const [i, run] of specs.entries()) {
      if (i === x || i === y) continue;
      expect(served!.models.get(run.reftime)?.meta.description).toBe(`Run ${i}, version 1.`);
    }
    await expectWholeTree(s.distDir);
  });

  // BUG (src/build/build.ts updateRun + src/build/releaseStore.ts createStagingDir().commit): a run's
  // directory is named after the inputs hash of the scan, but its files are read again later; a file
  // changed in between gives a `runs/<reftime>-<hash of v1>` directory holding v2's bytes. When the
  // folder goes back to v1, the commit keeps that directory ("same name, same bytes") and the index
  // describes v1 (sha256, size) while the files served are v2's.
  test("a file changed during a build, then changed back, is served with its own bytes", async () => {
    const a = spec(0, "Run A.");
    const v1 = spec(6, "Run B, version 1.");
    const v2 = { ...v1, description: "Run B, version 2, saved while a build was reading the runs." };
    let onProgress: ((total: number, folder: string) => void) | undefined;
    const s = await startSession((runs) => writeRun(runs, "run-a", a), { watch: { onProgress: (_done, total, folder) => onProgress?.(total, folder) } });

    // The build that finds run-b scans it as version 1; version 2 is saved before it reads run-b.
    onProgress = (total, folder) => {
      if (total !== 2 || folder !== "run-a") return;
      onProgress = undefined;
      writeFileSync(path.join(s.runsDir, "run-b", "run.json"), runJson(v2));
    };
    await writeRun(s.runsDir, "run-b", v1);
    await waitServed(s, v1.reftime, "version 2 published", (model) => model?.meta.description === v2.description);
    await sleep(QUIET_MS); // the events of run-b's files (held until stable) and their build
    await s.watcher.idle();
    expect(onProgress).toBeUndefined();
    const buildsBefore = s.outcomes.length;

    // The forecaster goes back to version 1.
    await writeFile(path.join(s.runsDir, "run-b", "run.json"), runJson(v1));
    await waitFor("a build after the undo", () => s.outcomes.length > buildsBefore);
    await sleep(QUIET_MS);
    await s.watcher.idle();
    const { problems, served } = await inspectServedTree(s.distDir);
    expect(problems).toEqual([]);
    expect(served?.models.get(v1.reftime)?.meta.description).toBe(v1.description);
  });

  test("deleting a run folder withdraws the run", async () => {
    const a = spec(0, "Run A.");
    const b = spec(6, "Run B, to be withdrawn.");
    const s = await startSession(async (runs) => {
      await writeRun(runs, "run-a", a);
      await writeRun(runs, "run-b", b);
    });
    expect(await servedModel(s.distDir, b.reftime)).toBeDefined();

    await rm(path.join(s.runsDir, "run-b"), { recursive: true });
    await waitFor("run B withdrawn", async () => (await readServed(s.distDir))?.index.reftimes.includes(b.reftime) === false);
    await s.watcher.idle();
    const served = (await readServed(s.distDir))!;
    expect(served.index.reftimes).toEqual([a.reftime]);
    const changelog = await readFile(path.join(s.distDir, served.index.artefacts[served.index.lists.changelog]!.identity.file), "utf8");
    expect(changelog).toContain(`Withdrawn: Exercise run ${b.reftime}`);
    expect(s.outcomes.some((o) => o.result?.report.withdrawn.includes(b.reftime))).toBe(true);
    await expectWholeTree(s.distDir);
  });

  test("the runs directory swapped for another (mv runs runs.old; mv runs.new runs), then removed and restored: watching follows it", async () => {
    const a = spec(0, "Run A.");
    const b = spec(6, "Run B, in the new runs directory.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const fresh = path.join(s.root, "runs.new");
    await mkdir(fresh);
    await writeRun(fresh, "run-a", a);
    await writeRun(fresh, "run-b", b);
    await rename(s.runsDir, path.join(s.root, "runs.old"));
    await rename(fresh, s.runsDir);
    await waitFor("run B published from the new runs directory", async () => (await servedModel(s.distDir, b.reftime)) !== undefined, 20_000);
    // chokidar may report the new folders itself before the once-a-second look finds the directory replaced.
    await waitFor("the watcher to follow the replaced runs directory", () => s.logs.some((line) => line.includes("was replaced: watching it again")), 20_000);
    // Gone: the release stays served, and the watcher waits. Back with a new run: it is published.
    const aside = path.join(s.root, "runs.aside");
    await rename(s.runsDir, aside);
    await waitFor("the watcher to notice the runs directory gone", () => s.logs.some((line) => line.includes("is gone: the last release stays served")), 20_000);
    expect((await readServed(s.distDir))?.index.reftimes).toEqual([b.reftime, a.reftime]);
    const c = spec(12, "Run C, added while the runs directory was away.");
    await writeRun(aside, "run-c", c);
    await rename(aside, s.runsDir);
    await waitFor("run C published once the runs directory is back", async () => (await servedModel(s.distDir, c.reftime)) !== undefined, 20_000);
    await s.watcher.idle();
    await s.poller.stop();
    await expectWholeTree(s.distDir);
  });

  test("the runs directory replaced by an empty one (a mount that failed): nothing is withdrawn until a run folder appears", async () => {
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    await rename(s.runsDir, path.join(s.root, "runs.mounted"));
    await mkdir(s.runsDir); // the bare mount point
    await waitFor("the watcher to see it empty", () => s.logs.some((line) => line.includes("was replaced empty: nothing is withdrawn")), 20_000);
    await s.watcher.idle();
    expect((await readServed(s.distDir))?.index.reftimes).toEqual([a.reftime]);
    expect(s.outcomes.some((o) => o.result?.report.withdrawn.includes(a.reftime))).toBe(false);
    // The mount back (its folder appears in the mount point): built as usual, A still there.
    const b = spec(6, "Run B.");
    await writeRun(path.join(s.root, "runs.mounted"), "run-b", b);
    await rename(path.join(s.root, "runs.mounted", "run-a"), path.join(s.runsDir, "run-a"));
    await rename(path.join(s.root, "runs.mounted", "run-b"), path.join(s.runsDir, "run-b"));
    await waitFor("run B published", async () => (await servedModel(s.distDir, b.reftime)) !== undefined, 20_000);
    await s.watcher.idle();
    expect((await readServed(s.distDir))?.index.reftimes).toEqual([b.reftime, a.reftime]);
    await s.poller.stop();
    await expectWholeTree(s.distDir);
  });

  test("started on an empty runs directory while the release serves runs (a mount not there yet): no build until a run folder appears", async () => {
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    await s.watcher.close();
    await rename(path.join(s.runsDir, "run-a"), path.join(s.root, "run-a")); // the bare mount point
    const outcomes: Outcome[] = [];
    const logs: string[] = [];
    const again = await watchRuns({ runsDir: s.runsDir, distDir: s.distDir, publicUrl: PUBLIC_URL, debounceMs: DEBOUNCE_MS, stabilityMs: STABILITY_MS, log: (line) => logs.push(line), onBuild: (outcome) => outcomes.push(outcome) });
    cleanups.push(() => again.close());
    await again.idle();
    expect(logs.some((line) => line.includes(`the runs directory ${s.runsDir} is empty: nothing is withdrawn and the last release (1 run(s)) stays served`))).toBe(true);
    expect(outcomes).toEqual([]);
    expect((await readServed(s.distDir))?.index.reftimes).toEqual([a.reftime]);
    // The mount arrives: its folders are built as usual, A kept and B added.
    const b = spec(6, "Run B.");
    await writeRun(s.root, "run-b", b);
    await rename(path.join(s.root, "run-a"), path.join(s.runsDir, "run-a"));
    await rename(path.join(s.root, "run-b"), path.join(s.runsDir, "run-b"));
    await waitFor("run B published", async () => (await servedModel(s.distDir, b.reftime)) !== undefined, 20_000);
    await again.idle();
    expect((await readServed(s.distDir))?.index.reftimes).toEqual([b.reftime, a.reftime]);
    expect(outcomes.some((o) => o.result?.report.withdrawn.length)).toBe(false);
    await s.poller.stop();
    await expectWholeTree(s.distDir);
  });

  test("a bad run file is reported, watching goes on, and the other runs stay served", async () => {
    const a = spec(0, "Run A.");
    const b = spec(6, "Run B.");
    const s = await startSession(async (runs) => {
      await writeRun(runs, "run-a", a);
      await writeRun(runs, "run-b", b);
    });

    // B's KML broken: reported, B's last good version and A stay served.
    await writeFile(path.join(s.runsDir, "run-b", "advisory.kml"), '<?xml version="1.0"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>cut');
    await waitFor("a build reporting run B's broken KML", () => s.outcomes.some((o) => reportOf(o, "run-b")?.status === "kept-last-good"));
    const broken = s.outcomes.map((o) => reportOf(o, "run-b")).find((r) => r?.status === "kept-last-good")!;
    expect(broken.issues).toContainEqual(expect.objectContaining({ severity: "error", file: "run-b/advisory.kml" }));
    // A new run with a broken run.json: reported invalid, never served.
    const c = spec(12, "Run C.");
    await mkdir(path.join(s.runsDir, "run-c"));
    await writeFile(path.join(s.runsDir, "run-c", "advisory.kml"), runFiles(c).get("advisory.kml")!);
    await writeFile(path.join(s.runsDir, "run-c", "run.json"), runJson(c).slice(0, 40));
    await waitFor("a build reporting run C invalid", () => s.outcomes.some((o) => reportOf(o, "run-c")?.status === "invalid"));
    await s.watcher.idle();
    const invalid = s.outcomes.map((o) => reportOf(o, "run-c")).find((r) => r?.status === "invalid")!;
    expect(invalid.issues).toContainEqual(expect.objectContaining({ severity: "error", file: "run-c/run.json" }));
    let served = (await readServed(s.distDir))!;
    expect([...served.index.reftimes].sort()).toEqual([a.reftime, b.reftime]);
    expect(served.models.get(b.reftime)?.meta.description).toBe(b.description);

    // A build that fails outright (the lock is held by a live process) is reported; watching goes on.
    const holder: ChildProcess = spawn("sleep", ["30"], { stdio: "ignore" });
    cleanups.push(async () => void holder.kill("SIGKILL"));
    await writeFile(path.join(s.distDir, ".build.lock"), `${holder.pid}\n`);
    const buildsBefore = s.outcomes.length;
    await writeFile(path.join(s.runsDir, "run-a", "run.json"), runJson({ ...a, description: "Run A, edited while locked." }));
    await waitFor("a failed build reported", () => s.outcomes.slice(buildsBefore).some((o) => o.error !== undefined));
    const failure = s.outcomes.slice(buildsBefore).find((o) => o.error !== undefined)!.error;
    expect(failure).toBeInstanceOf(UserError);
    expect((failure as UserError).message).toContain(String(holder.pid));
    expect((await readServed(s.distDir))!.release).toBe(served.release);
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));

    // Fixed files are picked up: B and C published, A's edit too, and A was served all along.
    await writeRun(s.runsDir, "run-b", { ...b, description: "Run B, fixed." });
    await writeFile(path.join(s.runsDir, "run-c", "run.json"), runJson(c));
    await waitFor("B and C fixed and A's edit published", async () => {
      const now = await readServed(s.distDir);
      return (
        now?.models.get(b.reftime)?.meta.description === "Run B, fixed." &&
        now.models.get(c.reftime)?.meta.description === c.description &&
        now.models.get(a.reftime)?.meta.description === "Run A, edited while locked."
      );
    });
    await s.watcher.idle();
    await s.poller.stop();
    expect(s.poller.problems).toEqual([]);
    for (const sample of s.poller.releases.values()) {
      expect(sample.models.has(a.reftime), `run A served by ${sample.release}`).toBe(true);
      expect(sample.models.has(b.reftime), `run B served by ${sample.release}`).toBe(true);
    }
    served = (await readServed(s.distDir))!;
    expect(reportOf(s.outcomes.at(-1), "run-b")?.status).toBe("published");
    await expectWholeTree(s.distDir);
  });

  // BUG (src/build/scanRuns.ts inputsHash): the inputs hash covers only plain files, not the refused
  // entries (symbolic links, sub-directories), so a link added to a published run changes nothing:
  // the run is not validated again and the link is never reported, whereas a fresh build of the same
  // folder reports it as an error (and does not publish the run).
  test("a symbolic link dropped into a published run is reported", async () => {
    const a = spec(0, "Run A.");
    const s = await startSession((runs) => writeRun(runs, "run-a", a));
    const outside = path.join(s.root, "outside.kml");
    await writeFile(outside, runFiles(spec(6, "Outside runs/.")).get("advisory.kml")!);
    const buildsBefore = s.outcomes.length;

    await symlink(outside, path.join(s.runsDir, "run-a", "extra.kml"));
    await waitFor("a build after the link appeared", () => s.outcomes.length > buildsBefore);
    await s.watcher.idle();
    const report = reportOf(s.outcomes.at(-1), "run-a");
    expect(report?.issues).toContainEqual(expect.objectContaining({ severity: "error", file: "run-a/extra.kml" }));
  });
});

describe("watchRuns: the build's worker threads", () => {
  test("start when model output arrives, during the quiet time before its build, and not for a manifest edit", async () => {
    const workersBefore = process.env["ASHCAST_WORKERS"];
    process.env["ASHCAST_WORKERS"] = "1";
    cleanups.push(async () => {
      await closeStepPool();
      if (workersBefore === undefined) delete process.env["ASHCAST_WORKERS"];
      else process.env["ASHCAST_WORKERS"] = workersBefore;
    });
    const a = spec(0, "Run A.");
    // A quiet time long enough to look at the pool before the build it schedules.
    const s = await startSession((runs) => writeRun(runs, "run-a", a), { watch: { debounceMs: 2_000 } });
    await closeStepPool();
    const builds = s.outcomes.length;

    await writeFile(path.join(s.runsDir, "run-a", "run.json"), runJson({ ...a, description: "Run A, edited." }));
    await waitFor("the edit built", async () => s.outcomes.length === builds + 1);
    expect(stepPoolWorkers(), "workers started for a KML run").toBe(0);
    const buildsStarted = () => s.logs.filter((line) => line.startsWith("change:")).length;
    const startedBefore = buildsStarted();

    await copyFile(path.join(SAMPLE_RUN, SAMPLE_OUTPUT), path.join(s.runsDir, "run-a", SAMPLE_OUTPUT));
    await waitFor("the worker started", async () => stepPoolWorkers() === 1, 5_000);
    expect(buildsStarted(), "the worker was started by the build, not by the model output's arrival").toBe(startedBefore);
    await waitFor("the model output built", async () => s.outcomes.length === builds + 2, 30_000);
    expect(s.outcomes.at(-1)!.error).toBeUndefined();
  });
});
