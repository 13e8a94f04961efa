/**
 * A run folder without run.json: the errors say the file is missing and how to make one, rather than to add
 * members to a file that is not there; with run.json present, to add the member (src/build/assembleRun.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check } from "../../src/build/check.ts";
import { newRun } from "../../src/cli/newRun.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "ashcast-manifest-"));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("a run folder's missing run.json", () => {
  it("is named as missing, with new-run as the way to start one; a run.json without a type says to add it", async () => {
    await newRun({ runsDir: scratch, name: "2026-07-01-hekla", type: "Exercise", reftime: "2026-07-01T06:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7 } });
    const folder = path.join(scratch, "2026-07-01-hekla");
    await rm(path.join(folder, "run.json"));
    const without = await check(folder);
    const type = without.runs[0]!.issues.find((issue) => issue.field === "type")!;
    expect(type.message).toBe("the run has no type");
    expect(type.fix).toBe('create run.json (the folder has none; `ashcast new-run` writes a run to start from) with "type": "Exercise", "Rehearsal" or "Real Eruption" (a run type is never guessed)');
    expect(without.runs[0]!.issues.find((issue) => issue.field === "reftime")?.fix).toMatch(/^create run\.json \(the folder has none; .*\) with "reftime"/);

    await writeFile(path.join(folder, "run.json"), JSON.stringify({ reftime: "2026-07-01T06:00:00Z", description: "Hekla exercise." }));
    const untyped = await check(folder);
    expect(untyped.runs[0]!.issues.find((issue) => issue.field === "type")?.fix).toBe('add "type": "Exercise", "Rehearsal" or "Real Eruption" to run.json (a run type is never guessed)');
  });
});
