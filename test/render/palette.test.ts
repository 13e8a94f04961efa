/** The quantiser of src/render/palette.ts: exact where it must be, nearest elsewhere, deterministic. */
import { describe, expect, it } from "vitest";
import { colourHistogram, packHex, packedPixels, PaletteIndexer, quantise, sharedPalette, type IndexedImage } from "../../src/render/palette.ts";

/** RGBA bytes of packed colours. */
const rgbaOf = (colours: number[]): Uint8Array => new Uint8Array(Uint32Array.from(colours).buffer);
const channels = (c: number): number[] => [c & 255, (c >>> 8) & 255, (c >>> 16) & 255, c >>> 24];
const distance = (a: number, b: number): number => channels(a).reduce((sum, v, k) => sum + (v - channels(b)[k]!) ** 2, 0);
const pixelsOf = (image: IndexedImage): number[] => Array.from(image.indices, (i) => image.colours[i]!);

/** An image of many colours: flat areas of a few colours, and a pseudo-random speckle of thousands. */
function speckled(width: number, height: number, flat: number[]): number[] {
  let seed = 99;
  const out: number[] = [];
  for (let p = 0; p < width * height; p++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out.push(p % 7 === 0 ? packHex(`#${(seed >>> 8).toString(16).padStart(6, "0").slice(0, 6)}`) : flat[Math.floor(p / width) % flat.length]!);
  }
  return out;
}

describe("quantise", () => {
  it("keeps every colour when there are no more than the palette holds", () => {
    const colours = [packHex("#ffffff"), packHex("#56b4e9"), packHex("#000000"), (0x10203040 >>> 0)];
    const pixels = Array.from({ length: 60 }, (_, i) => colours[(i * 7) % colours.length]!);
    const image = quantise(rgbaOf(pixels), 12, 5);
    expect(image.exact).toBe(true);
    expect(pixelsOf(image)).toEqual(pixels);
    expect(image.colours).toHaveLength(4);
  });

  it("keeps the colours asked for and the frequent ones exactly, and maps every other colour to its nearest entry", () => {
    const flat = ["#e6eef4", "#f6f2e7", "#5c6b7a"].map(packHex);
    const rare = packHex("#d1232a");
    const pixels = speckled(200, 150, flat);
    pixels[4321] = rare; // one pixel only: not frequent, kept because asked for
    const image = quantise(rgbaOf(pixels), 200, 150, { maxColours: 64, keep: [rare, packHex("#abcdef")] });
    expect(image.exact).toBe(false);
    expect(image.colours.length).toBeLessThanOrEqual(64);
    const out = pixelsOf(image);
    for (const c of [...flat, rare]) expect(image.colours).toContain(c);
    pixels.forEach((c, p) => {
      if (flat.includes(c) || c === rare) expect(out[p]).toBe(c);
      // Nearest: no palette entry is closer than the one chosen.
      else if (p % 97 === 0) expect(Math.min(...Array.from(image.colours, (e) => distance(e, c)))).toBe(distance(out[p]!, c));
    });
  });

  it("is deterministic: the same pixels give the same palette and indices, from any buffer offset", () => {
    const pixels = speckled(120, 90, ["#ffffff", "#e69f00"].map(packHex));
    const a = quantise(rgbaOf(pixels), 120, 90, { maxColours: 100 });
    const shifted = new Uint8Array(pixels.length * 4 + 1);
    shifted.set(rgbaOf(pixels), 1);
    const b = quantise(shifted.subarray(1), 120, 90, { maxColours: 100 });
    expect(Array.from(b.colours)).toEqual(Array.from(a.colours));
    expect(Buffer.from(b.indices).equals(Buffer.from(a.indices))).toBe(true);
  });

  it("counts colours in runs and orders them by count, then by first appearance", () => {
    const h = colourHistogram(Uint32Array.from([5, 5, 5, 2, 9, 9, 2, 2, 7]));
    expect(Array.from(h.colours)).toEqual([5, 2, 9, 7]);
    expect(Array.from(h.counts)).toEqual([3, 3, 2, 1]);
    expect(packedPixels(new Uint8Array([1, 2, 3, 4]))[0]).toBe(0x04030201);
  });

  it("counts every colour of an image with thousands of them, the ones first seen as the table grows too", () => {
    // 5,000 colours in runs of 3: the table grows at its 1,024th, 2,048th and 4,096th colour.
    const pixels = Uint32Array.from({ length: 15_000 }, (_, i) => (0xff000000 | Math.floor(i / 3)) >>> 0);
    const h = colourHistogram(pixels);
    expect(h.colours.length).toBe(5_000);
    expect(Array.from(h.counts).filter((count) => count !== 3)).toEqual([]);
    expect(h.colours[0]).toBe(0xff000000); // all equal: in order of first appearance
    expect(h.colours[4_999]).toBe(0xff000000 + 4_999);
  });

  it("refuses a buffer of the wrong size", () => {
    expect(() => quantise(new Uint8Array(40), 3, 3)).toThrow(/Internal error: quantise got 40 bytes for 3 × 3 pixels/);
  });
});

describe("sharedPalette and PaletteIndexer", () => {
  const flat = ["#e6eef4", "#f6f2e7", "#5c6b7a"].map(packHex);

  it("holds every colour asked for, drawn by a sample or not, and no more entries than asked", () => {
    const absent = [packHex("#d1232a"), packHex("#6a3d9a")];
    const palette = sharedPalette([rgbaOf(speckled(120, 80, flat)), rgbaOf(speckled(60, 40, flat.slice(1)))], { maxColours: 32, keep: absent });
    expect(palette.length).toBeLessThanOrEqual(32);
    for (const colour of [...absent, ...flat]) expect(palette, colour.toString(16)).toContain(colour);
  });

  it("is every colour of its samples when they have no more than it holds", () => {
    const pixels = [flat[0]!, flat[1]!, flat[0]!, flat[2]!];
    expect([...sharedPalette([rgbaOf(pixels)], { keep: [packHex("#000000")] })].sort()).toEqual([...flat, packHex("#000000")].sort());
  });

  it("indexes every pixel to its nearest entry (the lowest of equals), a palette colour to itself, the same from a fresh indexer", () => {
    const palette = sharedPalette([rgbaOf(speckled(100, 60, flat))], { maxColours: 40 });
    const image = speckled(90, 70, [...flat, packHex("#123456")]);
    const indexer = new PaletteIndexer(palette);
    const indices = indexer.index(rgbaOf(image));
    image.forEach((colour, p) => {
      let best = 0;
      for (let j = 1; j < palette.length; j++) if (distance(colour, palette[j]!) < distance(colour, palette[best]!)) best = j;
      if (indices[p] !== best) expect.fail(`pixel ${p} (${colour.toString(16)}): entry ${indices[p]}, nearest ${best}`);
    });
    for (const colour of flat) expect(palette[indexer.index(rgbaOf([colour]))[0]!]).toBe(colour);
    expect(new PaletteIndexer(palette).index(rgbaOf(image))).toEqual(indices);
    expect(indexer.index(rgbaOf(image)), "again, from what it remembered").toEqual(indices);
  });
});
