/**
 * Publishing integrity under SIGKILL: the CLI build is killed at seeded pseudo-random moments, many
 * times, and after every kill the tree `dist/current` serves must be one whole release (or nothing,
 * before the first release). The next build must recover: no temporaries, no stale lock, every run.
 * Real files in a temporary directory, a real child process, a real SIGKILL; no mocks.
 *
 * Reproduce a failure with ASHCAST_CRASH_SEED=<seed printed by the failing run>; ASHCAST_LONG_TESTS=1
 * kills ten times as often (the command is in README.md, Quick start).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { build } from "../../src/build/build.ts";
import { INDEX_FILE } from "../../src/contract/releaseIndex.ts";
import { UserError } from "../../src/errors.ts";
import {
  PUBLIC_URL,
  expectedTimes,
  findTemporaries,
  inspectServedTree,
  layerName,
  layerTimes,
  makeTempDir,
  reftimeAt,
  removeDir,
  runJson,
  seededRandom,
  sleep,
  spawnBuild,
  writeRun,
  type RunSpec,
  type SpawnedBuild,
} from "./crashFixtures.ts";
import { iterations, LONG_TESTS } from "../stress.ts";

const RUN_COUNT = 24;
/** Kills while the CLI starts (loads its modules), before it takes the lock and touches dist. */
const STARTUP_KILLS = iterations(1, 10);
/** Kills while the build works (after it took the lock). */
const BUILD_KILLS = iterations(5, 10);
/** Kills aimed at the last phase of a build, and at the moments around the switch to the new release. */
const PHASE_KILLS = iterations(2, 10);
const SWITCH_KILLS = iterations(3, 10);
const SWITCH_SPAN_MS = 40;
const STEPS = 3;
const LAYERS = ["advisory.kml"] as const;

let tmp: string | undefined;
/** Children still running when a test fails are killed before their directory is removed. */
const children = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
  }
  children.clear();
  await removeDir(tmp);
  tmp = undefined;
});

interface KillPoint {
  /** `delay` ms after the spawn ("start"), or after the build reached that phase (see waitForPhase). */
  after: "start" | Phase;
  delay: number;
}
type Phase = "lock" | "staging" | "index";
const showPoint = (point: KillPoint) => (point.after === "start" ? `${point.delay}` : `${point.after}+${point.delay}`);

/**
 * Resolves when the build reaches `phase` (or exits): "lock", it holds the build lock (the lock file
 * holds its pid: one left by a killed build does not count); "staging", its release staging directory
 * appears (temporaries are named `.tmp-<pid>-...`, so one left by a killed build does not count);
 * "index", the index appears in that directory (it is written last, then the directory is renamed into
 * place and `current` swapped to it), or the directory has already been renamed.
 */
async function waitForPhase(spawned: SpawnedBuild, distDir: string, phase: Phase): Promise<void> {
  let running = true;
  const stop = () => void (running = false);
  spawned.exited.then(stop, stop);
  const pid = spawned.child.pid;
  const releases = path.join(distDir, "releases");
  const mine = `.tmp-${pid}-`;
  let staging: string | undefined;
  while (running) {
    if (phase === "lock") {
      // The lock file holds "<pid> <random>": the first word is the holder.
      if ((await readFile(path.join(distDir, ".build.lock"), "utf8").catch(() => "")).split(/\s/)[0] === String(pid)) return;
    } else if (!staging) {
      staging = (await readdir(releases).catch(() => [] as string[])).find((name) => name.startsWith(mine));
      if (staging && phase === "staging") return;
    }
    if (staging) {
      const names = await readdir(path.join(releases, staging)).catch(() => undefined);
      if (!names || names.includes(INDEX_FILE)) return;
    }
    await sleep(1);
  }
}

/** Names of the entries of `dir` that are release directories under their final name. */
async function releaseDirs(distDir: string): Promise<string[]> {
  return (await readdir(path.join(distDir, "releases")).catch(() => [] as string[])).filter((name) => !name.startsWith(".tmp-"));
}

describe("SIGKILL during a build", () => {
  test(`killed ${STARTUP_KILLS + BUILD_KILLS + PHASE_KILLS + SWITCH_KILLS} times at seeded random moments, the served tree is always one whole release`, { timeout: LONG_TESTS ? 2_400_000 : 240_000 }, async () => {
    const seed = Number(process.env.ASHCAST_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const random = seededRandom(seed);
    console.log(`[crash] seed ${seed} (rerun with ASHCAST_CRASH_SEED=${seed})`);

    tmp = await makeTempDir("crash");
    const runsDir = path.join(tmp, "runs");
    const distDir = path.join(tmp, "dist");

    // The runs, and what each folder should publish once a build completes.
    const expected = new Map<string, RunSpec>();
    let nextReftime = 0;
    const freshReftime = () => reftimeAt(6 * nextReftime++);
    for (let i = 0; i < RUN_COUNT; i++) {
      const spec: RunSpec = { reftime: freshReftime(), description: `Run ${i}, version 0.`, steps: STEPS, layers: LAYERS };
      expected.set(`run-${String(i).padStart(2, "0")}`, spec);
      await writeRun(runsDir, `run-${String(i).padStart(2, "0")}`, spec);
    }

    // One full build in a scratch dist, to spread the kill delays across a build's duration: its
    // startup (module loading, until it takes the lock), its work, and its last phase (from its release
    // staging directory appearing to its exit).
    const scratchDist = path.join(tmp, "scratch-dist");
    const scratch = spawnBuild(runsDir, scratchDist);
    children.add(scratch.child);
    const measureStart = performance.now();
    const lockSeen = waitForPhase(scratch, scratchDist, "lock").then(() => performance.now());
    const stagingSeen = waitForPhase(scratch, scratchDist, "staging").then(() => performance.now());
    const measured = await scratch.exited;
    const measureEnd = performance.now();
    expect(measured.code, measured.stderr).toBe(0);
    const durationMs = measureEnd - measureStart;
    const startupMs = Math.min(durationMs, (await lockSeen) - measureStart);
    const endPhaseMs = Math.max(0, measureEnd - (await stagingSeen));
    console.log(
      `[crash] one full build of ${RUN_COUNT} runs takes ${Math.round(durationMs)} ms: startup ${Math.round(startupMs)} ms, ` +
        `then ${Math.round(durationMs - startupMs)} ms holding the lock, the last ${Math.round(endPhaseMs)} ms after its release staging appears`,
    );
    await rm(scratchDist, { recursive: true, force: true });

    // Kill points, each stratified (one per slice, jittered), so together they cover the whole build:
    // STARTUP_KILLS over the startup; BUILD_KILLS over the work, timed from the lock (startup times vary
    // more than the work); PHASE_KILLS over the last phase (lists, state, index, rename, link swap,
    // garbage collection), which grows with the changelog, hence the margin; SWITCH_KILLS over
    // SWITCH_SPAN_MS after the staged index appears. All in a seeded random order.
    const stratified = (count: number, after: KillPoint["after"], span: number) =>
      Array.from({ length: count }, (_, k): KillPoint => ({ after, delay: Math.round(((k + random()) / count) * span) }));
    const plan: KillPoint[] = [
      ...stratified(STARTUP_KILLS, "start", startupMs),
      ...stratified(BUILD_KILLS, "lock", durationMs - startupMs),
      ...stratified(PHASE_KILLS, "staging", Math.max(endPhaseMs, 50) * 1.5),
      ...stratified(SWITCH_KILLS, "index", SWITCH_SPAN_MS),
    ];
    for (let i = plan.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [plan[i], plan[j]] = [plan[j]!, plan[i]!];
    }
    console.log(`[crash] kill points (ms after the spawn, or after the lock is taken / the release staging / the staged index appears): ${plan.map(showPoint).join(", ")}`);

    const seenReleases = new Set<string>();
    let served: string | undefined;
    const outcomes: string[] = [];
    for (const [iteration, point] of plan.entries()) {
      // Real work for every build: new descriptions (everywhere when the kill is timed against a full
      // build, in a few runs when it is aimed at the end), a few new reftimes, a run added or removed.
      const folders = [...expected.keys()];
      const touched = point.after === "start" || point.after === "lock" ? folders : folders.filter(() => random() < 0.15);
      for (const folder of touched) {
        const spec = expected.get(folder)!;
        spec.description = `Run ${folder}, version ${iteration + 1}.`;
        if (random() < 0.1) {
          spec.reftime = freshReftime(); // the KML times move with it: the whole folder is new
          await writeRun(runsDir, folder, spec);
        } else {
          await writeFile(path.join(runsDir, folder, "run.json"), runJson(spec));
        }
      }
      if (random() < 0.5) {
        const folder = `extra-${iteration}`;
        const spec: RunSpec = { reftime: freshReftime(), description: `Added in iteration ${iteration}.`, steps: STEPS, layers: LAYERS };
        expected.set(folder, spec);
        await writeRun(runsDir, folder, spec);
      } else {
        const victim = [...expected.keys()][Math.floor(random() * expected.size)]!;
        expected.delete(victim);
        await rm(path.join(runsDir, victim), { recursive: true });
      }

      const spawned = spawnBuild(runsDir, distDir);
      children.add(spawned.child);
      let running = true;
      const exited = spawned.exited.finally(() => (running = false));
      if (point.after !== "start") await waitForPhase(spawned, distDir, point.after);
      if (running) await Promise.race([sleep(point.delay), exited]);
      if (running) spawned.child.kill("SIGKILL");
      const exit = await exited;
      const killed = exit.signal === "SIGKILL";
      if (!killed) expect(exit.code, `build ${iteration} exited by itself: ${exit.stderr}`).toBe(0);

      const { problems, served: tree } = await inspectServedTree(distDir);
      const where = `iteration ${iteration}, kill point ${showPoint(point)} (seed ${seed})`;
      expect(problems, where).toEqual([]);
      // A release directory under its final name is whole: its index was written before the rename.
      for (const id of await releaseDirs(distDir)) {
        const body = await readFile(path.join(distDir, "releases", id, "index.json"), "utf8").catch(() => undefined);
        expect(body, `${where}: releases/${id} has no index.json`).toBeDefined();
      }
      if (served !== undefined) expect(tree, `${where}: a release was served, now nothing is`).toBeDefined();
      if (tree && tree.release !== served) {
        // A new release, never an older one coming back.
        expect(seenReleases.has(tree.release), `${where}: ${tree.release} was served before`).toBe(false);
        if (served) expect(tree.release > served, `${where}: ${tree.release} is older than ${served}`).toBe(true);
        seenReleases.add(tree.release);
        served = tree.release;
      }
      outcomes.push(`${showPoint(point)}:${killed ? "killed" : "completed"}:${tree ? `serves ${tree.release}` : "nothing served"}`);
    }
    console.log(`[crash] outcomes: ${outcomes.join(" ")}; ${seenReleases.size} release(s) served along the way`);

    // Recovery: a normal build succeeds and serves every run as its files are now.
    const finalBuild = spawnBuild(runsDir, distDir);
    children.add(finalBuild.child);
    const final = await finalBuild.exited;
    expect(final.signal).toBeNull();
    expect(final.code, final.stderr + final.stdout).toBe(0);
    expect(await findTemporaries(distDir)).toEqual([]);
    await expect(stat(path.join(distDir, ".build.lock"))).rejects.toMatchObject({ code: "ENOENT" });

    const { problems, served: tree } = await inspectServedTree(distDir);
    expect(problems).toEqual([]);
    expect(tree).toBeDefined();
    const wanted = new Map([...expected.values()].map((spec) => [spec.reftime, spec]));
    expect([...tree!.index.reftimes].sort()).toEqual([...wanted.keys()].sort());
    for (const [reftime, spec] of wanted) {
      const model = tree!.models.get(reftime)!;
      expect(model.meta.description).toBe(spec.description);
      expect(layerTimes(model)).toEqual(new Map(spec.layers.map((file) => [layerName(file), expectedTimes(spec)])));
    }
    const report = JSON.parse(await readFile(path.join(distDir, tree!.index.artefacts[tree!.index.lists.report]!.identity.file), "utf8")) as { counts: { errors: number; published: number } };
    expect(report.counts).toMatchObject({ errors: 0, published: wanted.size });
  });
});

describe("the build lock", () => {
  const pidIsRunning = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  /** Every entry under `dir` with its size and mtime, to show that nothing was written. */
  async function snapshot(dir: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(dir, { recursive: true })) {
      const info = await stat(path.join(dir, entry)).catch(() => undefined);
      out.push(`${entry} ${info?.size ?? "?"} ${info?.mtimeMs ?? "?"}`);
    }
    return out.sort();
  }

  test("a lock left by a dead process is taken over", async () => {
    tmp = await makeTempDir("lock-dead");
    const runsDir = path.join(tmp, "runs");
    const distDir = path.join(tmp, "dist");
    const spec: RunSpec = { reftime: reftimeAt(0), description: "Lock test.", steps: 2, layers: ["advisory.kml"] };
    await writeRun(runsDir, "run-a", spec);

    const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const deadPid = dead.pid!;
    await new Promise((resolve) => dead.once("exit", resolve));
    expect(pidIsRunning(deadPid)).toBe(false);
    await mkdir(distDir, { recursive: true });
    await writeFile(path.join(distDir, ".build.lock"), `${deadPid}\n`);

    const result = await build({ runsDir, distDir, publicUrl: PUBLIC_URL });
    expect(result.published).toBe(true);
    expect(result.report.counts.published).toBe(1);
    await expect(stat(path.join(distDir, ".build.lock"))).rejects.toMatchObject({ code: "ENOENT" });
    const { problems, served } = await inspectServedTree(distDir);
    expect(problems).toEqual([]);
    expect(served?.index.reftimes).toEqual([spec.reftime]);
  });

  test("a lock held by a live process makes the build fail, naming the pid, and nothing is written", async () => {
    tmp = await makeTempDir("lock-live");
    const runsDir = path.join(tmp, "runs");
    const distDir = path.join(tmp, "dist");
    const spec: RunSpec = { reftime: reftimeAt(0), description: "Lock test, first version.", steps: 2, layers: ["advisory.kml"] };
    await writeRun(runsDir, "run-a", spec);
    const first = await build({ runsDir, distDir, publicUrl: PUBLIC_URL });
    expect(first.published).toBe(true);

    // A change that a build would publish, and a lock held by a process that is alive.
    await writeRun(runsDir, "run-a", { ...spec, description: "Lock test, second version." });
    await writeRun(runsDir, "run-b", { ...spec, reftime: reftimeAt(6), description: "Lock test, new run." });
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    children.add(holder);
    try {
      const holderPid = holder.pid!;
      expect(pidIsRunning(holderPid)).toBe(true);
      await writeFile(path.join(distDir, ".build.lock"), `${holderPid}\n`);
      const before = await snapshot(distDir);

      const failure = await build({ runsDir, distDir, publicUrl: PUBLIC_URL }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(UserError);
      expect((failure as UserError).message).toContain(String(holderPid));
      expect(`${(failure as UserError).where} ${(failure as UserError).fix}`).toContain(distDir);

      expect(await snapshot(distDir)).toEqual(before);
      expect(await readFile(path.join(distDir, ".build.lock"), "utf8")).toBe(`${holderPid}\n`);
      const { problems, served } = await inspectServedTree(distDir);
      expect(problems).toEqual([]);
      expect(served?.release).toBe(first.release);
    } finally {
      holder.kill("SIGKILL");
    }
  });
});
