/**
 * The release's run list in content-addressed chunks (dist/index/): read back whole, shared between
 * releases, and refused, with the file named, when a chunk is missing, damaged or does not match the index.
 */
import { readFile, readlink, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import { chunkName } from "../../src/formats/contentChunks.ts";
import { ReleaseSource } from "../../src/server/releaseSource.ts";
import { editManifest, fixedClock, makeWorkspace, PUBLIC_URL, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
const FOLDERS = Array.from({ length: 12 }, (_, i) => ({ folder: `2024-05-${String(i + 1).padStart(2, "0")}-hekla`, reftime: `2024-05-${String(i + 1).padStart(2, "0")}T12:00:00Z` }));

beforeEach(async () => {
  ws = await makeWorkspace("ashcast-index-");
  for (const { folder, reftime } of FOLDERS) await writeKmlRun(ws.runsDir, folder, { reftime });
  await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
});
afterEach(async () => {
  await ws.cleanup();
});

const releaseDir = async () => path.resolve(ws.distDir, await readlink(path.join(ws.distDir, "current")));
const storedIndex = async () => JSON.parse(await readFile(path.join(await releaseDir(), "index.json"), "utf8")) as { runChunks: string[]; reftimes: string[]; runs?: unknown };

describe("the release's run list in chunks", () => {
  it("index.json names its chunks instead of listing the runs, and reading joins them into one list, oldest first", async () => {
    const stored = await storedIndex();
    expect(stored.runs).toBeUndefined();
    expect(stored.runChunks.length).toBeGreaterThan(1);
    for (const name of stored.runChunks) expect(chunkName(await readFile(path.join(ws.distDir, "index", name), "utf8"))).toBe(name);
    const index = await readReleaseIndex(ws.distDir, await releaseDir());
    expect(Object.keys(index.runs)).toEqual(FOLDERS.map((f) => f.reftime));
    expect(index.runs[FOLDERS[3]!.reftime]).toMatchObject({ reftime: FOLDERS[3]!.reftime, source: FOLDERS[3]!.folder, type: "Exercise" });
  });

  it("a change to one run writes one new chunk; the release shares the others with the one before", async () => {
    const before = (await storedIndex()).runChunks;
    await editManifest(path.join(ws.runsDir, FOLDERS[5]!.folder), (m) => ({ ...m, description: "edited" }));
    expect((await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T09:00:00Z") })).published).toBe(true);
    const after = (await storedIndex()).runChunks;
    expect(after).toHaveLength(before.length);
    expect(after.filter((name) => !before.includes(name))).toHaveLength(1);
  });

  it("reads a release of the format before (its runs inline in index.json): the server serves it, and the next build keeps every run and writes chunks", async () => {
    const dir = await releaseDir();
    const current = await readReleaseIndex(ws.distDir, dir);
    const { runChunks: _chunks, format: _format, ...rest } = current;
    await writeFile(path.join(dir, "index.json"), `${JSON.stringify({ format: 2, ...rest })}\n`);
    await rm(path.join(ws.distDir, "index"), { recursive: true }); // the format before had no chunks

    const source = await ReleaseSource.open({ distDir: ws.distDir, pollMs: 60_000 });
    expect(source.current?.index.runs).toEqual(current.runs);
    expect(source.current?.latest).toBe(FOLDERS.at(-1)!.reftime);
    source.close();

    await editManifest(path.join(ws.runsDir, FOLDERS[2]!.folder), (m) => ({ ...m, description: "edited after the upgrade" }));
    const next = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T09:00:00Z") });
    expect(next.report.counts.rebuilt).toBe(1);
    expect((await storedIndex()).runChunks.length).toBeGreaterThan(1);
    expect(Object.keys((await readReleaseIndex(ws.distDir, await releaseDir())).runs)).toEqual(FOLDERS.map((f) => f.reftime));
  });

  it("refuses a chunk that was changed, one that is missing, and an index whose chunks do not hold its reftimes, naming the file", async () => {
    const dir = await releaseDir();
    const [first, second] = (await storedIndex()).runChunks;
    const firstFile = path.join(ws.distDir, "index", first!);
    const original = await readFile(firstFile, "utf8");

    await writeFile(firstFile, original.replace(/"Exercise"/, '"Real Eruption"'));
    await expect(readReleaseIndex(ws.distDir, dir)).rejects.toThrow(`${firstFile} does not hold the content its name says`);
    await writeFile(firstFile, original);

    await rm(path.join(ws.distDir, "index", second!));
    await expect(readReleaseIndex(ws.distDir, dir)).rejects.toThrow(/ENOENT/);

    // An index naming only some of its chunks: fewer runs than reftimes.
    const indexFile = path.join(dir, "index.json");
    const stored = JSON.parse(await readFile(indexFile, "utf8")) as { runChunks: string[] };
    await writeFile(indexFile, JSON.stringify({ ...stored, runChunks: [first] }));
    await expect(readReleaseIndex(ws.distDir, dir)).rejects.toThrow(new RegExp(`${indexFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} lists ${FOLDERS.length} reftime\\(s\\) but its run chunks hold \\d+`));

    await writeFile(indexFile, JSON.stringify({ ...stored, runChunks: [first, first] }));
    await expect(readReleaseIndex(ws.distDir, dir)).rejects.toThrow(/two of its run chunks list/);
  });
});
