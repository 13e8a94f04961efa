/**
 * The area a run's maps show: the published box and the volcano with a margin, kept whole across the
 * antimeridian (east < west) so that ash east of 180° is drawn, not cut at the frame.
 */
import { describe, expect, it } from "vitest";
import { mapBox } from "../../src/build/renderModelOutput.ts";

describe("mapBox", () => {
  it("adds 15 % of the box on each side, at least 2° of latitude and 4° of longitude", () => {
    expect(mapBox({ west: -30, east: 10, south: 55, north: 70 }, { lat: 63.98, lon: -19.7 })).toEqual({ west: -36, east: 16, south: 52.75, north: 72.25 });
    expect(mapBox({ west: -20, east: -19, south: 63.5, north: 64 }, undefined)).toEqual({ west: -24, east: -15, south: 61.5, north: 66 });
  });

  it("takes in a volcano outside the box", () => {
    expect(mapBox({ west: 0, east: 20, south: 50, north: 60 }, { lat: 45, lon: -10 })).toEqual({ west: -14.5, east: 24.5, south: 42.75, north: 62.25 });
  });

  it("keeps a box across the antimeridian whole: east < west, past 180° on both sides", () => {
    expect(mapBox({ west: 170, east: -170, south: 50, north: 56 }, { lat: 55, lon: 178 })).toEqual({ west: 166, east: -166, south: 48, north: 58 });
    // The volcano just west of 180° while the box begins east of it, and the other way round.
    expect(mapBox({ west: -179, east: -170, south: 50, north: 56 }, { lat: 52, lon: 179 })).toEqual({ west: 175, east: -166, south: 48, north: 58 });
    expect(mapBox({ west: 170, east: 179, south: 50, north: 56 }, { lat: 52, lon: -179 })).toEqual({ west: 166, east: -175, south: 48, north: 58 });
  });

  it("keeps an edge at exactly 180° where it is: a box that does not cross is not written as one that does", () => {
    expect(mapBox({ west: 150, east: 176, south: 50, north: 56 }, undefined)).toEqual({ west: 146, east: 180, south: 48, north: 58 });
    expect(mapBox({ west: -176, east: -150, south: 50, north: 56 }, undefined)).toEqual({ west: -180, east: -146, south: 48, north: 58 });
  });

  it("shows the whole circle when the margins would wrap it", () => {
    expect(mapBox({ west: -170, east: 170, south: -10, north: 10 }, undefined)).toMatchObject({ west: -180, east: 180 });
  });
});
