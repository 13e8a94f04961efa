/**
 * The point-query grid as an artefact: in the run's artefact index with its hash and size, named by its
 * content, not precompressed (only the server reads it), unchanged by a rebuild that changes nothing,
 * and collected with its run once no kept release uses it.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { build } from "../../src/build/build.ts";
import { openPointGrid } from "../../src/contract/pointGrid.ts";
import { makeSite, PUBLIC_URL, readPublished } from "../server/serverFixtures.ts";

const REFTIME = "2019-03-22T12:00:00Z";
const KEY = `runs/${REFTIME}/grids/eemep-hour-20190322t120000`;
const sites: Array<{ cleanup(): Promise<void> }> = [];
afterAll(() => Promise.all(sites.map((s) => s.cleanup())));

describe("the point-query grid artefact", () => {
  it("is indexed, content-addressed, unchanged by a no-change rebuild, and collected with its run", async () => {
    const site = await makeSite("ashcast-grid-");
    sites.push(site);
    const dir = path.join(site.runsDir, "2019-03-22-hekla");
    await mkdir(dir);
    await writeFile(path.join(dir, "run.json"), '{"type": "Exercise"}\n');
    const written = await writeEemepOutput({ outDir: dir, reftime: REFTIME, nx: 40, ny: 30, steps: 6, res: 1 });
    let clock = Date.parse("2026-06-01T00:00:00Z");
    const next = () => {
      clock += 10 * 60_000; // past the 5 minutes a retired release is kept for
      const at = new Date(clock);
      return () => at;
    };
    await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, now: next() });

    const published = await readPublished(site.distDir);
    const artefact = published.artefact(KEY);
    expect(artefact.contentType).toBe("application/vnd.ashcast.point-grid");
    expect(artefact.gzip).toBeUndefined();
    expect(artefact.br).toBeUndefined();
    const bytes = await readFile(path.join(site.distDir, artefact.identity.file));
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    expect(artefact.sha256).toBe(sha256);
    expect(artefact.identity.size).toBe(bytes.length);
    expect(path.basename(artefact.identity.file)).toBe(`eemep-hour-20190322t120000-${sha256.slice(0, 16)}.ashgrid`);
    const { header } = openPointGrid(bytes, artefact.identity.file);
    expect(header).toMatchObject({ model: "EEMEP", source: path.basename(written.file), reftime: REFTIME, times: written.times, nx: 40, ny: 30, thresholds: [0.2, 2, 4] });
    expect(header.bands.map((b) => [b.id, b.lowerFl, b.upperFl])).toEqual([["fl000-200", 0, 200], ["fl200-350", 200, 350], ["fl350-550", 350, 550]]);
    expect(header.geometry.kind).toBe("regular");

    const again = await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, now: next() });
    expect(again.published).toBe(false);
    expect((await readPublished(site.distDir)).artefact(KEY).identity.file).toBe(artefact.identity.file);

    // Withdrawn (folder deleted), then enough releases for the one that used it to be retired: the file goes.
    await rm(dir, { recursive: true });
    await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, now: next() });
    for (let i = 0; i < 4; i++) {
      await mkdir(path.join(site.runsDir, `empty-${i}`)); // a change, so that each build publishes a release
      await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, now: next() });
    }
    expect(existsSync(path.join(site.distDir, artefact.identity.file))).toBe(false);
  }, 120_000);
});
