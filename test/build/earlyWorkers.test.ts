/**
 * The hint that starts a one-off build's step workers early (src/build/earlyWorkers.ts): the model output files
 * that arrived after the served release, by their write or by their move into the folder; never forecaster KML,
 * model output older than the release, or anything of a runs directory that is not there.
 */
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { modelOutputSinceRelease } from "../../src/build/earlyWorkers.ts";
import { scanRun } from "../../src/build/scanRuns.ts";

let root: string;
let runsDir: string;
let distDir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "ashcast-early-"));
  runsDir = path.join(root, "runs");
  distDir = path.join(root, "dist");
  await mkdir(path.join(runsDir, "2026-06-01-hekla"), { recursive: true });
  await mkdir(path.join(distDir, "releases", "r1"), { recursive: true });
  await writeFile(path.join(runsDir, "2026-06-01-hekla", "advisory.kml"), "<kml/>");
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** A release switched to at `seconds` (the `current` link's own time, as a switch leaves it). */
async function releasedAt(seconds: number): Promise<void> {
  const link = path.join(distDir, "current");
  await symlink("releases/r1", link);
  const { execFileSync } = await import("node:child_process");
  execFileSync("touch", ["-h", "-d", `@${seconds}`, link]);
}

const NOW = Math.floor(Date.now() / 1000);

describe("modelOutputSinceRelease", () => {
  it("names model output when nothing is served yet, and not KML", async () => {
    expect(modelOutputSinceRelease(runsDir, distDir)).toEqual([]);
    await writeFile(path.join(runsDir, "2026-06-01-hekla", "eemep_hour_20260601T000000.nc"), "CDF");
    // Named as the scan names it, for the reader to find the description asked for under that name.
    const scanned = (await scanRun(runsDir, "2026-06-01-hekla", {})).run.files.find((file) => file.name === "eemep_hour_20260601T000000.nc");
    expect(modelOutputSinceRelease(runsDir, distDir)).toEqual([{ path: scanned?.absolutePath, displayPath: "2026-06-01-hekla/eemep_hour_20260601T000000.nc" }]);
    expect(scanned?.absolutePath).toBe(path.join(runsDir, "2026-06-01-hekla", "eemep_hour_20260601T000000.nc"));
  });

  it("compares with the time the served release was switched to", async () => {
    const file = path.join(runsDir, "2026-06-01-hekla", "eemep_hour_20260601T000000.nc");
    await writeFile(file, "CDF");
    await releasedAt(NOW + 3600);
    expect(modelOutputSinceRelease(runsDir, distDir), "written before the release").toEqual([]);
    await rm(path.join(distDir, "current"));
    await releasedAt(NOW - 3600);
    expect(modelOutputSinceRelease(runsDir, distDir).map((file) => file.path), "written after it").toEqual([file]);
  });

  it("sees a file moved in with an old modification time (its change time is the move's)", async () => {
    await releasedAt(NOW - 60);
    const outside = path.join(root, "eemep_hour_20260601T000000.nc");
    await writeFile(outside, "CDF");
    await utimes(outside, NOW - 86_400, NOW - 86_400);
    await rename(outside, path.join(runsDir, "2026-06-01-hekla", "eemep_hour_20260601T000000.nc"));
    expect(modelOutputSinceRelease(runsDir, distDir)).toHaveLength(1);
  });

  it("is false, not an error, for a runs directory that is not there", async () => {
    expect(modelOutputSinceRelease(path.join(root, "missing"), distDir)).toEqual([]);
  });
});
