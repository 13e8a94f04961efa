/**
 * The RSS changelog as feed readers read it: escaped text, no character XML forbids, and items that stay
 * distinct and in date order whatever the clock does (the audit of 2026-11-27: duplicate guids from two
 * publishes in one second, a correction dated an hour behind after the clock stepped back).
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { XMLParser } from "fast-xml-parser";
import { build } from "../../src/build/build.ts";
import { encodeState } from "../../src/build/buildState.ts";
import { PIPELINE_VERSION, pipelineKey } from "../../src/build/pipelineSettings.ts";
import { loadCurrentRelease, RELEASES_DIR, STATE_DIR, STATE_FILE } from "../../src/build/releaseStore.ts";
import { inputsHash, listRunFolders, scanRuns } from "../../src/build/scanRuns.ts";
import { eventTime, renderChangelog, updatedEvent, type ChangelogEvent } from "../../src/build/changelog.ts";
import type { AshModel } from "../../src/contract/ashModel.ts";
import { editManifest, fixedClock, makeWorkspace, PUBLIC_URL, readRelease, writeKmlRun, type Workspace } from "./runFixtures.ts";

interface Item {
  title: string;
  guid: string | { "#text": string };
  pubDate: string;
  description: string;
}

function items(rss: string): Item[] {
  const doc = new XMLParser({ isArray: (name) => name === "item", ignoreAttributes: true, processEntities: true, htmlEntities: false }).parse(rss) as { rss: { channel: { item?: Item[] } } };
  return doc.rss.channel.item ?? [];
}
const guidOf = (item: Item): string => (typeof item.guid === "string" ? item.guid : item.guid["#text"]);

const event = (extra: Partial<ChangelogEvent>): ChangelogEvent => ({ kind: "published", reftime: "2024-05-01T12:00:00Z", type: "Exercise", time: "2026-11-27T10:00:00Z", detail: "A run.", ...extra });

describe("renderChangelog", () => {
  it("escapes a description as the text it is: readers show it as HTML, so markup is never rendered and <FL350> stays", () => {
    const detail = 'Plume top <FL350>, see <https://example.org/r>; &lt;x&gt; is literal. <img src="http://x/t.png"><h1>REAL ERUPTION</h1>';
    const rss = renderChangelog([event({ detail })], { publicUrl: PUBLIC_URL });
    const [item] = items(rss);
    // What a reader gets out of the CDATA, then decodes as HTML: the text as written.
    expect(item!.description).toBe(detail.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
    expect(rss).not.toContain("<img");
    expect(rss).not.toContain("<h1>");
  });

  it("drops characters XML does not allow that an older state still holds", () => {
    const rss = renderChangelog([event({ detail: "Hek\fla\u0001 erupts." })], { publicUrl: PUBLIC_URL });
    expect(rss).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    expect(items(rss)[0]!.description).toBe("Hekla erupts.");
  });
});

describe("eventTime", () => {
  it("is the build's time, or a second after the newest event when that is not earlier", () => {
    expect(eventTime("2026-11-27T10:00:00Z", undefined)).toBe("2026-11-27T10:00:00Z");
    expect(eventTime("2026-11-27T10:00:00Z", "2026-11-27T09:59:59Z")).toBe("2026-11-27T10:00:00Z");
    expect(eventTime("2026-11-27T10:00:00Z", "2026-11-27T10:00:00Z")).toBe("2026-11-27T10:00:01Z");
    expect(eventTime("2026-11-27T09:00:00Z", "2026-11-27T10:00:00Z")).toBe("2026-11-27T10:00:01Z");
  });
});

describe("updatedEvent", () => {
  const model = { meta: { type: "Exercise", description: "d", reftime: "2024-05-01T12:00:00Z", timesteps: [] }, layergroups: [] } as unknown as AshModel;
  it("names a layer once, though its KML and GeoJSON twin both changed", () => {
    const changed = ["2024-05-01T12:00:00Z/advisory.kml", "2024-05-01T12:00:00Z/advisory.geojson", "2024-05-01T12:00:00Z/fl000-200/20240501T120000Z.kml"];
    expect(updatedEvent(model, model, changed, "2026-11-27T10:00:00Z").detail).toBe("Ash area resources changed in advisory, fl000-200.");
  });
});

describe("the changelog across builds", () => {
  let ws: Workspace | undefined;
  afterEach(async () => {
    await ws?.cleanup();
    ws = undefined;
  });

  it("keeps every item's guid distinct and the dates in order when two publishes fall in one second or the clock steps back", async () => {
    ws = await makeWorkspace("ashcast-changelog-");
    const run = await writeKmlRun(ws.runsDir, "2024-05-01-test");
    const at = (time: string) => ({ runsDir: ws!.runsDir, distDir: ws!.distDir, publicUrl: PUBLIC_URL, now: fixedClock(time) });
    await build(at("2026-11-27T10:00:00Z"));
    await editManifest(run.dir, (m) => ({ ...m, description: "Corrected once." }));
    await build(at("2026-11-27T10:00:00Z"));
    await editManifest(run.dir, (m) => ({ ...m, description: "Corrected again, with the clock an hour back." }));
    await build(at("2026-11-27T09:00:00Z"));
    const release = await readRelease(ws.distDir);
    const feed = items(await release.text(release.index.lists.changelog));
    expect(feed.map((item) => item.title.split(":")[0])).toEqual(["Updated", "Updated", "Published"]);
    expect(new Set(feed.map(guidOf)).size).toBe(3);
    const dates = feed.map((item) => Date.parse(item.pubDate));
    expect(dates).toEqual([Date.parse("2026-11-27T10:00:02Z"), Date.parse("2026-11-27T10:00:01Z"), Date.parse("2026-11-27T10:00:00Z")]);
  });

  it("refuses a run.json whose text holds a character XML does not allow, naming the field and the character", async () => {
    ws = await makeWorkspace("ashcast-changelog-");
    await writeKmlRun(ws.runsDir, "2024-05-01-test", { description: "Hek\fla" });
    const result = await build({ runsDir: ws.runsDir, distDir: ws.distDir, publicUrl: PUBLIC_URL });
    const report = result.report.runs[0]!;
    expect(report.status).not.toBe("published");
    expect(JSON.stringify(report.issues)).toMatch(/description.*U\+000C \(form feed\), which XML does not allow.*delete it/);
  });
});

describe("the changelog across an upgrade", () => {
  let ws: Workspace | undefined;
  afterEach(async () => {
    await ws?.cleanup();
    ws = undefined;
  });

  /** Rewrites the current release's state as a build under `pipeline` would have left it (inputs hashed with it), each served run's content other than now. */
  async function stateAsIfBuiltBy(runsDir: string, distDir: string, pipeline: string): Promise<void> {
    const release = (await loadCurrentRelease(distDir))!;
    const state = structuredClone(release.state!);
    state.pipeline = pipeline;
    for (const { run } of await scanRuns(runsDir, listRunFolders(runsDir), {})) {
      const older = { ...state.runs[run.folder]!.lastGood!, contentSha256: "0".repeat(64), inputs: inputsHash(run, pipeline) };
      state.runs[run.folder] = { ...state.runs[run.folder]!, inputs: older.inputs, lastGood: older, current: older };
    }
    const { head, chunks } = encodeState(state);
    for (const chunk of chunks) await writeFile(path.join(distDir, STATE_DIR, chunk.name), chunk.text);
    await writeFile(path.join(distDir, RELEASES_DIR, release.id, STATE_FILE), head);
  }

  it("announces no run that an upgraded ashcast rendered again from the same files, and does when the settings changed", async () => {
    ws = await makeWorkspace("ashcast-changelog-");
    await writeKmlRun(ws.runsDir, "2024-05-01-a");
    await writeKmlRun(ws.runsDir, "2024-05-02-b", { reftime: "2024-05-02T12:00:00Z" });
    const at = (time: string) => ({ runsDir: ws!.runsDir, distDir: ws!.distDir, publicUrl: PUBLIC_URL, now: fixedClock(time) });
    expect((await build(at("2026-11-27T10:00:00Z"))).events).toHaveLength(2);

    await stateAsIfBuiltBy(ws.runsDir, ws.distDir, pipelineKey({}, String(Number(PIPELINE_VERSION) - 1)));
    const upgraded = await build(at("2026-11-27T11:00:00Z"));
    expect(upgraded.report.counts.rebuilt).toBe(2);
    expect(upgraded.published).toBe(true);
    expect(upgraded.events).toEqual([]);

    await stateAsIfBuiltBy(ws.runsDir, ws.distDir, pipelineKey({ thresholds: [0.5, 2, 4] }));
    const reconfigured = await build(at("2026-11-27T12:00:00Z"));
    expect(reconfigured.events.map((e) => `${e.kind} ${e.reftime}`).sort()).toEqual(["updated 2024-05-01T12:00:00Z", "updated 2024-05-02T12:00:00Z"]);
  });

  it("keeps the feed's history and announces nothing again when the last state cannot be read (an older state format)", async () => {
    ws = await makeWorkspace("ashcast-changelog-");
    await writeKmlRun(ws.runsDir, "2024-05-01-a", { description: "Plume <FL350> & more." });
    const gone = await writeKmlRun(ws.runsDir, "2024-05-02-b", { reftime: "2024-05-02T12:00:00Z" });
    const at = (time: string) => ({ runsDir: ws!.runsDir, distDir: ws!.distDir, publicUrl: PUBLIC_URL, now: fixedClock(time) });
    await build(at("2026-11-27T10:00:00Z"));
    const before = items(await (await readRelease(ws.distDir)).text((await readRelease(ws.distDir)).index.lists.changelog));
    const release = (await loadCurrentRelease(ws.distDir))!;
    const head = path.join(ws.distDir, RELEASES_DIR, release.id, STATE_FILE);
    await writeFile(head, (await readFile(head, "utf8")).replace(/"format":\s*(\d+)/, (_, n: string) => `"format":${Number(n) - 1}`));
    expect((await loadCurrentRelease(ws.distDir))!.state, "the state is unreadable now").toBeUndefined();
    await rm(gone.dir, { recursive: true });

    const rebuilt = await build(at("2026-11-27T11:00:00Z"));
    expect(rebuilt.events.map((e) => `${e.kind} ${e.reftime}`)).toEqual(["withdrawn 2024-05-02T12:00:00Z"]);
    const after = items(await (await readRelease(ws.distDir)).text((await readRelease(ws.distDir)).index.lists.changelog));
    expect(after.slice(1), "the items before, as they were").toEqual(before);
    expect(after[0]!.title).toBe("Withdrawn: Exercise run 2024-05-02T12:00:00Z");
  });

  it("still announces what a client sees change (an Exercise become a Real Eruption) when the last state cannot be read", async () => {
    ws = await makeWorkspace("ashcast-changelog-");
    const run = await writeKmlRun(ws.runsDir, "2024-05-01-a");
    const at = (time: string) => ({ runsDir: ws!.runsDir, distDir: ws!.distDir, publicUrl: PUBLIC_URL, now: fixedClock(time) });
    await build(at("2026-11-27T10:00:00Z"));
    const release = (await loadCurrentRelease(ws.distDir))!;
    const head = path.join(ws.distDir, RELEASES_DIR, release.id, STATE_FILE);
    await writeFile(head, (await readFile(head, "utf8")).replace(/"format":\s*(\d+)/, (_, n: string) => `"format":${Number(n) - 1}`));
    await editManifest(run.dir, (m) => ({ ...m, type: "Real Eruption" }));
    const rebuilt = await build(at("2026-11-27T11:00:00Z"));
    expect(rebuilt.events).toMatchObject([{ kind: "updated", reftime: "2024-05-01T12:00:00Z", type: "Real Eruption", detail: expect.stringContaining("Type changed from Exercise to Real Eruption") }]);
  });
});
