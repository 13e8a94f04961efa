/**
 * What operators' tools leave in runs/, on real files: rsync's hidden temporaries while it delivers over a
 * published run, names that are not UTF-8 (a Latin-1 zip from Windows), a file the service's user cannot read.
 * Each makes its own run wait or fail, naming the entry and the fix; the other runs are published.
 */
import { spawnSync } from "node:child_process";
import { chmod, chown, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { slugify } from "../../src/build/artefactNames.ts";
import { build, type BuildResult } from "../../src/build/build.ts";
import { listRunFolders, scanRuns } from "../../src/build/scanRuns.ts";
import type { RunReport } from "../../src/contract/buildReport.ts";
import { PUBLIC_URL, fixedClock, makeWorkspace, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const buildNow = (): Promise<BuildResult> => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z") });
const runOf = (result: BuildResult, folder: string): RunReport => result.report.runs.find((r) => r.folder === folder) ?? expect.unreachable(`no report for ${folder}`);

describe("entries of runs/ that tools leave", () => {
  it("rsync delivering over a published run (its hidden .name.XXXXXX beside files already renamed): the run waits with its last good version", async () => {
    const run = await writeKmlRun(ws.runsDir, "hekla", { reftime: "2024-05-01T12:00:00Z", manifest: { description: "First version." } });
    expect(runOf(await buildNow(), "hekla").status).toBe("published");
    // rsync has renamed the new run.json into place; the KML is still in its temporary.
    const manifest = JSON.parse(await readFile(path.join(run.dir, "run.json"), "utf8")) as Record<string, unknown>;
    await writeFile(path.join(run.dir, "run.json"), JSON.stringify({ ...manifest, description: "Second version." }));
    const kml = await readFile(path.join(run.dir, "advisory.kml"), "utf8");
    await writeFile(path.join(run.dir, ".advisory.kml.Xq3b9Z"), kml.slice(0, kml.length / 2));
    const during = await buildNow();
    expect(runOf(during, "hekla")).toMatchObject({ status: "kept-last-good" }); // waiting, its last good version served
    expect(runOf(during, "hekla").issues[0]).toMatchObject({ severity: "warning", message: "files are still arriving (.advisory.kml.Xq3b9Z)" });
    // rsync renames the finished temporary over the file: the second version, whole.
    await writeFile(path.join(run.dir, ".advisory.kml.Xq3b9Z"), kml);
    await rename(path.join(run.dir, ".advisory.kml.Xq3b9Z"), path.join(run.dir, "advisory.kml"));
    const after = await buildNow();
    expect(runOf(after, "hekla").status).toBe("published");
    expect(runOf(after, "hekla").issues).toEqual([]);
  });

  it("a folder or a file whose name is not UTF-8: that run is invalid, naming it and how to rename it; the others publish", async () => {
    await writeKmlRun(ws.runsDir, "good", { reftime: "2024-05-02T12:00:00Z" });
    // "café-run" and "b\xff.kml" as a Latin-1 archive writes them: bytes that are not UTF-8.
    const latin1Folder = Buffer.concat([Buffer.from(ws.runsDir + path.sep), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from("-run")]);
    mkdirSync(latin1Folder);
    writeFileSync(Buffer.concat([latin1Folder, Buffer.from("/run.json")]), "{}");
    const withOddFile = await writeKmlRun(ws.runsDir, "odd-file", { reftime: "2024-05-03T12:00:00Z" });
    writeFileSync(Buffer.concat([Buffer.from(withOddFile.dir + path.sep), Buffer.from([0x62, 0xff]), Buffer.from(".kml")]), "<kml/>");
    const result = await buildNow();
    expect(runOf(result, "good").status).toBe("published");
    const folder = result.report.runs.find((r) => r.folder.startsWith("caf"))!;
    expect(folder.status).toBe("invalid");
    expect(folder.issues[0]).toMatchObject({ severity: "error", message: "the folder's name is not valid UTF-8, so it cannot be read by that name", fix: expect.stringMatching(/^rename the folder with UTF-8 characters only/) });
    const odd = runOf(result, "odd-file");
    expect(odd.status).toBe("invalid");
    expect(odd.issues.find((i) => i.severity === "error")).toMatchObject({ message: "has a name that is not valid UTF-8, so it cannot be read by that name", fix: expect.stringMatching(/^rename it with UTF-8 characters only/) });
  });
});

describe("a run folder moved while the build looks at it", () => {
  it("listed, then gone before it is read: the run waits (the next build sees where it went), nothing stops", async () => {
    await writeKmlRun(ws.runsDir, "staying", { reftime: "2024-05-02T12:00:00Z" });
    const moving = await writeKmlRun(ws.runsDir, "moving", { reftime: "2024-05-03T12:00:00Z" });
    const listed = listRunFolders(ws.runsDir);
    await rename(moving.dir, path.join(ws.root, "moved-away"));
    const scanned = await scanRuns(ws.runsDir, listed, {});
    expect(scanned.map((entry) => [entry.run.folder, entry.run.partial.length > 0, entry.run.files.length > 0])).toEqual([
      ["moving", true, false],
      ["staying", false, true],
    ]);
  });
});

describe("a long file name", () => {
  it("a KML named with 245 characters (the file system's limit is 255) is published, its artefacts under a shortened name", async () => {
    const run = await writeKmlRun(ws.runsDir, "hekla", { reftime: "2024-05-01T12:00:00Z" });
    const long = `${"a".repeat(245)}.kml`;
    await rename(path.join(run.dir, "advisory.kml"), path.join(run.dir, long));
    const manifest = JSON.parse(await readFile(path.join(run.dir, "run.json"), "utf8")) as { layergroups?: Array<{ layers: Array<{ file?: string }> }> };
    for (const layer of manifest.layergroups?.flatMap((g) => g.layers) ?? []) if (layer.file === "advisory.kml") layer.file = long;
    await writeFile(path.join(run.dir, "run.json"), JSON.stringify(manifest));
    const result = await buildNow();
    expect(runOf(result, "hekla").status).toBe("published");
    expect(slugify(long.replace(/\.kml$/, ""))).toMatch(/^a{91}-[0-9a-f]{8}$/);
    expect(slugify("a".repeat(100))).toBe("a".repeat(100));
  });
});

describe("a run.json misspelled", () => {
  it.each(["RUN.JSON", "run.json ", "run.js\u03bfn", "run (1).json"])("%j: the run has no run.json, said as an error (the default run type never stands in for it)", async (name) => {
    const run = await writeKmlRun(ws.runsDir, "hekla", { reftime: "2024-05-01T12:00:00Z" });
    await rename(path.join(run.dir, "run.json"), path.join(run.dir, name));
    const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock("2024-06-01T08:00:00Z"), defaultRunType: "Exercise" });
    const report = runOf(result, "hekla");
    expect(report.status).toBe("invalid");
    expect(report.issues).toContainEqual(expect.objectContaining({ severity: "error", file: `hekla/${name}`, message: `the run has no run.json, and this file looks like it (a name of ${JSON.stringify(name)})`, fix: "rename it to run.json exactly (lower case, no spaces, Latin letters)" }));
  });
});

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const asNobody = spawnSync("setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", "true"]).status === 0;

describe.skipIf(!asNobody)("a file the service's user cannot read (ashcast build as nobody)", () => {
  it("makes its own run invalid, naming the file and the fix; the other runs are published", async () => {
    await writeKmlRun(ws.runsDir, "readable", { reftime: "2024-05-02T12:00:00Z" });
    const locked = await writeKmlRun(ws.runsDir, "locked", { reftime: "2024-05-03T12:00:00Z" });
    await mkdir(ws.distDir, { recursive: true });
    await chown(ws.distDir, 65534, 65534);
    for (const dir of [ws.root, ws.runsDir]) await chmod(dir, 0o755);
    await chmod(path.join(locked.dir, "advisory.kml"), 0o000);
    const built = spawnSync("setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", path.join(ROOT, "bin/ashcast"), "build", "--runs", ws.runsDir, "--out", ws.distDir], { cwd: ws.root, encoding: "utf8", env: { ...process.env, HOME: "/tmp" } });
    expect(built.stderr).not.toMatch(/Internal error/);
    expect(built.stdout).toMatch(/ERROR locked\/advisory\.kml: cannot be read \(permission denied\)\. Fix: give the user ashcast runs as read access to it/);
    expect(built.stdout).toMatch(/published .*2024-05-02T12:00:00Z/);
    expect(built.status).toBe(1);
  });

  it("a dist/ it may not write: a user error naming the path and the fix, exit 2, not an internal error", async () => {
    await writeKmlRun(ws.runsDir, "readable", { reftime: "2024-05-02T12:00:00Z" });
    await mkdir(ws.distDir, { recursive: true });
    for (const dir of [ws.root, ws.runsDir, ws.distDir]) await chmod(dir, 0o755); // dist/ root's, not nobody's
    const built = spawnSync("setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", path.join(ROOT, "bin/ashcast"), "build", "--runs", ws.runsDir, "--out", ws.distDir], { cwd: ws.root, encoding: "utf8", env: { ...process.env, HOME: "/tmp" } });
    expect(built.stderr).not.toMatch(/Internal error/);
    expect(built.stderr).toMatch(/permission denied \(EACCES.*\)[\s\S]*give the user ashcast runs as access to it \(dist\/ must be writable/);
    expect(built.status).toBe(2);
  });
});
