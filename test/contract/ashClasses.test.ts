/**
 * The class table: exact classes, and a palette that stays apart for readers with a colour-vision
 * deficiency. Simulation: Machado, Oliveira & Fernandes (2009) at severity 1 (protanopia, deuteranopia,
 * tritanopia); difference: CIEDE2000 between the fills as drawn on the map (ASH_FILL_OPACITY over sea
 * and over land). 10 is taken as "clearly different at a glance" for map categories, 15 for the usual
 * two to four classes.
 */
import { describe, expect, it } from "vitest";
import { ASH_CLASS_IDS, ashClasses, ASH_FILL_OPACITY, CLASS_COLOURS, classOf, classRange, classTable, kmlColour, MAX_ASH_CLASSES } from "../../src/contract/ashClasses.ts";
import { VOLCANO_COLOUR } from "../../src/render/draw.ts";
import { BASE_COLOURS } from "../../src/render/style.ts";
import { blend, deltaE2000, hexRgb, seenDifference, simulate, srgbToLab, VISIONS } from "../render/colourVision.ts";

const THRESHOLDS = [0.2, 2, 4, 10, 20, 50];
const BACKGROUNDS = [BASE_COLOURS.sea, BASE_COLOURS.land].map(hexRgb);

describe("colour science helpers (checked against published values)", () => {
  it("CIEDE2000 gives Sharma, Wu & Dalal's (2005) test values", () => {
    expect(deltaE2000([50, 2.6772, -79.7751], [50, 0, -82.7485])).toBeCloseTo(2.0425, 4);
    expect(deltaE2000([50, 3.1571, -77.2803], [50, 0, -82.7485])).toBeCloseTo(2.8615, 4);
    expect(deltaE2000([50, 0, 0], [50, -1, 2])).toBeCloseTo(2.3669, 4);
    expect(deltaE2000([50, 2.5, 0], [73, 25, -18])).toBeCloseTo(27.1492, 4);
    expect(deltaE2000([2.0776, 0.0795, -1.135], [0.9033, -0.0636, -0.5514])).toBeCloseTo(0.9082, 4);
  });

  it("sRGB to CIELAB (D65) gives the usual values", () => {
    const lab = srgbToLab([255, 0, 0]);
    expect(lab[0]).toBeCloseTo(53.24, 1);
    expect(lab[1]).toBeCloseTo(80.09, 1);
    expect(lab[2]).toBeCloseTo(67.2, 1);
    expect(srgbToLab([255, 255, 255])[0]).toBeCloseTo(100, 3);
  });

  it("simulations keep greys and merge red with green for protanopes and deuteranopes, blue with green for tritanopes", () => {
    for (const vision of VISIONS) {
      const grey = simulate([128, 128, 128], vision);
      for (const c of grey) expect(c).toBeCloseTo(128, 0);
    }
    // Red and green, far apart for normal vision, much closer without L or M cones.
    const red = hexRgb("#d62728");
    const green = hexRgb("#2ca02c");
    expect(seenDifference(red, green, "normal")).toBeGreaterThan(60);
    expect(seenDifference(red, green, "deuteranopia")).toBeLessThan(25);
    expect(seenDifference(red, green, "protanopia")).toBeLessThan(35);
    expect(seenDifference(hexRgb("#1f77b4"), hexRgb("#2ca02c"), "tritanopia")).toBeLessThan(seenDifference(hexRgb("#1f77b4"), hexRgb("#2ca02c"), "normal"));
  });
});

describe("ashClasses", () => {
  it("gives the usual three classes exactly: sky blue, amber, red", () => {
    expect(ashClasses([0.2, 2, 4])).toEqual([
      { id: "low", name: "low", lower: 0.2, upper: 2, colour: "#56b4e9", outline: "#3e82a8" },
      { id: "medium", name: "medium", lower: 2, upper: 4, colour: "#e69f00", outline: "#a67200" },
      { id: "high", name: "high", lower: 4, upper: null, colour: "#d1232a", outline: "#96191e" },
    ]);
    expect(ashClasses([0.2, 2, 4, 10]).map((c) => c.colour)).toEqual(["#56b4e9", "#e69f00", "#d1232a", "#4b0a5f"]);
    expect(classRange({ lower: 0.2, upper: 2 })).toBe("0.2–2 mg/m³");
    expect(classRange({ lower: 4, upper: null })).toBe("≥ 4 mg/m³");
  });

  it("puts a value in its class, and nothing below the lowest threshold or for NaN", () => {
    const classes = ashClasses([0.2, 2, 4]);
    expect([0.1, 0.2, 1.99, 2, 4, 1e6, Number.NaN].map((v) => classOf(v, classes)?.id)).toEqual([undefined, "low", "low", "medium", "high", "high", undefined]);
  });

  it("refuses thresholds it cannot draw, naming them", () => {
    expect(() => ashClasses([])).toThrow(/0 thresholds/);
    expect(() => ashClasses(THRESHOLDS.concat(100))).toThrow(new RegExp(`1 to ${MAX_ASH_CLASSES}`));
    expect(() => ashClasses([2, 0.2])).toThrow(/increase strictly, got 2, 0.2/);
  });

  it("writes KML's aabbggrr", () => {
    expect(kmlColour("#d1232a")).toBe("ff2a23d1");
    expect(kmlColour("#56b4e9", ASH_FILL_OPACITY)).toBe("99e9b456");
  });

  it("states the whole table for documents: the default classes, and every scheme's ids and colours, all of them in ASH_CLASS_IDS", () => {
    const table = classTable();
    expect(table.defaultThresholds).toEqual([0.2, 2, 4]);
    expect(table.defaultClasses).toEqual(ashClasses([0.2, 2, 4]));
    expect(Object.keys(table.byCount)).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(table.byCount["3"]).toEqual([
      { id: "low", name: "low", colour: "#56b4e9", outline: "#3e82a8" },
      { id: "medium", name: "medium", colour: "#e69f00", outline: "#a67200" },
      { id: "high", name: "high", colour: "#d1232a", outline: "#96191e" },
    ]);
    for (let n = 1; n <= MAX_ASH_CLASSES; n++) {
      expect(table.byCount[String(n)]!.map((c) => c.colour)).toEqual(ashClasses(THRESHOLDS.slice(0, n)).map((c) => c.colour));
    }
    expect(ASH_CLASS_IDS).toEqual(["very-low", "low", "medium", "high", "very-high", "extreme", "ash"]);
  });
});

describe("the palette for colour-blind readers", () => {
  for (let n = 2; n <= MAX_ASH_CLASSES; n++) {
    it(`keeps the ${n} classes apart under normal vision, protanopia, deuteranopia and tritanopia`, () => {
      const classes = ashClasses(THRESHOLDS.slice(0, n));
      const floor = n <= 4 ? 15 : 10;
      const close: string[] = [];
      for (const vision of VISIONS) {
        for (const under of BACKGROUNDS) {
          for (let i = 0; i < n; i++) {
            for (let j = i + 1; j < n; j++) {
              const a = blend(under, hexRgb(classes[i]!.colour), ASH_FILL_OPACITY);
              const b = blend(under, hexRgb(classes[j]!.colour), ASH_FILL_OPACITY);
              const d = seenDifference(a, b, vision);
              if (d < floor) close.push(`${classes[i]!.name}/${classes[j]!.name} ${vision} ΔE00 ${d.toFixed(1)}`);
            }
          }
        }
      }
      expect(close).toEqual([]);
    });
  }

  it("shows every class against the map, and the volcano symbol looks like no class", () => {
    const close: string[] = [];
    for (const vision of VISIONS) {
      for (const colour of CLASS_COLOURS) {
        const outline = ashClasses(THRESHOLDS).find((c) => c.colour === colour)?.outline ?? colour;
        // The volcano's triangle sits on the areas: apart from both the fill colour and its outline.
        for (const [what, c] of [["colour", colour], ["outline", outline]]) {
          const d = seenDifference(hexRgb(VOLCANO_COLOUR), hexRgb(c!), vision);
          if (d < 15) close.push(`volcano vs ${what} ${c} ${vision} ${d.toFixed(1)}`);
        }
        for (const under of BACKGROUNDS) {
          const fill = blend(under, hexRgb(colour), ASH_FILL_OPACITY);
          const d = seenDifference(under, fill, vision);
          if (d < 10) close.push(`${colour} on the map ${vision} ${d.toFixed(1)}`);
        }
      }
    }
    expect(close).toEqual([]);
  });
});
