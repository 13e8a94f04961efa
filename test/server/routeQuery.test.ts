/**
 * answerRoute on grids made in memory, with exact expectations: a plume of known cells, step and band;
 * a route through it across the antimeridian finds it where and when it is, a route beside it or at
 * another level finds none; time along the route interpolated between vertices; leaving the domain and
 * the forecast said; without times, the highest value per step.
 */
import { describe, expect, it } from "vitest";
import type { ModelRoute, RouteAnswer } from "../../src/contract/queries.ts";
import { answerRoute, MAX_ROUTE_SAMPLES } from "../../src/server/routeQuery.ts";
import type { RouteInput } from "../../src/server/routeInput.ts";
import { arcToKm, interpolateArc } from "../../src/geo/greatCircle.ts";
import { axis, testGrid } from "./routeGrid.ts";

const T = (hh: string) => `2026-01-01T${hh}Z`;
const ms = (iso: string) => Date.parse(iso);
// Centres 170 … 190 (i.e. -170) °E by 0.5, 40 … 60 °N by 0.5; steps at 00, 01, 02, 03 (the last until 04).
const grid = testGrid({
  lon: axis(170, 0.5, 41),
  lat: axis(40, 0.5, 41),
  times: [T("00:00:00"), T("01:00:00"), T("02:00:00"), T("03:00:00")],
  end: T("04:00:00"),
  // The plume: FL200/350 only, at step 2 only, the cells centred 179 … 181 °E, 49 … 51 °N: 3 mg/m³ (medium).
  value: (b, t, lon, lat) => (b === 1 && t === 2 && lon >= 179 && lon <= 181 && lat >= 49 && lat <= 51 ? 3 : 0),
});

const FL300 = 9144;
function route(coordinates: Array<[number, number]>, altitude: number, times?: string[]): RouteInput {
  return { positions: coordinates, altitudesM: coordinates.map(() => altitude), ...(times ? { timesMs: times.map(ms) } : {}) };
}
function only(answer: ReturnType<typeof answerRoute>): ModelRoute {
  expect(answer).not.toHaveProperty("kind");
  expect((answer as RouteAnswer).models).toHaveLength(1);
  return (answer as RouteAnswer).models[0]!;
}

describe("a route through the plume, across the antimeridian", () => {
  // Along 50°N from 175°E to 175°W (185), flown from 02:00 to 03:00: the plume's step, its level.
  const crossing = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], FL300, [T("02:00:00"), T("03:00:00")])));

  it("meets it once, from just past the last clear centre west of it (178.5°E) to just before the first east of it (181.5, i.e. 178.5°W)", () => {
    expect(crossing.encounters).toHaveLength(1);
    const [encounter] = crossing.encounters!;
    expect(encounter).toMatchObject({ band: "FL200-350", class: "medium" });
    expect(encounter!.highest).toBeGreaterThanOrEqual(3);
    expect(encounter!.highest).toBeLessThanOrEqual(3 * 1.0011);
    const spacingDeg = (crossing.sampling_km / 111.2) / Math.cos((50.2 * Math.PI) / 180);
    // A place gets the highest of the centres around it, so the ash begins where the areas drawn between
    // centres begin: the first sample past 178.5, the last before -178.5 (181.5), each within one sample.
    expect(encounter!.entry.lon).toBeGreaterThan(178.5);
    expect(encounter!.entry.lon).toBeLessThanOrEqual(178.5 + spacingDeg);
    expect(encounter!.exit.lon).toBeLessThan(-178.5);
    expect(encounter!.exit.lon).toBeGreaterThanOrEqual(-178.5 - spacingDeg);
    expect(encounter!.entry.fl).toBe(300);
    expect(crossing.outside_domain).toEqual([]);
    expect(crossing.above_bands).toEqual([]);
  });

  it("at the times interpolated between the vertices: 3.5° of 10° in, 3.5° before the end (within one sample)", () => {
    const [encounter] = crossing.encounters!;
    const oneSampleMs = (60 * 60_000) / (crossing.samples - 1);
    // Along a great circle at 50°N, longitude and distance are nearly proportional (the bulge is 0.1°): 21 min and 39 min.
    expect(Math.abs(ms(encounter!.entry.time!) - ms(T("02:21:00")))).toBeLessThanOrEqual(oneSampleMs + 15_000);
    expect(Math.abs(ms(encounter!.exit.time!) - ms(T("02:39:00")))).toBeLessThanOrEqual(oneSampleMs + 15_000);
  });

  it("samples at most half a cell apart: half of 0.5° of longitude at the route's highest latitude", () => {
    expect(crossing.sampling_km).toBeLessThanOrEqual(0.25 * 111.2 * Math.cos((50.1 * Math.PI) / 180));
    expect(crossing.samples).toBeGreaterThan(10 / 0.25);
  });

  it("the highest per band and overall", () => {
    expect(crossing.bands.map((b) => [b.band, b.class])).toEqual([["FL000-200", "none"], ["FL200-350", "medium"], ["FL350-550", "none"]]);
    expect(crossing.highest).toMatchObject({ band: "FL200-350", class: "medium" });
  });
});

describe("routes that miss it", () => {
  it("beside it (45°N), at the same time and level: nothing met", () => {
    const beside = only(answerRoute("r", [grid], route([[175, 45], [-175, 45]], FL300, [T("02:00:00"), T("03:00:00")])));
    expect(beside.encounters).toEqual([]);
    expect(beside.highest?.value).toBe(0);
  });

  it("through it an hour later: the plume's step is over", () => {
    const later = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], FL300, [T("03:00:00"), T("03:59:00")])));
    expect(later.encounters).toEqual([]);
  });

  it("through it at FL100: another band", () => {
    const low = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], 3048, [T("02:00:00"), T("03:00:00")])));
    expect(low.encounters).toEqual([]);
    expect(low.bands[0]!.highest).toBe(0);
    expect(low.bands[1]!.highest).toBeNull();
  });

  it("above FL550: said, not silently clear", () => {
    const high = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], 18288, [T("02:00:00"), T("03:00:00")])));
    expect(high.encounters).toEqual([]);
    expect(high.above_bands).toHaveLength(1);
    expect(high.above_bands[0]!.from.lon).toBe(175);
  });

  it("on FL200 exactly, the edge of two bands: both count, so the plume above is met", () => {
    const edge = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], 6096, [T("02:00:00"), T("03:00:00")])));
    expect(edge.encounters).toHaveLength(1);
  });
});

describe("time along the route: every step a stretch lasts through is read", () => {
  it("a hold over the plume from 00:00 to 03:30 (no distance flown) meets it at its step, 02:00–03:00", () => {
    const hold = only(answerRoute("r", [grid], route([[180, 50], [180, 50]], FL300, [T("00:00:00"), T("03:30:00")])));
    expect(hold.encounters).toHaveLength(1);
    expect(hold.encounters![0]).toMatchObject({ band: "FL200-350", class: "medium" });
    expect(ms(hold.encounters![0]!.entry.time!)).toBeGreaterThanOrEqual(ms(T("02:00:00")));
    expect(ms(hold.encounters![0]!.exit.time!)).toBeLessThan(ms(T("03:00:00")));
    // At most one step apart within the forecast (4 hours, 1 h steps), and beyond it no more than needed.
    expect(hold.samples).toBeGreaterThanOrEqual(5);
    expect(hold.samples).toBeLessThanOrEqual(6);
  });

  it("two positions at the same instant (trackers record whole seconds): the segment is read at that instant, plume and all", () => {
    const jump = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], FL300, [T("02:30:00"), T("02:30:00")])));
    expect(jump.encounters).toHaveLength(1);
    expect(jump.encounters![0]).toMatchObject({ band: "FL200-350", class: "medium" });
    expect(jump.encounters![0]!.entry.time).toBe(T("02:30:00"));
    expect(jump.encounters![0]!.exit.time).toBe(T("02:30:00"));
    const atThree = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], FL300, [T("03:00:00"), T("03:00:00")])));
    expect(atThree.encounters).toEqual([]);
  });

  it("a slow stretch of one cell, flown over four hours, meets the plume's step too", () => {
    const slow = only(answerRoute("r", [grid], route([[179.9, 50], [180.1, 50]], FL300, [T("00:00:00"), T("04:00:00")])));
    expect(slow.encounters).toHaveLength(1);
  });
});

describe("the sampling step follows the latitudes the route reaches in the domain", () => {
  // A 0.1° grid over the North Atlantic and Europe (as the full-size EEMEP run), one step.
  const europe = testGrid({ lon: axis(-45, 0.1, 800), lat: axis(30, 0.1, 450), times: [T("00:00:00")], end: T("01:00:00"), value: () => 0 });

  it("Tokyo–London in one segment (9,600 km, up to ~67°N on the way) is answered, sampled half a cell apart there and not far closer", () => {
    const tokyoLondon = only(answerRoute("r", [europe], route([[139.7, 35.7], [-0.1, 51.5]], FL300)));
    // The narrowest cells the route crosses in the domain are at the highest latitude it reaches there.
    let highest = 0;
    for (let i = 0; i <= 20_000; i++) {
      const [lon, lat] = interpolateArc([139.7, 35.7], [-0.1, 51.5], i / 20_000);
      if (lon >= -45.05 && lon <= 34.95 && lat >= 29.95 && lat <= 74.95) highest = Math.max(highest, Math.abs(lat));
    }
    const halfCellKm = arcToKm(0.05 * Math.cos((highest * Math.PI) / 180));
    expect(tokyoLondon.sampling_km).toBeLessThanOrEqual(halfCellKm);
    expect(tokyoLondon.sampling_km).toBeGreaterThan(halfCellKm * 0.8);
    expect(tokyoLondon.samples).toBeLessThan(6_000);
  });
});

describe("leaving the domain and the forecast", () => {
  it("a route that leaves the domain says where, and meets the plume inside it", () => {
    const out = only(answerRoute("r", [grid], route([[180, 50], [180, 70]], FL300, [T("02:00:00"), T("02:30:00")])));
    expect(out.outside_domain).toHaveLength(1);
    // The last row is centred at 60°N: the domain ends at 60.25.
    expect(out.outside_domain[0]!.from.lat).toBeGreaterThan(60.25);
    expect(out.outside_domain[0]!.from.lat).toBeLessThan(60.25 + 0.3);
    expect(out.outside_domain[0]!.to.lat).toBe(70);
    expect(out.encounters).toHaveLength(1);
  });

  it("a flight longer than the forecast says which stretch is beyond it", () => {
    const long = only(answerRoute("r", [grid], route([[172, 42], [188, 42]], FL300, [T("03:00:00"), T("05:00:00")])));
    expect(long.outside_forecast).toHaveLength(1);
    expect(ms(long.outside_forecast[0]!.from.time!)).toBeGreaterThanOrEqual(ms(T("04:00:00")));
    expect(ms(long.outside_forecast[0]!.from.time!)).toBeLessThan(ms(T("04:02:00")));
    expect(long.outside_forecast[0]!.to.time).toBe(T("05:00:00"));
  });

  it("a band flown only outside the domain, or only outside the forecast, is missing, not clear", () => {
    const outside = only(answerRoute("r", [grid], route([[100, 10], [110, 12]], FL300, [T("02:00:00"), T("03:00:00")])));
    expect(outside.bands[1]).toMatchObject({ band: "FL200-350", highest: null, class: "missing" });
    const late = only(answerRoute("r", [grid], route([[172, 42], [188, 42]], FL300, [T("05:00:00"), T("06:00:00")])));
    expect(late.outside_forecast).toHaveLength(1);
    expect(late.bands.map((b) => b.class)).toEqual(["none", "missing", "none"]);
    expect(late.highest).toBeNull();
  });
});

describe("where the model gave no value", () => {
  // The same grid, but FL200/350 has no value (NaN: the fill value) at the cells centred 172 … 174 °E, every step.
  const gappy = testGrid({
    lon: axis(170, 0.5, 41),
    lat: axis(40, 0.5, 41),
    times: [T("00:00:00"), T("01:00:00"), T("02:00:00"), T("03:00:00")],
    end: T("04:00:00"),
    value: (b, t, lon, lat) => (b === 1 && lon >= 172 && lon <= 174 ? Number.NaN : b === 1 && t === 2 && lon >= 179 && lon <= 181 && lat >= 49 && lat <= 51 ? 3 : 0),
  });

  it("a timed route through the gap lists it as a stretch, from the first sample where every centre around is missing to the last", () => {
    const through = only(answerRoute("r", [gappy], route([[170.5, 50], [177, 50]], FL300, [T("02:00:00"), T("03:00:00")])));
    expect(through.missing_values).toHaveLength(1);
    const [gap] = through.missing_values!;
    const spacingDeg = through.sampling_km / 111.2 / Math.cos((50.1 * Math.PI) / 180);
    expect(gap!.from.lon).toBeGreaterThanOrEqual(172);
    expect(gap!.from.lon).toBeLessThanOrEqual(172 + spacingDeg);
    expect(gap!.to.lon).toBeLessThanOrEqual(174);
    expect(gap!.to.lon).toBeGreaterThanOrEqual(174 - spacingDeg);
    expect(through.bands[1]).toMatchObject({ band: "FL200-350", highest: 0, class: "none" }); // known, and clear, on either side
    expect(through.encounters).toEqual([]);
  });

  it("a route wholly in the gap: nothing known, said as missing, not as clear", () => {
    const inside = only(answerRoute("r", [gappy], route([[172.2, 50], [173.8, 50]], FL300, [T("02:00:00"), T("03:00:00")])));
    expect(inside.missing_values).toEqual([{ from: expect.objectContaining({ lon: 172.2 }), to: expect.objectContaining({ lon: 173.8 }) }]);
    expect(inside.highest).toBeNull();
    expect(inside.bands[1]).toMatchObject({ highest: null, class: "missing" });
    expect(inside.bands[0]).toMatchObject({ highest: null, class: "none" }); // not flown in
    // Without times: every step unknown; partly in the gap, each step says how much of what the path met is unknown.
    const untimed = only(answerRoute("r", [gappy], route([[172.2, 50], [173.8, 50]], FL300)));
    expect(untimed.steps!.map((s) => [s.value, s.class])).toEqual(gappy.header.times.map(() => [null, "missing"]));
    expect(untimed.bands[1]).toMatchObject({ highest: null, class: "missing" });
    expect(untimed.missing_values).toBeUndefined();
    const partly = only(answerRoute("r", [gappy], route([[171, 50], [175, 50]], FL300)));
    for (const step of partly.steps!) {
      expect(step.value).toBe(0);
      expect(step.missing_share).toBeGreaterThan(0.4);
      expect(step.missing_share).toBeLessThan(0.7);
    }
  });

  it("a route clear of the gap says nothing of it", () => {
    const clear = only(answerRoute("r", [gappy], route([[175, 50], [-175, 50]], FL300, [T("02:00:00"), T("03:00:00")])));
    expect(clear.missing_values).toEqual([]);
    expect(clear.encounters).toHaveLength(1);
    expect(only(answerRoute("r", [gappy], route([[175, 50], [-175, 50]], FL300))).steps!.every((s) => s.missing_share === undefined)).toBe(true);
  });
});

describe("without times: when is this route clear?", () => {
  it("per step, the highest value anywhere along the path at its levels", () => {
    const steps = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], FL300))).steps!;
    expect(steps.map((s) => [s.time, s.class])).toEqual([[T("00:00:00"), "none"], [T("01:00:00"), "none"], [T("02:00:00"), "medium"], [T("03:00:00"), "none"]]);
    expect(steps[2]!.value).toBeGreaterThanOrEqual(3);
    expect(steps[2]!.band).toBe("FL200-350");
  });

  it("where nothing along the path is known (above the bands, outside the domain), every step says so: no value, not a clear 0", () => {
    const above = only(answerRoute("r", [grid], route([[175, 50], [-175, 50]], 18288)));
    const outside = only(answerRoute("r", [grid], route([[100, 10], [110, 10]], FL300)));
    for (const answer of [above, outside]) {
      expect(answer.steps!.map((s) => [s.time, s.value, s.class, s.band])).toEqual(grid.header.times.map((time) => [time, null, "missing", null]));
      expect(answer.highest).toBeNull();
    }
    expect(above.above_bands).toHaveLength(1);
    expect(outside.outside_domain).toHaveLength(1);
    // The band flown in, with nothing known of it, is missing; the others were not flown in.
    expect(outside.bands.map((b) => [b.band, b.highest, b.class])).toEqual([["FL000-200", null, "none"], ["FL200-350", null, "missing"], ["FL350-550", null, "none"]]);
    expect(above.bands.every((b) => b.highest === null && b.class === "none")).toBe(true);
  });
});

describe("bounded work", () => {
  it("a route needing more than MAX_ROUTE_SAMPLES samples is refused before any is taken", () => {
    const around: Array<[number, number]> = Array.from({ length: 400 }, (_, i) => [i % 2 ? 179 : -1, i % 4 < 2 ? 50 : -50]);
    const answer = answerRoute("r", [grid], route(around, FL300));
    expect(answer).toMatchObject({ kind: "problem", status: 422 });
    expect((answer as { detail: string }).detail).toMatch(new RegExp(`at most ${MAX_ROUTE_SAMPLES}`));
  });
});
