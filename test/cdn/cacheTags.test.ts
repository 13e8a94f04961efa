import { describe, expect, it } from "vitest";
import { changedTags, resourceTag } from "../../src/contract/cacheTags.ts";
import type { ListArtefact, PublishedRun, ReleaseIndex } from "../../src/contract/releaseIndex.ts";

const R1 = "2024-05-01T00:00:00Z";
const R2 = "2024-05-02T00:00:00Z";
const R3 = "2024-05-03T00:00:00Z";
const hash = (c: string) => c.repeat(64).slice(0, 64);
const artefact = (c: string): ListArtefact => ({ contentType: "application/json", sha256: hash(c), identity: { file: `f${c}`, size: 1, etag: `"${c}"` }, modified: R1 });
const run = (reftime: string, content: string): PublishedRun => ({ reftime, type: "Exercise", source: reftime, dir: `runs/${content}`, modified: R1, contentSha256: hash(content), json: "model.json" });

/** A release with the given runs (newest first) and list contents. */
function release(runs: PublishedRun[], lists: { reftimes: string; changelog: string; volcanoes: string; viewer?: string }): ReleaseIndex {
  return {
    format: 3,
    release: "r",
    built: R1,
    reftimes: runs.map((r) => r.reftime),
    runChunks: [],
    runs: Object.fromEntries(runs.map((r) => [r.reftime, r])),
    resources: { "volcanoes.json": "volcanoes" },
    lists: { reftimes: "reftimes", changelog: "changelog", report: "report" },
    artefacts: { reftimes: artefact(lists.reftimes), changelog: artefact(lists.changelog), report: artefact("0"), volcanoes: artefact(lists.volcanoes), page: artefact(lists.viewer ?? "v") },
    viewer: { "index.html": "page" },
  };
}

describe("changedTags: exactly the tags whose answers a publish changed", () => {
  const before = release([run(R2, "b"), run(R1, "a")], { reftimes: "1", changelog: "1", volcanoes: "1" });

  it("the same release changes nothing", () => {
    expect(changedTags(before, before)).toEqual([]);
  });

  it("a new latest run: latest, the lists and that run, nothing of the older runs", () => {
    const after = release([run(R3, "c"), run(R2, "b"), run(R1, "a")], { reftimes: "2", changelog: "2", volcanoes: "1" });
    expect(changedTags(before, after)).toEqual(["latest", "reftimes", "changelog", `run:${R3}`]);
  });

  it("a corrected older run: that run and the changelog only (the reftimes list is the same bytes)", () => {
    const after = release([run(R2, "b"), run(R1, "z")], { reftimes: "1", changelog: "2", volcanoes: "1" });
    expect(changedTags(before, after)).toEqual(["changelog", `run:${R1}`]);
  });

  it("withdrawing the latest run: latest, lists, the run, and a changed shared resource", () => {
    const after = release([run(R1, "a")], { reftimes: "2", changelog: "2", volcanoes: "2" });
    expect(changedTags(before, after)).toEqual(["latest", "reftimes", "changelog", `run:${R2}`, "resource:volcanoes.json"]);
  });

  it("a new viewer", () => {
    expect(changedTags(before, release([run(R2, "b"), run(R1, "a")], { reftimes: "1", changelog: "1", volcanoes: "1", viewer: "w" }))).toEqual(["viewer"]);
  });

  it("the first release purges what the 204 answers stood for, and every run", () => {
    expect(changedTags(undefined, before)).toEqual(["latest", "reftimes", "changelog", "resources", "viewer", `run:${R2}`, `run:${R1}`, "resource:volcanoes.json"]);
  });

  it("resource tags never hold a separator of the tag header", () => {
    expect(resourceTag("a b,c%d")).toBe("resource:a%20b%2Cc%25d");
  });
});
