import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const scratch: string[] = [];
afterAll(async () => {
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

describe("the bundled sample runs", () => {
  it("publish one run of each type, with no error or warning", async () => {
    const dist = await mkdtemp(path.join(tmpdir(), "ashcast-samples-"));
    scratch.push(dist);
    const result = await build({ runsDir: path.join(ROOT, "runs"), distDir: dist, publicUrl: "https://example.org/volcanicashforecast/0.1" });
    expect(result.report.runs.map((r) => [r.status, r.type, r.issues.length])).toEqual([
      ["published", "Real Eruption", 0],
      ["published", "Exercise", 0],
      ["published", "Rehearsal", 0],
    ]);
    expect(result.report.counts.published).toBe(3);
  });

  it("are exactly what scripts/make-sample-runs.ts writes (deterministic, regenerable)", async () => {
    const out = await mkdtemp(path.join(tmpdir(), "ashcast-samples-gen-"));
    scratch.push(out);
    await run(process.execPath, [path.join(ROOT, "scripts/make-sample-runs.ts"), out], { cwd: ROOT });
    const folders = (await readdir(out)).sort();
    expect(folders).toEqual(["2010-04-15-eyjafjallajokull", "2026-03-14-hekla-exercise", "2026-05-02-katla-rehearsal"]);
    for (const folder of folders) {
      for (const file of (await readdir(path.join(out, folder))).sort()) {
        const regenerated = await readFile(path.join(out, folder, file));
        expect(regenerated.equals(await readFile(path.join(ROOT, "runs", folder, file))), `${folder}/${file} differs from a fresh run of the script`).toBe(true);
      }
      expect((await readdir(path.join(ROOT, "runs", folder))).sort()).toEqual((await readdir(path.join(out, folder))).sort());
    }
  });
});
