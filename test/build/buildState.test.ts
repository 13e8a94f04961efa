/** state.json and its chunks on disk: each build written once, read back as the same state (exact values). */
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { BUILD_STATE_FORMAT, decodeState, emptyState, encodeState, STATE_BUCKETS, type BuildState, type EncodedState, type RunBuild } from "../../src/build/buildState.ts";

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

/** The chunks of an encoding as the reader decodeState takes. */
const reader = (encoded: EncodedState) => (name: string) => encoded.chunks.find((chunk) => chunk.name === name)?.text;

describe("encodeState / decodeState", () => {
  it("writes a served run's build once and reads the same state back, sharing the object again", () => {
    const state = sampleState();
    const encoded = encodeState(state);
    expect(encoded.head.endsWith("\n")).toBe(true);
    const head = JSON.parse(encoded.head) as { format: number; chunks: string[]; runs?: unknown };
    expect(head.format).toBe(BUILD_STATE_FORMAT);
    expect(head.runs).toBeUndefined();
    expect(head.chunks).toEqual(encoded.chunks.map((chunk) => chunk.name));
    const runs = Object.assign({}, ...encoded.chunks.map((chunk) => (JSON.parse(chunk.text) as { runs: object }).runs)) as Record<string, { lastGood?: unknown }>;
    expect(Object.keys(runs).sort()).toEqual(Object.keys(state.runs).sort());
    expect(runs["2024-05-01-hekla"]!.lastGood).toBe("current");
    expect(runs["2024-05-02-katla"]!.lastGood).toMatchObject({ dir: "runs/b-old" });
    expect(encoded.chunks.map((chunk) => chunk.text).join("").match(/runs\/a"/g)).toHaveLength(1);
    const decoded = decodeState(encoded.head, reader(encoded))!;
    expect(decoded).toEqual(state);
    const hekla = decoded.runs["2024-05-01-hekla"]!;
    expect(hekla.lastGood).toBe(hekla.current);
  });

  it("names each chunk by its content, and a change to one run changes one chunk only", () => {
    const state = sampleState();
    const before = encodeState(state);
    for (const chunk of before.chunks) expect(chunk.name).toBe(`${createHash("sha256").update(chunk.text).digest("hex").slice(0, 32)}.json`);
    // 200 folders spread over the buckets; then one of them changes.
    const many: BuildState = { ...state, runs: { ...state.runs }, files: {} };
    for (let i = 0; i < 200; i++) many.runs[`2024-06-${String(i).padStart(3, "0")}-run`] = { inputs: `i${i}`, issues: [], waiting: true };
    const first = encodeState(many);
    expect(first.chunks.length).toBeGreaterThan(STATE_BUCKETS / 2);
    const changed: BuildState = { ...many, runs: { ...many.runs, "2024-06-007-run": { inputs: "changed", issues: [], waiting: true } } };
    const second = encodeState(changed);
    const firstNames = new Set(first.chunks.map((chunk) => chunk.name));
    expect(second.chunks.filter((chunk) => !firstNames.has(chunk.name))).toHaveLength(1);
    expect(second.chunks.length).toBe(first.chunks.length);
    expect(decodeState(second.head, reader(second))).toEqual(changed);
  });

  it("refuses what this version did not write: other formats, a missing or broken chunk, a dangling reference, broken JSON", () => {
    const encoded = encodeState(sampleState());
    expect(decodeState(encoded.head.replace(`"format":${BUILD_STATE_FORMAT}`, '"format":2'), reader(encoded))).toBeUndefined();
    expect(decodeState(encoded.head, () => undefined)).toBeUndefined();
    expect(decodeState(encoded.head, (name) => reader(encoded)(name)?.slice(0, -20))).toBeUndefined();
    const dangling = (name: string) => {
      const chunk = JSON.parse(reader(encoded)(name)!) as { runs: Record<string, Record<string, unknown>> };
      if (chunk.runs["2024-05-01-hekla"]) delete chunk.runs["2024-05-01-hekla"].current;
      return JSON.stringify(chunk);
    };
    expect(decodeState(encoded.head, dangling)).toBeUndefined();
    expect(decodeState(encoded.head.slice(0, -20), reader(encoded))).toBeUndefined();
  });
});
