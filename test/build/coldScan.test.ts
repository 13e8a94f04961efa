/**
 * The cold build (`ashcast build`, no watcher): it finds what changed while no build ran from the file
 * system alone. A folder whose own stat is as last listed is not listed again and a file whose stat (size,
 * mtime, ctime, inode) is as last hashed is not read again, yet every change is seen, including one that
 * puts the file's size and mtime back; times too close to the scan are not trusted.
 */
import { lstat, mkdir, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.ts";
import { listRunFolders, scanRun, scanRuns, type FolderFingerprints, type ScannedFolder } from "../../src/build/scanRuns.ts";
import { chunkName } from "../../src/formats/contentChunks.ts";
import { PUBLIC_URL, editManifest, fixedClock, makeWorkspace, writeKmlRun, type Workspace, type WrittenKmlRun } from "./runFixtures.ts";

let ws: Workspace;
let runs: WrittenKmlRun[];

const FOLDERS = ["2024-05-01-hekla", "2024-05-02-katla", "2024-05-03-askja", "2024-05-04-grimsvotn", "2024-05-05-eyja"];
const buildAt = (hour: number): Promise<BuildResult> => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(`2024-06-01T${String(hour).padStart(2, "0")}:00:00Z`) });
const rebuiltOf = (result: BuildResult) => Object.fromEntries(result.report.runs.flatMap((r) => (r.rebuilt ? [[r.folder, r.rebuilt]] : [])));

/**
 * Waits until the file system's clock (read from a file written in the workspace, as the build reads the lock
 * file's) has moved past every time it has given so far: a build started then trusts the times of what was
 * written before. Its tick can be several milliseconds, so a build started at once may not.
 */
async function settle(): Promise<void> {
  const probe = path.join(ws.root, "clock-probe");
  await writeFile(probe, "");
  const before = (await stat(probe)).ctimeMs;
  for (;;) {
    await writeFile(probe, "");
    if ((await stat(probe)).ctimeMs > before) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

beforeEach(async () => {
  ws = await makeWorkspace();
  runs = [];
  for (const [i, folder] of FOLDERS.entries()) runs.push(await writeKmlRun(ws.runsDir, folder, { reftime: `2024-05-0${i + 1}T12:00:00Z` }));
  await settle();
  const first = await buildAt(1);
  expect(first.scan).toEqual({ folders: 5, listed: 5, hashed: 10 });
  await settle();
});
afterEach(async () => {
  await ws.cleanup();
});

describe("the cold build's scan of runs/", () => {
  it("reads no unchanged run: one changed file is the only file hashed, and no folder is listed again", async () => {
    const unchanged = await buildAt(2);
    expect(unchanged.published).toBe(false);
    expect(unchanged.scan).toEqual({ folders: 5, listed: 0, hashed: 0 });

    await editManifest(runs[2]!.dir, (m) => ({ ...m, description: "Askja, second look" }));
    await settle();
    const changed = await buildAt(3);
    expect(changed.published).toBe(true);
    expect(rebuiltOf(changed)).toEqual({ "2024-05-03-askja": "run.json changed" });
    expect(changed.scan).toEqual({ folders: 5, listed: 0, hashed: 1 });

    // The new fingerprint was published with the release: the next build reads nothing.
    const after = await buildAt(4);
    expect(after.published).toBe(false);
    expect(after.scan).toEqual({ folders: 5, listed: 0, hashed: 0 });
  });

  it("sees a file rewritten with the same size and its mtime put back (its ctime moved)", async () => {
    const file = path.join(runs[1]!.dir, "run.json");
    // An mtime that utimes sets exactly (to the nanosecond), so that it can be put back exactly.
    const mtime = 1_700_000_000.5;
    await utimes(file, mtime, mtime);
    // Another run changes too, so that a release is published and with it the file's new fingerprint.
    await editManifest(runs[0]!.dir, (m) => ({ ...m, description: "Hekla, second look" }));
    await settle();
    const touched = await buildAt(2);
    expect(rebuiltOf(touched)).toEqual({ "2024-05-01-hekla": "run.json changed" }); // katla's file: hashed, same content
    expect(touched.scan.hashed).toBe(2);
    await settle();
    const before = await lstat(file);
    const text = await readFile(file, "utf8");
    const sameSize = text.replace("Test run", "Best run");
    expect(sameSize).not.toBe(text);
    await writeFile(file, sameSize);
    await utimes(file, mtime, mtime);
    const now = await lstat(file);
    expect([now.size, now.mtimeMs, now.ino]).toEqual([before.size, before.mtimeMs, before.ino]);

    const result = await buildAt(3);
    expect(rebuiltOf(result)).toEqual({ "2024-05-02-katla": "run.json changed" });
    expect(result.events.map((e) => `${e.kind} ${e.reftime}: ${e.detail}`)).toEqual(["updated 2024-05-02T12:00:00Z: Description changed."]);
    expect(result.scan.hashed).toBe(1);
  });

  it("lists again a folder a file was added to, removed from or renamed in, and sees a file replaced by rename", async () => {
    const [hekla, katla, askja, grimsvotn] = runs;
    await writeFile(path.join(hekla!.dir, "notes.kml"), await readFile(path.join(hekla!.dir, "advisory.kml")));
    await rename(path.join(katla!.dir, "advisory.kml"), path.join(katla!.dir, "advisory-old.kml"));
    const replacement = path.join(askja!.dir, ".run.json.swp");
    await writeFile(replacement, (await readFile(path.join(askja!.dir, "run.json"), "utf8")).replace("Exercise", "Rehearsal"));
    await rename(replacement, path.join(askja!.dir, "run.json"));
    await writeFile(path.join(grimsvotn!.dir, "advisory.kml.part"), "<kml");
    const result = await buildAt(2);
    expect(rebuiltOf(result)).toEqual({
      "2024-05-01-hekla": "notes.kml added",
      "2024-05-02-katla": "advisory.kml removed, advisory-old.kml added",
      "2024-05-03-askja": "run.json changed",
    });
    expect(result.report.runs.find((r) => r.folder === "2024-05-04-grimsvotn")?.status).toBe("kept-last-good");
    expect(result.scan).toEqual({ folders: 5, listed: 4, hashed: 3 });
  });

  it("sees a folder added and one removed", async () => {
    await writeKmlRun(ws.runsDir, "2024-05-06-hekla", { reftime: "2024-05-06T12:00:00Z" });
    const { rm } = await import("node:fs/promises");
    await rm(runs[4]!.dir, { recursive: true });
    const result = await buildAt(2);
    expect(result.report.runs.map((r) => r.folder)).toEqual(["2024-05-01-hekla", "2024-05-02-katla", "2024-05-03-askja", "2024-05-04-grimsvotn", "2024-05-06-hekla"]);
    expect(result.report.withdrawn).toEqual(["2024-05-05T12:00:00Z"]);
    expect(result.scan).toEqual({ folders: 5, listed: 1, hashed: 2 });
  });
});

describe("a state written before ctimes and folder stats were kept", () => {
  it("is read: every file is hashed and every folder listed once, and no run is rebuilt", async () => {
    // Rewrite the current state's chunks as the version before wrote them: no "folders", no ctimeMs.
    const headFile = path.join(ws.distDir, "current", "state.json");
    const head = JSON.parse(await readFile(headFile, "utf8")) as { chunks: string[] };
    const chunks: string[] = [];
    for (const name of head.chunks) {
      const chunk = JSON.parse(await readFile(path.join(ws.distDir, "state", name), "utf8")) as { files: Record<string, Record<string, { ctimeMs?: number }>>; folders?: unknown; runs: unknown };
      for (const files of Object.values(chunk.files)) for (const fingerprint of Object.values(files)) delete fingerprint.ctimeMs;
      const text = `${JSON.stringify({ files: chunk.files, runs: chunk.runs })}\n`;
      const older = chunkName(text);
      await writeFile(path.join(ws.distDir, "state", older), text);
      chunks.push(older);
    }
    await writeFile(headFile, `${JSON.stringify({ ...head, chunks })}\n`);

    const result = await buildAt(2);
    expect(result.report.counts.rebuilt).toBe(0);
    expect(result.published).toBe(false);
    expect(result.scan).toEqual({ folders: 5, listed: 5, hashed: 10 });
  });
});

describe("scanRun: which times are trusted next time", () => {
  it("keeps a file's ctime and its folder's stat only when they lie before the scan began", async () => {
    const dir = path.join(ws.root, "trust");
    await mkdir(path.join(dir, "run"), { recursive: true });
    const file = path.join(dir, "run", "run.json");
    await writeFile(file, "{}");
    await writeFile(path.join(dir, "run", ".DS_Store"), ""); // never an input: it changes nothing
    const fileStat = await stat(file);
    const folderStat = await stat(path.join(dir, "run"));
    const fileLatest = Math.max(fileStat.ctimeMs, fileStat.mtimeMs);
    const folderLatest = Math.max(folderStat.ctimeMs, folderStat.mtimeMs);
    const latest = Math.max(fileLatest, folderLatest);

    // A scan that began while the file and the folder were still changing (each is judged by its own times,
    // which differ by a clock tick or more on a loaded machine).
    const racy = await scanRun(dir, "run", {}, { settledBefore: Math.min(fileLatest, folderLatest) });
    expect(racy.run.files[0]!.ctimeMs).toBe(fileStat.ctimeMs);
    expect(racy.fingerprints["run.json"]).not.toHaveProperty("ctimeMs");
    expect(racy.folderStat).toBeUndefined();
    // Not trusted: hashed again next time although nothing changed.
    expect((await scanRun(dir, "run", racy.fingerprints, { settledBefore: latest + 1 })).hashed).toBe(1);

    const trusted = await scanRun(dir, "run", {}, { settledBefore: latest + 1 });
    expect(trusted.fingerprints["run.json"]?.ctimeMs).toBe(fileStat.ctimeMs);
    expect(trusted.folderStat).toEqual({ mtimeMs: folderStat.mtimeMs, ctimeMs: folderStat.ctimeMs, ino: folderStat.ino });
    const again = await scanRun(dir, "run", trusted.fingerprints, { settledBefore: latest + 1, folderStat: trusted.folderStat });
    expect(again).toMatchObject({ listed: false, hashed: 0 });
    expect(again.fingerprints).toBe(trusted.fingerprints);
    expect(again.folderStat).toBe(trusted.folderStat);

    // Without a scan start (ashcast check), nothing is trusted.
    const unknown = await scanRun(dir, "run", {});
    expect(unknown.fingerprints["run.json"]).not.toHaveProperty("ctimeMs");
    expect(unknown.folderStat).toBeUndefined();
  });

  it("trusts a time in whole seconds (a file system that keeps no finer ones) only two seconds after it", async () => {
    const dir = path.join(ws.root, "coarse");
    await mkdir(path.join(dir, "run"), { recursive: true });
    const file = path.join(dir, "run", "run.json");
    await writeFile(file, "{}");
    const whole = Math.ceil(Date.now() / 1000) * 1000 + 10_000; // whole seconds, after the file's ctime
    await utimes(file, whole / 1000, whole / 1000);
    const { ctimeMs, mtimeMs } = await stat(file);
    expect(mtimeMs).toBe(whole);
    expect((await scanRun(dir, "run", {}, { settledBefore: whole + 1999 })).fingerprints["run.json"]).not.toHaveProperty("ctimeMs");
    expect((await scanRun(dir, "run", {}, { settledBefore: whole + 2001 })).fingerprints["run.json"]?.ctimeMs).toBe(ctimeMs);
  });
});

describe("scanRuns: model output to be read", () => {
  /** The file system's clock now: what was written before it is trusted by the next scan (ScanOptions.settledBefore). */
  async function fileSystemNow(): Promise<number> {
    await settle();
    const probe = path.join(ws.root, "clock-now");
    await writeFile(probe, "");
    return (await stat(probe)).ctimeMs;
  }

  it("tells the build once, before hashing, when a new or changed file is named as model output, and never otherwise", async () => {
    let told = 0;
    let cache: Record<string, FolderFingerprints> = {};
    const scan = async (): Promise<ScannedFolder[]> => {
      const scanned = await scanRuns(ws.runsDir, listRunFolders(ws.runsDir), cache, { settledBefore: await fileSystemNow(), beforeModelOutputRead: () => told++ });
      cache = Object.fromEntries(scanned.map((entry) => [entry.run.folder, entry.fingerprints]));
      return scanned;
    };
    await scan();
    expect(told).toBe(0); // KML runs: nothing for the build's workers to read

    const model = path.join(runs[0]!.dir, "eemep_hour_20240501T120000.nc");
    await writeFile(model, "model output, as far as its name goes");
    await writeFile(path.join(runs[1]!.dir, "snap_20240502T120000.NC4"), "and this one");
    const added = await scan();
    expect(told).toBe(1);
    expect(added.reduce((sum, entry) => sum + entry.hashed, 0)).toBe(2);

    await scan();
    expect(told).toBe(1); // unchanged: not read again

    await editManifest(runs[2]!.dir, (m) => ({ ...m, description: "Askja, second look" }));
    await scan();
    expect(told).toBe(1); // a changed manifest beside no model output

    await writeFile(model, "model output, corrected");
    await scan();
    expect(told).toBe(2);
  });
});
