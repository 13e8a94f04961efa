/**
 * Garbage collection of dist/: after every publish, dist/runs, dist/state, dist/index and dist/viewer hold exactly the
 * directories the kept releases list in their dirs.json, whether the collection listed dist/ (first build,
 * cold `ashcast build`) or counted what the publish changed (the watcher's builds, told the last release).
 */
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { editManifest, makeWorkspace, PUBLIC_URL, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
let clock: number;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-gc-");
  clock = Date.UTC(2024, 5, 1, 8);
});
afterEach(async () => {
  await ws.cleanup();
});

/** Each build two minutes after the one before: releases age past the five minutes they are kept. */
const nextNow = () => () => new Date((clock += 120_000));

async function watchBuild(previous: BuildResult, changed: string[], extra: Partial<Parameters<typeof build>[0]> = {}): Promise<BuildResult> {
  return build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: nextNow(), changedFolders: new Set(changed), previous: previous.current, ...extra });
}

const names = (dir: string) => readdir(dir).then((list) => list.filter((name) => !name.startsWith(".")), () => [] as string[]);

/** The shared directories on disk, and those the releases on disk say they use. */
async function sharedDirs(): Promise<{ onDisk: string[]; used: string[] }> {
  const onDisk: string[] = [];
  for (const shared of ["runs", "state", "index", "viewer"]) for (const name of await names(path.join(ws.distDir, shared))) onDisk.push(`${shared}/${name}`);
  const used = new Set<string>();
  for (const release of await names(path.join(ws.distDir, "releases"))) {
    for (const dir of JSON.parse(await readFile(path.join(ws.distDir, "releases", release, "dirs.json"), "utf8")) as string[]) used.add(dir);
  }
  return { onDisk: onDisk.sort(), used: [...used].sort() };
}

async function expectOnlyUsedDirs(step: string): Promise<void> {
  const { onDisk, used } = await sharedDirs();
  expect(onDisk, step).toEqual(used);
}

describe("garbage collection", () => {
  it("leaves exactly the directories the kept releases use, through a watcher's adds, edits, failures, fixes and removals", async () => {
    const folders = ["2024-05-01-hekla", "2024-05-02-katla", "2024-05-03-askja", "2024-05-04-grimsvotn"];
    for (const [i, folder] of folders.entries()) await writeKmlRun(ws.runsDir, folder, { reftime: `2024-05-0${i + 1}T12:00:00Z` });
    let result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: nextNow() });
    await expectOnlyUsedDirs("first build");

    const steps: Array<[string, string[], () => Promise<void>]> = [
      ["edit hekla", ["2024-05-01-hekla"], () => editManifest(path.join(ws.runsDir, "2024-05-01-hekla"), (m) => ({ ...m, description: "edited once" }))],
      ["edit hekla again", ["2024-05-01-hekla"], () => editManifest(path.join(ws.runsDir, "2024-05-01-hekla"), (m) => ({ ...m, description: "edited twice" }))],
      ["break katla (its last good build stays)", ["2024-05-02-katla"], () => writeFile(path.join(ws.runsDir, "2024-05-02-katla", "run.json"), "{ not json")],
      ["add a run", ["2024-05-05-hekla"], () => writeKmlRun(ws.runsDir, "2024-05-05-hekla", { reftime: "2024-05-05T12:00:00Z" }).then(() => undefined)],
      ["fix katla", ["2024-05-02-katla"], () => writeKmlRun(ws.runsDir, "2024-05-02-katla", { reftime: "2024-05-02T12:00:00Z", description: "fixed" }).then(() => undefined)],
      ["a copy of askja with other content (variant conflict)", ["2024-05-03-askja_v2"], () => writeKmlRun(ws.runsDir, "2024-05-03-askja_v2", { reftime: "2024-05-03T12:00:00Z", label: "v2" }).then(() => undefined)],
      ["remove the winning copy", ["2024-05-03-askja_v2"], () => rm(path.join(ws.runsDir, "2024-05-03-askja_v2"), { recursive: true })],
      ["remove grimsvotn", ["2024-05-04-grimsvotn"], () => rm(path.join(ws.runsDir, "2024-05-04-grimsvotn"), { recursive: true })],
      ["edit askja", ["2024-05-03-askja"], () => editManifest(path.join(ws.runsDir, "2024-05-03-askja"), (m) => ({ ...m, description: "edited" }))],
      ["edit the new run", ["2024-05-05-hekla"], () => editManifest(path.join(ws.runsDir, "2024-05-05-hekla"), (m) => ({ ...m, description: "edited" }))],
    ];
    let removedRuns = 0;
    for (const [step, changed, change] of steps) {
      await change();
      const logs: string[] = [];
      result = await watchBuild(result, changed, { log: (line) => logs.push(line) });
      expect(result.published, step).toBe(true);
      removedRuns += Number(/and (\d+) unused run director/.exec(logs.join("\n"))?.[1] ?? 0);
      await expectOnlyUsedDirs(step);
    }
    // Releases aged out and took the run directories only they used with them.
    expect(removedRuns).toBeGreaterThan(3);
    expect((await names(path.join(ws.distDir, "releases"))).length).toBeLessThan(steps.length);
  });

  it("a run directory that no release uses (a cancelled rebuild's) is removed by the next publish", async () => {
    await writeKmlRun(ws.runsDir, "2024-05-01-hekla", { reftime: "2024-05-01T12:00:00Z" });
    await writeKmlRun(ws.runsDir, "2024-05-02-katla", { reftime: "2024-05-02T12:00:00Z" });
    let result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: nextNow() });
    result = await watchBuild(result, ["2024-05-01-hekla"], { rebuild: new Set(["2024-05-01-hekla"]) }); // counts now come from publishes
    await expectOnlyUsedDirs("after a rebuild");

    // A rebuild of every run, cancelled once the first folder's fresh directory is written.
    const cancel = new AbortController();
    const before = await names(path.join(ws.distDir, "runs"));
    await expect(watchBuild(result, [], { rebuild: "all", signal: cancel.signal, onProgress: () => cancel.abort() })).rejects.toThrow();
    const orphans = (await names(path.join(ws.distDir, "runs"))).filter((name) => !before.includes(name));
    expect(orphans).toHaveLength(1);

    await editManifest(path.join(ws.runsDir, "2024-05-02-katla"), (m) => ({ ...m, description: "edited" }));
    result = await watchBuild(result, ["2024-05-02-katla"]);
    expect(result.published).toBe(true);
    expect(await names(path.join(ws.distDir, "runs"))).not.toContain(orphans[0]);
    await expectOnlyUsedDirs("after the next publish");
  });

  it("a directory put into dist/runs by someone else while no build ran is removed when the next build reads dist/ again", async () => {
    await writeKmlRun(ws.runsDir, "2024-05-01-hekla", { reftime: "2024-05-01T12:00:00Z" });
    const first = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: nextNow() });
    await mkdir(path.join(ws.distDir, "runs", "20240501T120000Z-stray"));
    await editManifest(path.join(ws.runsDir, "2024-05-01-hekla"), (m) => ({ ...m, description: "edited" }));
    // A cold build, as `ashcast build` runs it (no release in memory).
    await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: nextNow() });
    expect(await names(path.join(ws.distDir, "runs"))).not.toContain("20240501T120000Z-stray");
    await expectOnlyUsedDirs("after the cold build");
    expect(first.published).toBe(true);
  });
});
