/**
 * The /point answer as the server writes it (src/server/pointQuery.ts): UTF-8 bytes in a buffer reused from
 * answer to answer, from pieces each grid made once, a run of steps without ash copied as one slice. Checked
 * against the values the grid was made from, with a file name outside ASCII, and the buffer's hand-over.
 */
import { describe, expect, it } from "vitest";
import type { PointAnswer } from "../../src/contract/queries.ts";
import { decodeConcentration, encodeConcentration } from "../../src/formats/concentrationCodes.ts";
import { PointGridStore } from "../../src/server/pointGrids.ts";
import { answerPoint, keepLastAnswer } from "../../src/server/pointQuery.ts";
import { pointGridKeyPrefix } from "../../src/contract/pointGrid.ts";
import { RUN_ARTEFACTS_FORMAT, type RunArtefacts } from "../../src/contract/releaseIndex.ts";
import { axis, testGrid, testGridBytes } from "./routeGrid.ts";

const times = axis(0, 1, 8).map((h) => `2026-06-01T0${h}:00:00Z`);
/** Ash in band 1 at the cell (−20, 60) at steps 2, 3 and 6 only: runs of steps without ash before, between and after. */
const ASH: Record<number, number> = { 2: 0.5, 3: 3.25, 6: 12 };
const spec = (source?: string) => ({
  lon: axis(-30, 1, 21),
  lat: axis(50, 1, 21),
  times,
  end: "2026-06-01T08:00:00Z",
  value: (b: number, t: number, lon: number, lat: number) => (b === 1 && lon === -20 && lat === 60 ? (ASH[t] ?? 0) : 0),
  ...(source ? { source } : {}),
});

/** The answer's bytes as they are (a view the next answer overwrites). */
function answerBytes(source?: string, lat = 60): Buffer {
  const result = answerPoint(times[0]!, [testGrid(spec(source))], lat, -20, undefined);
  if ("kind" in result) throw new Error(result.detail);
  return result;
}
const answer = (source?: string): string => answerBytes(source).toString("utf8");

describe("the /point answer", () => {
  it("is JSON whose steps read the grid's values, ash and runs without it alike", () => {
    const text = answer();
    const parsed = JSON.parse(text) as PointAnswer;
    expect(parsed.series.map((s) => s.steps.length)).toEqual([8, 8, 8]);
    parsed.series.forEach((series, b) =>
      series.steps.forEach((step, t) => {
        expect(step.time).toBe(times[t]);
        const expected = b === 1 ? (ASH[t] ?? 0) : 0;
        expect(step.value).toBe(expected === 0 ? 0 : decodeConcentration(encodeConcentration(expected)));
        expect(step.class).toBe(expected === 0 ? "none" : expected < 2 ? "low" : expected < 4 ? "medium" : "high");
      }),
    );
  });

  it("between centres, takes the highest of cells in a block without ash and a block with it, whichever holds it", () => {
    // Blocks are 8 cells wide: lon −23 is the last column of block 0, −22 the first of block 1. A place at
    // (60.2, −22.6) lies between the four centres (−23 | −22, 60 | 61); only one of them has ash, at step 2.
    for (const ashLon of [-22, -23]) {
      const grid = testGrid({ ...spec(), value: (b, t, lon, lat) => (b === 1 && t === 2 && lon === ashLon && lat === 60 ? 3.25 : 0) });
      const result = answerPoint(times[0]!, [grid], 60.2, -22.6, undefined);
      if ("kind" in result) throw new Error(result.detail);
      const parsed = JSON.parse(result.toString("utf8")) as PointAnswer & { series: Array<{ support: unknown }> };
      expect(parsed.series[1]!.support).toEqual([{ x: 7, y: 10 }, { x: 8, y: 10 }, { x: 7, y: 11 }, { x: 8, y: 11 }]);
      expect(parsed.series[1]!.steps.map((step) => step.value)).toEqual(times.map((_, t) => (t === 2 ? decodeConcentration(encodeConcentration(3.25)) : 0)));
      expect(parsed.series[0]!.steps.map((step) => step.class)).toEqual(times.map(() => "none"));
      // The step valid at a time, alone, likewise.
      const atStep = answerPoint(times[0]!, [grid], 60.2, -22.6, { iso: times[2]!, ms: Date.parse(times[2]!) });
      if ("kind" in atStep) throw new Error(atStep.detail);
      expect((JSON.parse(atStep.toString("utf8")) as PointAnswer).series[1]!.steps).toEqual([{ time: times[2], value: decodeConcentration(encodeConcentration(3.25)), class: "medium" }]);
    }
  });

  it("writes a step without a model value as null of class missing, first, between ash and alone", () => {
    // Band 0: missing at steps 0 and 4, ash at 3 and 5 (a missing step after ash and before it); band 2 only at step 7.
    const value = (b: number, t: number, lon: number, lat: number) => {
      if (lon !== -20 || lat !== 60) return 0;
      if (b === 0) return t === 0 || t === 4 ? Number.NaN : t === 3 ? 5 : t === 5 ? 0.5 : 0;
      return b === 2 && t === 7 ? Number.NaN : 0;
    };
    const grid = testGrid({ ...spec(), value });
    const whole = answerPoint(times[0]!, [grid], 60, -20, undefined);
    if ("kind" in whole) throw new Error(whole.detail);
    const series = (JSON.parse(whole.toString("utf8")) as PointAnswer).series;
    const high = decodeConcentration(encodeConcentration(5));
    const low = decodeConcentration(encodeConcentration(0.5));
    expect(series[0]!.steps.map((step) => [step.value, step.class])).toEqual([[null, "missing"], [0, "none"], [0, "none"], [high, "high"], [null, "missing"], [low, "low"], [0, "none"], [0, "none"]]);
    expect(series[2]!.steps.map((step) => step.class)).toEqual([...times.slice(1).map(() => "none"), "missing"]);
    const alone = answerPoint(times[0]!, [grid], 60, -20, { iso: times[4]!, ms: Date.parse(times[4]!) });
    if ("kind" in alone) throw new Error(alone.detail);
    expect((JSON.parse(alone.toString("utf8")) as PointAnswer).series[0]!.steps).toEqual([{ time: times[4], value: null, class: "missing" }]);
  });

  it("writes a file name outside ASCII as UTF-8", () => {
    expect((JSON.parse(answer("Grímsvötn–øst.nc")) as PointAnswer).series[0]!.source).toBe("Grímsvötn–øst.nc");
  });

  it("writes the next answer over the last one's bytes, unless they were handed over with keepLastAnswer", () => {
    const first = answerBytes(undefined, 60);
    const firstText = first.toString("utf8");
    answerBytes(undefined, 61);
    expect(first.toString("utf8")).not.toBe(firstText); // the same buffer: a caller must send or copy at once
    const kept = answerBytes(undefined, 60);
    keepLastAnswer();
    answerBytes(undefined, 61);
    expect(kept.toString("utf8")).toBe(firstText);
    expect((JSON.parse(firstText) as PointAnswer).location).toEqual({ lat: 60, lon: -20 });
  });
});

describe("answers remembered for places asked again", () => {
  it("keeps a copy of an answer only when its query comes a second time, and sends that copy from the third on", () => {
    const store = new PointGridStore({ read: () => Promise.reject(new Error("no grids read here")) });
    const etag = '"run:60:-20"';
    const bytes = Buffer.from('{"answer":1}');
    store.rememberAnswer(etag, bytes);
    expect(store.answer(etag)).toBeUndefined(); // asked once: nothing copied
    store.rememberAnswer(etag, bytes);
    const kept = store.answer(etag);
    expect(kept?.toString()).toBe('{"answer":1}');
    bytes.write("X", 2); // the view it was copied from is the next answer's buffer
    expect(store.answer(etag)?.toString()).toBe('{"answer":1}');
    store.rememberAnswer('"run:61:-20"', bytes); // another query in any slot: the first is at most forgotten, never another's
    const again = store.answer(etag);
    expect(again === undefined || again.toString() === '{"answer":1}').toBe(true);
    expect(store.answer('"run:61:-20"')).toBeUndefined();
  });
});

describe("grids held under the store's byte bound", () => {
  it("reads a grid dropped for another again when it is asked for, rather than keep using memory it no longer counts", async () => {
    const bytes = testGridBytes(spec());
    const reads: string[] = [];
    // A bound below one grid: each grid loaded drops the one before.
    const store = new PointGridStore({ read: async (stored) => (reads.push(stored.file), bytes), maxGridBytes: 1 });
    const run = (file: string): RunArtefacts => ({
      format: RUN_ARTEFACTS_FORMAT,
      reftime: times[0]!,
      artefacts: { [`${pointGridKeyPrefix(times[0]!)}EEMEP.grid`]: { contentType: "application/octet-stream", sha256: "0".repeat(64), identity: { file, size: bytes.length, etag: '"g"' } } },
      resources: {},
    });
    await store.gridsOf(run("a.grid"));
    const oneGrid = store.bytes;
    expect(store.gridsOf(run("a.grid"))).not.toBeInstanceOf(Promise); // held, and now the one used last
    await store.gridsOf(run("b.grid"));
    const again = store.gridsOf(run("a.grid"));
    expect(again).toBeInstanceOf(Promise);
    await again;
    expect(reads).toEqual(["a.grid", "b.grid", "a.grid"]);
    expect(store.bytes).toBe(oneGrid);
  });
});
