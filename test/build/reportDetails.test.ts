/** The details a forecaster reads in the report: where a JSON error is, which key is unknown, linked folders. */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { PUBLIC_URL, fixedClock, makeWorkspace, writeKmlRun, type Workspace } from "./runFixtures.ts";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const buildAt = (at: string) => build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL, now: fixedClock(at) });

describe("report details", () => {
  it("gives the line and column of a JSON syntax error", async () => {
    await mkdir(path.join(ws.runsDir, "broken"));
    await writeFile(path.join(ws.runsDir, "broken/run.json"), '{\n  "type": "Exercise",\n  "reftime": "2024-05-01T12:00:00Z"\n  "description": "x"\n}\n');
    const result = await buildAt("2024-06-01T08:00:00Z");
    const issue = result.report.runs[0]!.issues[0]!;
    expect(issue.file).toBe("broken/run.json");
    expect(issue.message).toMatch(/\(line 4, column 3\)$/);
  });

  it("names an unknown key of run.json as the field", async () => {
    await writeKmlRun(ws.runsDir, "typo", { manifest: { colour: "red" } });
    const result = await buildAt("2024-06-01T08:00:00Z");
    expect(result.report.runs[0]!.issues).toContainEqual(expect.objectContaining({ severity: "error", file: "typo/run.json", field: "colour" }));
  });

  it("reports a run folder that is a symbolic link instead of skipping it silently", async () => {
    const elsewhere = await writeKmlRun(path.dirname(ws.runsDir), "outside-runs");
    await symlink(path.join(path.dirname(ws.runsDir), "outside-runs"), path.join(ws.runsDir, "linked"));
    const result = await buildAt("2024-06-01T08:00:00Z");
    expect(elsewhere).toBeDefined();
    const linked = result.report.runs.find((run) => run.folder === "linked");
    expect(linked?.status).toBe("invalid");
    expect(linked?.issues[0]).toMatchObject({ severity: "error", file: "linked" });
    expect(linked?.issues[0]?.message).toMatch(/symbolic link/);
    // Only that: its files were never read, so nothing is said of a run.json missing its fields.
    expect(linked?.issues).toHaveLength(1);
    expect(result.report.counts.published).toBe(0);
  });

  it("returns this build's report when nothing changed, not the stored one", async () => {
    await writeKmlRun(ws.runsDir, "a");
    const first = await buildAt("2024-06-01T08:00:00Z");
    const second = await buildAt("2024-06-01T09:00:00Z");
    expect(second.published).toBe(false);
    expect(second.release).toBe(first.release);
    expect(first.report.counts.rebuilt).toBe(1);
    expect(second.report.counts.rebuilt).toBe(0);
    expect(second.report.built).toBe("2024-06-01T09:00:00Z");
    expect(second.report.runs[0]).toMatchObject({ folder: "a", status: "published" });
    expect(second.report.runs[0]!.rebuilt).toBeUndefined();
  });
});
