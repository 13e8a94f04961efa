/**
 * The /point answer as the server writes it (src/server/pointQuery.ts): one string and its UTF-8 length, from
 * pieces each grid made once, a run of steps without ash copied as one slice. Checked against the values
 * the grid was made from, and with a file name outside ASCII (then the body cannot be written as latin1).
 */
import { describe, expect, it } from "vitest";
import type { PointAnswer } from "../../src/contract/queries.ts";
import { decodeConcentration, encodeConcentration } from "../../src/formats/concentrationCodes.ts";
import { answerPoint, type AnswerText } from "../../src/server/pointQuery.ts";
import { axis, testGrid } from "./routeGrid.ts";

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

function answer(source?: string): AnswerText {
  const result = answerPoint(times[0]!, [testGrid(spec(source))], 60, -20, undefined);
  if ("kind" in result) throw new Error(result.detail);
  return result;
}

describe("the /point answer", () => {
  it("is JSON whose steps read the grid's values, ash and runs without it alike, and its length is its UTF-8 bytes", () => {
    const { text, bytes } = answer();
    expect(bytes).toBe(Buffer.byteLength(text, "utf8"));
    expect(text.length).toBe(bytes); // ASCII: the fast path writes it as latin1
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

  it("counts the bytes of a file name outside ASCII, so Content-Length is right and the body is not written as latin1", () => {
    const { text, bytes } = answer("Grímsvötn–øst.nc");
    expect(bytes).toBe(Buffer.byteLength(text, "utf8"));
    expect(bytes).toBeGreaterThan(text.length);
    expect((JSON.parse(text) as PointAnswer).series[0]!.source).toBe("Grímsvötn–øst.nc");
  });
});
