/** state.json on disk: each build written once, read back as the same state (exact values). */
import { describe, expect, it } from "vitest";
import { BUILD_STATE_FORMAT, decodeState, emptyState, encodeState, type BuildState, type RunBuild } from "../../src/build/buildState.ts";

const build = (reftime: string, dir: string): RunBuild => ({
  inputs: `inputs-${dir}`,
  reftime,
  type: "Exercise",
  contentSha256: `sha-${dir}`,
  dir: `runs/${dir}`,
  json: "model.json",
  volcano: { name: "Hekla", lat: 63.98, lon: -19.7 },
});

function sampleState(): BuildState {
  const served = build("2024-05-01T12:00:00Z", "a");
  const fixedLater = build("2024-05-02T00:00:00Z", "b-new");
  const lastGood = build("2024-05-02T00:00:00Z", "b-old");
  return {
    ...emptyState("pipeline-key"),
    runs: {
      // served: its last good build is its current build, the same object
      "2024-05-01-hekla": { inputs: "i1", issues: [], waiting: false, current: served, lastGood: served },
      // turned bad and fixed differently: two distinct builds
      "2024-05-02-katla": { inputs: "i2", issues: [], waiting: false, current: fixedLater, lastGood: lastGood },
      // invalid now, last good version kept
      "2024-05-03-eyja": { inputs: "i3", issues: [{ severity: "error", file: "2024-05-03-eyja/run.json", message: "no type", fix: "add one" }], waiting: false, lastGood: build("2024-05-03T00:00:00Z", "c") },
      // never valid
      "2024-05-04-askja": { inputs: "i4", issues: [], waiting: true },
    },
    published: { "2024-05-01T12:00:00Z": "2024-05-01-hekla" },
  };
}

describe("encodeState / decodeState", () => {
  it("writes a served run's build once and reads the same state back, sharing the object again", () => {
    const state = sampleState();
    const text = encodeState(state);
    expect(text.endsWith("\n")).toBe(true);
    const stored = JSON.parse(text) as { format: number; runs: Record<string, { lastGood?: unknown }> };
    expect(stored.format).toBe(BUILD_STATE_FORMAT);
    expect(stored.runs["2024-05-01-hekla"]!.lastGood).toBe("current");
    expect(stored.runs["2024-05-02-katla"]!.lastGood).toMatchObject({ dir: "runs/b-old" });
    expect(text.match(/runs\/a"/g)).toHaveLength(1);
    const decoded = decodeState(text)!;
    expect(decoded).toEqual(state);
    const hekla = decoded.runs["2024-05-01-hekla"]!;
    expect(hekla.lastGood).toBe(hekla.current);
  });

  it("refuses what this version did not write: other formats, a dangling reference, broken JSON", () => {
    const text = encodeState(sampleState());
    expect(decodeState(text.replace(`"format":${BUILD_STATE_FORMAT}`, '"format":2'))).toBeUndefined();
    const dangling = JSON.parse(text) as { runs: Record<string, Record<string, unknown>> };
    delete dangling.runs["2024-05-01-hekla"]!.current;
    expect(decodeState(JSON.stringify(dangling))).toBeUndefined();
    expect(decodeState(text.slice(0, -20))).toBeUndefined();
  });
});
