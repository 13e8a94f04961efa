import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { brotliDecompressSync, gzipSync } from "node:zlib";
import { ArtefactWriter, CONTENT_TYPES, startCompressing, writeArtefacts, type ArtefactDraft } from "../../src/build/artefacts.ts";
import { renderRun, type RunRenderer } from "../../src/build/renderRun.ts";
import type { AssembledRun } from "../../src/build/assembleRun.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A KML-like body of some kilobytes that differs with `i` (compressible, as the build's text is). */
function kmlDraft(i: number): ArtefactDraft {
  const rows = Array.from({ length: 200 + i * 7 }, (_, k) => `<coordinates>${(-19.7 + k * 0.013 + i).toFixed(5)},${(63.98 + k * 0.007).toFixed(5)}</coordinates>`);
  return { key: `runs/x/kml/${i}.kml`, file: `kml/${i}.kml`, contentType: CONTENT_TYPES.kml, body: Buffer.from(rows.join("\n")) };
}

describe("writeArtefacts", () => {
  it("writes gzip (zlib level 6) and brotli variants of every text body, none for images or bodies marked not to be compressed, the same whether compression started early or not", async () => {
    const drafts = [
      ...Array.from({ length: 40 }, (_, i) => kmlDraft(i)), // ten times the compressions allowed at once
      { key: "runs/x/model.png", file: "model.png", contentType: CONTENT_TYPES.png, body: Buffer.from("not really a png, never compressed ".repeat(50)) },
      { key: "report.json", file: "report.json", contentType: CONTENT_TYPES.json, body: Buffer.from(`{"runs":[${'"a",'.repeat(300)}"b"]}`), precompress: false as const },
    ];
    const early = drafts.map((d) => ({ ...d }));
    startCompressing(early.slice(10, 30)); // as the build does while the maps are still drawn
    const results = [];
    for (const set of [drafts, early]) {
      const dir = await mkdtemp(path.join(tmpdir(), "ashcast-artefacts-"));
      dirs.push(dir);
      results.push({ dir, entries: await writeArtefacts(dir, "runs/x", set) });
    }
    const [later, sooner] = results as [(typeof results)[0], (typeof results)[0]];
    expect(sooner.entries).toEqual(later.entries);
    for (const draft of drafts) {
      const entry = later.entries[draft.key]!;
      expect(await readFile(path.join(later.dir, draft.file))).toEqual(draft.body);
      if (draft.contentType !== CONTENT_TYPES.kml) {
        expect(entry.gzip, draft.key).toBeUndefined();
        expect(entry.br, draft.key).toBeUndefined();
        continue;
      }
      for (const { dir } of results) {
        const gz = await readFile(path.join(dir, draft.file + ".gz"));
        expect(gz.equals(gzipSync(draft.body, { level: 5, memLevel: 9 })), draft.key).toBe(true);
        expect(brotliDecompressSync(await readFile(path.join(dir, draft.file + ".br"))).equals(draft.body), draft.key).toBe(true);
      }
      expect(entry.gzip?.file).toBe(`runs/x/${draft.file}.gz`);
    }
  });
});

describe("ArtefactWriter", () => {
  it("writes drafts as they are handed over, before their entries are asked for, and gives the entries writeArtefacts gives, in the drafts' order", async () => {
    const drafts = Array.from({ length: 6 }, (_, i) => kmlDraft(i));
    const [streamed, whole] = [await mkdtemp(path.join(tmpdir(), "ashcast-writer-")), await mkdtemp(path.join(tmpdir(), "ashcast-writer-"))];
    dirs.push(streamed, whole);
    const writer = new ArtefactWriter(streamed, "runs/x");
    writer.add(drafts.slice(2, 4)); // a renderer's drafts, while the others are still being drawn
    await writer.settled();
    expect((await readdir(path.join(streamed, "kml"))).sort()).toEqual(["2.kml", "2.kml.br", "2.kml.gz", "3.kml", "3.kml.br", "3.kml.gz"]);
    writer.add(drafts.slice(4));
    const entries = await writer.entries(drafts); // the first two were never handed over: written now
    expect(Object.keys(entries)).toEqual(drafts.map((d) => d.key));
    expect(entries).toEqual(await writeArtefacts(whole, "runs/x", drafts));
    expect((await readdir(path.join(streamed, "kml"))).length).toBe(drafts.length * 3);
  });

  it("fails only once every write under way has ended, so that the directory can be removed with nothing written into it after", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ashcast-writer-"));
    dirs.push(dir);
    await writeFile(path.join(dir, "kml"), "a file where the drafts' directory should be");
    const blocked = kmlDraft(0);
    const others = Array.from({ length: 12 }, (_, i) => ({ ...kmlDraft(i + 1), key: `runs/x/${i}.kml`, file: `${i}.kml` }));
    const writer = new ArtefactWriter(dir, "runs/x");
    await expect(writer.entries([blocked, ...others])).rejects.toThrow(/ENOTDIR|EEXIST/);
    // Every other draft (and its variants) was written by the time the failure was reported.
    expect((await readdir(dir)).length).toBe(1 + others.length * 3);
  });

  it("takes no drafts once stopped: a renderer that finishes after another failed writes nothing into the removed directory", async () => {
    const parent = await mkdtemp(path.join(tmpdir(), "ashcast-writer-"));
    dirs.push(parent);
    const dir = path.join(parent, "staged");
    const writer = new ArtefactWriter(dir, "runs/x");
    writer.add([kmlDraft(1)]);
    await writer.stop();
    await rm(dir, { recursive: true, force: true }); // what the build does with a failed run's staging directory
    writer.add([kmlDraft(2)]);
    await writer.settled();
    expect(await readdir(parent)).toEqual([]);
    await expect(writer.entries([kmlDraft(3)])).rejects.toThrow(/Internal error/);
  });
});

describe("renderRun", () => {
  it("hands each renderer's drafts on as soon as they are made, while a slower renderer is still at work, and returns them all in the renderers' order", async () => {
    let finishSlow!: () => void;
    const slow: RunRenderer = () => new Promise((resolve) => (finishSlow = () => resolve([kmlDraft(1)])));
    const fast: RunRenderer = () => [kmlDraft(2), kmlDraft(3)];
    const handed: string[][] = [];
    const all = renderRun({} as AssembledRun, [slow, fast], (drafts) => handed.push(drafts.map((d) => d.key)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(handed).toEqual([["runs/x/kml/2.kml", "runs/x/kml/3.kml"]]);
    finishSlow();
    expect((await all).map((d) => d.key)).toEqual(["runs/x/kml/1.kml", "runs/x/kml/2.kml", "runs/x/kml/3.kml"]);
    expect(handed).toEqual([["runs/x/kml/2.kml", "runs/x/kml/3.kml"], ["runs/x/kml/1.kml"]]);
  });
});
