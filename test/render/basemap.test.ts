import { describe, expect, it } from "vitest";
import { GlobalFonts } from "@napi-rs/canvas";
import { boxAspect, boxSpan, formatLat, formatLon, getBaseMap, panelProjection, resolutionFor } from "../../src/render/basemap.ts";
import { FONT_FAMILY, registerFonts } from "../../src/render/fonts.ts";
import { formatInstant, legendEntries, noAshText, outputsText } from "../../src/render/style.ts";
import { ICELAND_BOX } from "./plume.ts";

describe("fonts", () => {
  it("registers Noto Sans once, whatever the number of calls", () => {
    expect(registerFonts()).toBe(FONT_FAMILY);
    const before = GlobalFonts.families.length;
    registerFonts();
    registerFonts();
    expect(GlobalFonts.families.length).toBe(before);
    const family = GlobalFonts.families.find((f) => f.family === FONT_FAMILY);
    expect(family?.styles.map((s) => s.weight).sort()).toEqual([400, 700]);
  });
});

describe("base map", () => {
  it("reads a box across the antimeridian as a span eastwards from west", () => {
    expect(boxSpan({ north: 60, south: 40, east: -160, west: 150 })).toMatchObject({ west: 150, lonSpan: 50, centreLon: 175 });
    expect(boxSpan({ north: 60, south: 40, east: -170, west: 170 })).toMatchObject({ lonSpan: 20, centreLon: 180 });
    expect(boxSpan(ICELAND_BOX)).toMatchObject({ west: -32, lonSpan: 44, centreLon: -10 });
  });

  it("fits the box into the panel", () => {
    const projection = panelProjection(ICELAND_BOX, 400, 300);
    for (const [lon, lat] of [[-32, 53], [12, 53], [-32, 72], [12, 72], [-10, 62]] as const) {
      const [x, y] = projection([lon, lat])!;
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(400);
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(300);
    }
    // North up along the central meridian.
    expect(projection([-10, 70])![1]).toBeLessThan(projection([-10, 55])![1]);
  });

  it("gives each box its own aspect, asked again or not", () => {
    const wide = { north: 62, south: 58, east: 20, west: -20 };
    const tall = { north: 70, south: 40, east: 2, west: -2 };
    const first = [boxAspect(wide), boxAspect(tall)];
    expect(first[0]).toBeLessThan(0.3);
    expect(first[1]).toBeGreaterThan(3);
    expect([boxAspect(wide), boxAspect(tall), boxAspect({ ...wide })]).toEqual([...first, first[0]]);
  });

  it("uses 50m coastlines for a region and 110m for a hemisphere", () => {
    expect(resolutionFor(ICELAND_BOX)).toBe("50m");
    expect(resolutionFor({ north: 85, south: 0, east: 180, west: -180 })).toBe("110m");
  });

  it("caches the drawn base map per box and size", () => {
    const a = getBaseMap(ICELAND_BOX, 300, 200);
    expect(getBaseMap({ ...ICELAND_BOX }, 300, 200)).toBe(a);
    expect(getBaseMap(ICELAND_BOX, 301, 200)).not.toBe(a);
    expect(a.canvas.width).toBe(300);
    expect(a.labels.map((l) => l.text)).toContain("60°N");
    expect(a.labels.map((l) => l.text)).toContain("10°W");
  });

  it("labels the graticule", () => {
    expect([formatLon(-19.62 - 0.38), formatLon(0), formatLon(180), formatLon(-180), formatLon(175), formatLon(185)]).toEqual(["20°W", "0°", "180°", "180°", "175°E", "175°W"]);
    expect([formatLat(60), formatLat(0), formatLat(-45)]).toEqual(["60°N", "0°", "45°S"]);
  });
});

describe("style", () => {
  it("writes instants in UTC", () => {
    expect(formatInstant("2010-04-14T06:00:00Z")).toBe("2010-04-14 06:00 UTC");
    expect(formatInstant("2010-04-14T06:00:30Z")).toBe("2010-04-14 06:00:30 UTC");
    expect(formatInstant("not a time")).toBe("not a time");
  });

  it("makes one legend entry per class, the last open-ended", () => {
    expect(legendEntries([0.2, 2, 4]).map((e) => `${e.range} ${e.ashClass.name}`)).toEqual(["0.2–2 low", "2–4 medium", "4 or more high"]);
    expect(legendEntries([0.2, 2, 5, 10]).map((e) => e.range)).toEqual(["0.2–2", "2–5", "5–10", "10 or more"]);
    expect(noAshText([0.2, 2, 4])).toBe("No ash above 0.2 mg/m³");
  });

  it("says which model outputs a map covers, as the file has them", () => {
    expect(outputsText(["2026-10-20T06:00:00Z", "2026-10-20T12:00:00Z", "2026-10-20T18:00:00Z"])).toBe("the 3 outputs 2026-10-20 06:00 to 18:00 UTC");
    expect(outputsText(["2026-10-20T18:00:00Z", "2026-10-21T00:00:00Z"])).toBe("the 2 outputs 2026-10-20 18:00 UTC to 2026-10-21 00:00 UTC");
    expect(outputsText(["2026-10-20T06:00:00Z"])).toBe("the output 2026-10-20 06:00 UTC");
  });
});
