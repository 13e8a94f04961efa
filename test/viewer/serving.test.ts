/**
 * The viewer's files as artefacts of the release: listed in the index with hashes and ETags,
 * precompressed, served publicly under /viewer/ (with 304s, and a redirect from /viewer), made once per
 * content of the templates and reused by every later release, and collected with the releases that use them.
 */
import { mkdir, readdir, readlink, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import type { ReleaseIndex } from "../../src/contract/releaseIndex.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, editRunJson, expectProblem, header, http, makeSite, serve, untilServing, type Site } from "../server/serverFixtures.ts";

let site: Site;
let server: RunningServer;
let index: ReleaseIndex;

async function currentIndex(): Promise<ReleaseIndex> {
  return readReleaseIndex(site.distDir, path.resolve(site.distDir, await readlink(path.join(site.distDir, "current"))));
}

beforeAll(async () => {
  site = await makeSite("ashcast-viewer-serving-");
  await addRun(site, "2026-03-14-hekla", "2026-03-14T06:00:00Z");
  await buildSite(site, "2026-03-14T07:00:00Z");
  index = await currentIndex();
  server = await serve(site);
});

afterAll(async () => {
  await server?.close();
  await site?.cleanup();
});

describe("the viewer's files in a release", () => {
  it("are listed in the index: the page and three assets whose names carry their content hash", () => {
    const files = Object.keys(index.viewer ?? {});
    expect(files).toHaveLength(4);
    expect(files).toEqual(expect.arrayContaining(["index.html", expect.stringMatching(/^coastlines\.[0-9a-f]{10}\.json$/), expect.stringMatching(/^viewer\.[0-9a-f]{10}\.css$/), expect.stringMatching(/^viewer\.[0-9a-f]{10}\.js$/)]));
    for (const [file, key] of Object.entries(index.viewer!)) {
      const artefact = index.artefacts[key]!;
      expect(artefact.identity.file, file).toMatch(/^viewer\/[0-9a-f]{16}\//);
      expect(artefact.br, file).toBeDefined();
      expect(artefact.gzip, file).toBeDefined();
    }
  });

  it("serves the page publicly, with the assets it names, compressed, and 304 on a matching ETag", async () => {
    const page = await http(server, "/viewer/");
    expect(page.status).toBe(200);
    expect(header(page, "content-type")).toBe("text/html;charset=UTF-8");
    expect(header(page, "cache-control")).toBe("public, max-age=60, s-maxage=600");
    expect(header(page, "xkey")).toBe("viewer");
    const html = page.text();
    const named = [...html.matchAll(/(?:href|src|data-coastlines)="((?:viewer|coastlines)\.[0-9a-f]{10}\.(?:js|css|json))"/g)].map((m) => m[1]!);
    expect(new Set(named)).toEqual(new Set(Object.keys(index.viewer!).filter((f) => f !== "index.html")));
    // No address of another host anywhere in the page: every request goes to the service.
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);

    const js = Object.keys(index.viewer!).find((f) => f.endsWith(".js"))!;
    const compressed = await http(server, `/viewer/${js}`, { headers: { "accept-encoding": "br" } });
    expect(compressed.status).toBe(200);
    expect(header(compressed, "content-type")).toBe("text/javascript;charset=UTF-8");
    expect(header(compressed, "content-encoding")).toBe("br");
    expect(header(compressed, "cache-control")).toBe("public, max-age=86400");
    expect(brotliDecompressSync(compressed.body).toString("utf8")).toContain("ashcastViewer");
    const again = await http(server, `/viewer/${js}`, { headers: { "accept-encoding": "br", "if-none-match": header(compressed, "etag") } });
    expect(again.status).toBe(304);
  });

  it("redirects /viewer to /viewer/ (keeping the query), and answers 404 for a file it does not have", async () => {
    const redirect = await http(server, "/viewer?reftime=2026-03-14T06:00:00Z");
    expect(redirect.status).toBe(301);
    expect(header(redirect, "location")).toBe("/volcanicashforecast/0.1/viewer/?reftime=2026-03-14T06:00:00Z");
    expectProblem(await http(server, "/viewer/nothing.js"), 404);
    expectProblem(await http(server, "/viewer/..%2Fcurrent%2Findex.json"), 400); // an encoded slash: refused before routing
  });

  it("are made once per content of the templates: a release after a run changed reuses the same files", async () => {
    const before = await readdir(path.join(site.distDir, "viewer"));
    const file = path.join(site.distDir, index.artefacts[index.viewer!["index.html"]!]!.identity.file);
    const writtenAt = (await stat(file)).mtimeMs;
    await editRunJson(path.join(site.runsDir, "2026-03-14-hekla"), (manifest) => {
      manifest.description = "Hekla, second issue of the exercise";
    });
    const result = await buildSite(site, "2026-03-14T08:00:00Z");
    expect(result.published).toBe(true);
    const next = await currentIndex();
    expect(next.release).not.toBe(index.release);
    expect(next.viewer).toEqual(index.viewer);
    for (const key of Object.values(next.viewer!)) expect(next.artefacts[key], key).toEqual(index.artefacts[key]);
    expect(await readdir(path.join(site.distDir, "viewer"))).toEqual(before);
    expect((await stat(file)).mtimeMs).toBe(writtenAt);
    await untilServing(server, next.release);
    expect((await http(server, "/viewer/")).status).toBe(200);
  });

  it("are collected with the releases: a viewer directory no kept release uses is removed by the next publishing build", async () => {
    const stale = path.join(site.distDir, "viewer", "0123456789abcdef");
    await mkdir(stale);
    await writeFile(path.join(stale, "index.html"), "an older viewer");
    await editRunJson(path.join(site.runsDir, "2026-03-14-hekla"), (manifest) => {
      manifest.description = "Hekla, third issue of the exercise";
    });
    expect((await buildSite(site, "2026-03-14T09:00:00Z")).published).toBe(true);
    const current = (await currentIndex()).artefacts[index.viewer!["index.html"]!]!.identity.file.split("/")[1];
    expect(await readdir(path.join(site.distDir, "viewer"))).toEqual([current]);
  });
});
