/**
 * Which folder is served for a reftime: last good versions, duplicates, variant conflicts,
 * withdrawals, files still arriving, and names that are not runs.
 */
import { renameSync, rmSync } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import type { RunType } from "../../src/contract/ashModel.ts";
import type { RunReport } from "../../src/contract/buildReport.ts";
import { PUBLIC_URL, editManifest, fixedClock, makeWorkspace, readRelease, writeKmlRun, type Workspace } from "./runFixtures.ts";

const REFTIME = "2024-05-01T12:00:00Z";

const workspaces: Workspace[] = [];
let ws: Workspace;
beforeEach(async () => {
  ws = await newWorkspace();
});
afterEach(async () => {
  await Promise.all(workspaces.splice(0).map((w) => w.cleanup()));
});

async function newWorkspace(): Promise<Workspace> {
  const created = await makeWorkspace();
  workspaces.push(created);
  return created;
}

/** Builds with a clock one hour later at every call, so every build has its own time. */
function builder(w: Workspace) {
  let hour = 0;
  return (): Promise<BuildResult> => build({ runsDir: w.runsDir, distDir: w.distDir, publicUrl: PUBLIC_URL, now: fixedClock(new Date(Date.UTC(2024, 5, 1, hour++)).toISOString()) });
}

function runOf(result: BuildResult, folder: string): RunReport {
  const run = result.report.runs.find((r) => r.folder === folder);
  if (!run) throw new Error(`no report for ${folder}: ${result.report.runs.map((r) => r.folder).join(", ")}`);
  return run;
}

const statuses = (result: BuildResult): Record<string, string> => Object.fromEntries(result.report.runs.map((r) => [r.folder, r.status]));

describe("last good version", () => {
  it("keeps serving the last good model of a run that turns bad, says so, and serves the fix once it comes", async () => {
    const buildNext = builder(ws);
    const run = await writeKmlRun(ws.runsDir, "hekla", { description: "First analysis." });
    await buildNext();
    const good = await readRelease(ws.distDir);
    const goodJson = good.index.runs[REFTIME]!.json;
    const goodBody = await good.body(goodJson);

    await editManifest(run.dir, (m) => ({ ...m, type: "Drill", description: "Second analysis." }));
    const broken = await buildNext();
    const report = runOf(broken, "hekla");
    expect(report.status).toBe("kept-last-good");
    expect(report.note).toMatch(/last good version stays published/);
    expect(report.issues).toEqual([expect.objectContaining({ severity: "error", file: "hekla/run.json", field: "type" })]);
    expect(report.reftime).toBe(REFTIME);
    expect(broken.report.counts.errors).toBe(1);
    expect(broken.events).toEqual([]);
    const kept = await readRelease(ws.distDir);
    expect(kept.id).toBe(broken.release);
    expect(kept.index.reftimes).toEqual([REFTIME]);
    expect(kept.index.runs[REFTIME]!.source).toBe("hekla");
    expect(kept.artefact(goodJson)).toEqual(good.artefact(goodJson));
    expect((await kept.body(goodJson)).equals(goodBody)).toBe(true);
    expect((await kept.model(REFTIME)).meta.description).toBe("First analysis.");
    expect(await kept.json(kept.index.lists.report)).toMatchObject({ runs: [expect.objectContaining({ folder: "hekla", status: "kept-last-good" })] });

    await editManifest(run.dir, (m) => ({ ...m, type: "Exercise" }));
    const fixed = await buildNext();
    expect(runOf(fixed, "hekla")).toMatchObject({ status: "published", issues: [] });
    const served = await readRelease(ws.distDir);
    expect((await served.model(REFTIME)).meta.description).toBe("Second analysis.");
    expect(fixed.events).toEqual([expect.objectContaining({ kind: "updated", reftime: REFTIME })]);
  });
});

describe("last good version across a configuration change", () => {
  // BUG (src/build/build.ts:90): `priorRuns = pipelineChanged ? {} : prevState.runs` drops every
  // run's lastGood when the pipeline key changes (PIPELINE_VERSION, or defaultRunType). A run that is
  // kept-last-good (invalid files, last good version served) is then withdrawn, although its note
  // promises it "stays published until they are fixed or the folder is removed".
  it("keeps serving a kept-last-good Real Eruption when only the configured default run type changes", async () => {
    const run = await writeKmlRun(ws.runsDir, "hekla", { type: "Real Eruption", description: "First analysis." });
    await writeKmlRun(ws.runsDir, "katla", { reftime: "2024-05-02T00:00:00Z" });
    const at = (hour: number) => fixedClock(new Date(Date.UTC(2024, 5, 1, hour)).toISOString());
    await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: at(0) });
    await editManifest(run.dir, (m) => ({ ...m, reftime: "not a time" }));
    const broken = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: at(1) });
    expect(runOf(broken, "hekla").status).toBe("kept-last-good");

    // The operator only adds a default run type (which does not concern these runs: both have a type).
    const reconfigured = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: at(2), defaultRunType: "Exercise" });
    expect(runOf(reconfigured, "hekla").status).toBe("kept-last-good");
    expect(reconfigured.report.withdrawn).toEqual([]);
    expect(reconfigured.events.filter((e) => e.kind === "withdrawn")).toEqual([]);
    const release = await readRelease(ws.distDir);
    expect(release.index.reftimes).toContain(REFTIME);
    expect((await release.model(REFTIME)).meta.type).toBe("Real Eruption");
  });
});

describe("several folders for one reftime", () => {
  it("serves one of two identical folders and reports the other as a duplicate", async () => {
    await writeKmlRun(ws.runsDir, "hekla-a", { description: "Same files." });
    await writeKmlRun(ws.runsDir, "hekla-b", { description: "Same files." });
    const result = await builder(ws)();
    expect(statuses(result)).toEqual({ "hekla-a": "published", "hekla-b": "duplicate" });
    expect(runOf(result, "hekla-b").note).toContain("hekla-a");
    const release = await readRelease(ws.distDir);
    expect(release.index.reftimes).toEqual([REFTIME]);
    expect(release.index.runs[REFTIME]!.source).toBe("hekla-a");
    expect(result.report.counts.errors).toBe(0);
  });

  it("serves the other copy, without a changelog event, when the served duplicate is deleted", async () => {
    const buildNext = builder(ws);
    const a = await writeKmlRun(ws.runsDir, "hekla-a", { description: "Same files." });
    await writeKmlRun(ws.runsDir, "hekla-b", { description: "Same files." });
    expect(statuses(await buildNext())).toEqual({ "hekla-a": "published", "hekla-b": "duplicate" });
    await rm(a.dir, { recursive: true });
    const result = await buildNext();
    expect(statuses(result)).toEqual({ "hekla-b": "published" });
    expect(result.events).toEqual([]);
    const release = await readRelease(ws.distDir);
    expect(release.index.runs[REFTIME]!.source).toBe("hekla-b");
  });

  /** Builds folders (name → type, description) for one reftime and returns the folder served and the statuses. */
  async function conflict(w: Workspace, folders: Array<[string, RunType]>, order: "together" | "one by one"): Promise<{ served: string; statuses: Record<string, string>; model: string }> {
    const buildNext = builder(w);
    let result: BuildResult | undefined;
    for (const [folder, type] of folders) {
      await writeKmlRun(w.runsDir, folder, { type, description: `Variant in ${folder}.` });
      if (order === "one by one") result = await buildNext();
    }
    if (order === "together") result = await buildNext();
    const release = await readRelease(w.distDir);
    return { served: release.index.runs[REFTIME]!.source, statuses: statuses(result!), model: (await release.model(REFTIME)).meta.description };
  }

  it.each([
    ["a Real Eruption beats an Exercise whose folder sorts last", [["a-real", "Real Eruption"], ["z-exercise", "Exercise"]], "a-real"],
    ["a Rehearsal beats an Exercise", [["a-rehearsal", "Rehearsal"], ["b-exercise", "Exercise"]], "a-rehearsal"],
    ["a Real Eruption beats a Rehearsal", [["b-rehearsal", "Rehearsal"], ["a-real", "Real Eruption"]], "a-real"],
    ["Real Eruption > Rehearsal > Exercise among three", [["zz-exercise", "Exercise"], ["mm-rehearsal", "Rehearsal"], ["aa-real", "Real Eruption"]], "aa-real"],
    ["with equal types, the folder name that sorts last wins", [["hekla_v2", "Exercise"], ["hekla", "Exercise"]], "hekla_v2"],
    ["with equal types, the folder name that sorts last wins (Real Eruption)", [["2024-05-01-hekla-b", "Real Eruption"], ["2024-05-01-hekla-a", "Real Eruption"], ["2024-05-01-hekla-c", "Rehearsal"]], "2024-05-01-hekla-b"],
    ["with equal types, the tenth correction beats the ninth (numbers in names compared as numbers)", [["hekla_v9", "Exercise"], ["hekla_v10", "Exercise"]], "hekla_v10"],
  ] as Array<[string, Array<[string, RunType]>, string]>)("settles a variant conflict: %s, whatever the creation order", async (_, folders, winner) => {
    const expectedStatuses = Object.fromEntries(folders.map(([f]) => [f, f === winner ? "published" : "variant-conflict"]));
    const outcomes = [
      await conflict(await newWorkspace(), folders, "together"),
      await conflict(await newWorkspace(), folders, "one by one"),
      await conflict(await newWorkspace(), [...folders].reverse(), "one by one"),
    ];
    for (const outcome of outcomes) {
      expect(outcome.served).toBe(winner);
      expect(outcome.model).toBe(`Variant in ${winner}.`);
      expect(Object.fromEntries(Object.entries(outcome.statuses).sort())).toEqual(Object.fromEntries(Object.entries(expectedStatuses).sort()));
    }
  });

  // BUG (src/build/build.ts:245-246 with :183): `modified` is stamped when a folder is built
  // (writeArtefacts(..., options.builtAt)), not when its content is first served. A conflict loser
  // built at T0 and served from T1 on is published with Last-Modified T0 — the same as the content it
  // replaced — although the index documents `modified` as "when this exact content was first
  // published". A server or cache answering If-Modified-Since: T0 would say 304 and keep showing the
  // withdrawn Real Eruption model.
  it("moves Last-Modified of the reftime's model forward when a conflict loser takes over", async () => {
    const real = await writeKmlRun(ws.runsDir, "a-real", { type: "Real Eruption", description: "Real." });
    await writeKmlRun(ws.runsDir, "b-exercise", { description: "Exercise." });
    const T0 = "2024-06-01T00:00:00Z";
    const T1 = "2024-06-01T05:00:00Z";
    await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(T0) });
    const before = (await readRelease(ws.distDir)).artefact(`runs/${REFTIME}/model.json`);
    await rm(real.dir, { recursive: true });
    await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(T1) });
    const release = await readRelease(ws.distDir);
    expect(release.index.runs[REFTIME]!.source).toBe("b-exercise");
    const after = release.artefact(`runs/${REFTIME}/model.json`);
    expect(after.sha256).not.toBe(before.sha256);
    expect(after.modified).toBe(T1);
  });

  it("explains a variant conflict in the loser's note, naming the winner and the rule", async () => {
    await writeKmlRun(ws.runsDir, "hekla", { description: "Original." });
    await writeKmlRun(ws.runsDir, "hekla_v2", { description: "Corrected." });
    const result = await builder(ws)();
    const loser = runOf(result, "hekla");
    expect(loser.status).toBe("variant-conflict");
    expect(loser.note).toContain("hekla_v2");
    expect(loser.note).toMatch(/type/);
    expect(loser.note).toMatch(/sorts last/);
  });

  it("lets the corrected copy win at once when it appears after the original was published, with an updated event", async () => {
    const buildNext = builder(ws);
    await writeKmlRun(ws.runsDir, "hekla", { description: "Original." });
    await buildNext();
    await writeKmlRun(ws.runsDir, "hekla_v2", { description: "Corrected." });
    const result = await buildNext();
    expect(statuses(result)).toEqual({ hekla: "variant-conflict", hekla_v2: "published" });
    expect(result.events).toEqual([expect.objectContaining({ kind: "updated", reftime: REFTIME })]);
    expect(result.events[0]!.detail).toMatch(/description changed/i);
  });
});

describe("withdrawal", () => {
  it("withdraws a deleted run folder: gone from reftimes and the index, with a withdrawn changelog item", async () => {
    const buildNext = builder(ws);
    const hekla = await writeKmlRun(ws.runsDir, "hekla");
    await writeKmlRun(ws.runsDir, "katla", { reftime: "2024-05-02T00:00:00Z" });
    await buildNext();
    await rm(hekla.dir, { recursive: true });
    const result = await buildNext();
    expect(result.report.withdrawn).toEqual([REFTIME]);
    expect(result.events).toEqual([expect.objectContaining({ kind: "withdrawn", reftime: REFTIME, type: "Exercise" })]);
    const release = await readRelease(ws.distDir);
    expect(await release.json(release.index.lists.reftimes)).toEqual([{ reftimes: ["2024-05-02T00:00:00Z"] }]);
    expect(release.index.runs[REFTIME]).toBeUndefined();
    expect(Object.keys(release.resources).filter((name) => name.startsWith(REFTIME))).toEqual([]);
    const rss = await release.text(release.index.lists.changelog);
    expect(rss).toContain(`Withdrawn: Exercise run ${REFTIME}`);
    expect(rss).toContain(`Published: Exercise run ${REFTIME}`);
  });
});

describe("files still arriving", () => {
  it("reports a new folder holding a *.part file as waiting, and publishes it once the file is renamed", async () => {
    const buildNext = builder(ws);
    const run = await writeKmlRun(ws.runsDir, "hekla");
    await rename(path.join(run.dir, "advisory.kml"), path.join(run.dir, "advisory.kml.part"));
    const waiting = await buildNext();
    expect(runOf(waiting, "hekla")).toMatchObject({ status: "waiting" });
    expect(runOf(waiting, "hekla").issues).toEqual([expect.objectContaining({ severity: "warning", file: "hekla/advisory.kml.part" })]);
    expect(waiting.report.counts.errors).toBe(0);
    expect((await readRelease(ws.distDir)).index.reftimes).toEqual([]);

    await rename(path.join(run.dir, "advisory.kml.part"), path.join(run.dir, "advisory.kml"));
    const arrived = await buildNext();
    expect(runOf(arrived, "hekla")).toMatchObject({ status: "published", rebuilt: "its files have arrived" });
    expect((await readRelease(ws.distDir)).index.reftimes).toEqual([REFTIME]);
  });

  it("keeps the published version of a folder while a new file of it is arriving (kept-last-good)", async () => {
    const buildNext = builder(ws);
    const run = await writeKmlRun(ws.runsDir, "hekla", { description: "First analysis." });
    await buildNext();
    const before = await readRelease(ws.distDir);
    await editManifest(run.dir, (m) => ({ ...m, description: "Second analysis." }));
    await writeFile(path.join(run.dir, "advisory.kml.part"), (await readFile(path.join(run.dir, "advisory.kml"), "utf8")).slice(0, 100));
    const result = await buildNext();
    const report = runOf(result, "hekla");
    expect(report.status).toBe("kept-last-good");
    expect(report.note).toMatch(/arriving/);
    const release = await readRelease(ws.distDir);
    expect(release.index.runs[REFTIME]!.json).toBe(before.index.runs[REFTIME]!.json);
    expect(release.artefact(release.index.runs[REFTIME]!.json)).toEqual(before.artefact(before.index.runs[REFTIME]!.json));
    expect((await release.model(REFTIME)).meta.description).toBe("First analysis.");
    expect(result.events).toEqual([]);
  });
});

describe("a run folder that goes away while the build reads it", () => {
  it("waits, keeping its last good version, while the other runs publish: renamed and deleted alike", async () => {
    const buildNext = builder(ws);
    await writeKmlRun(ws.runsDir, "a-hekla", { reftime: "2024-04-01T00:00:00Z" });
    const moving = await writeKmlRun(ws.runsDir, "z-katla", { reftime: REFTIME, description: "First analysis." });
    await buildNext();
    for (const [how, goAway] of [
      ["renamed", () => renameSync(moving.dir, `${moving.dir}-renamed`)],
      ["deleted", () => rmSync(moving.dir, { recursive: true })],
    ] as const) {
      await writeKmlRun(ws.runsDir, "a-hekla", { reftime: "2024-04-01T00:00:00Z", description: `Corrected before z-katla was ${how}.` });
      await editManifest(moving.dir, (m) => ({ ...m, description: "Second analysis." }));
      // Every folder is scanned before any is read: z-katla goes away once a-hekla has been read.
      const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-02T00:00:00Z"), onProgress: (_done, _total, folder) => void (folder === "a-hekla" && goAway()) });
      expect(runOf(result, "a-hekla").status, how).toBe("published");
      const katla = runOf(result, "z-katla");
      expect(katla.status, how).toBe("kept-last-good");
      expect(katla.issues).toEqual([expect.objectContaining({ severity: "warning", message: "files changed while they were being read" })]);
      const release = await readRelease(ws.distDir);
      expect((await release.model("2024-04-01T00:00:00Z")).meta.description).toBe(`Corrected before z-katla was ${how}.`);
      expect((await release.model(REFTIME)).meta.description).toBe("First analysis.");
      await rm(`${moving.dir}-renamed`, { recursive: true, force: true });
      await writeKmlRun(ws.runsDir, "z-katla", { reftime: REFTIME, description: "First analysis." });
    }
  });
});

describe("names that are not runs", () => {
  it("ignores folders starting with . or _ and folders ending .part", async () => {
    await writeKmlRun(ws.runsDir, "hekla");
    await writeKmlRun(ws.runsDir, ".hidden", { reftime: "2024-05-02T00:00:00Z" });
    await writeKmlRun(ws.runsDir, "_resources", { reftime: "2024-05-03T00:00:00Z" });
    await writeKmlRun(ws.runsDir, "katla.part", { reftime: "2024-05-04T00:00:00Z" });
    const result = await builder(ws)();
    expect(result.report.runs.map((r) => r.folder)).toEqual(["hekla"]);
    expect(result.report.counts.folders).toBe(1);
    expect((await readRelease(ws.distDir)).index.reftimes).toEqual([REFTIME]);
  });
});
