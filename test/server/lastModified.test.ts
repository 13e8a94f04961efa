/**
 * Last-Modified of answers about the latest run when the latest falls back to an older run (the newest
 * withdrawn): a client revalidating with If-Modified-Since alone must get the older run, not a 304 that keeps it
 * on the withdrawn one (RFC 9110 §8.8.2, §13.1.3). On the bundled sample runs, fast path and app path alike.
 */
import { cp, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHttpDate } from "../../src/server/http.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, editRunJson, http, makeSite, serve, untilServing, type Site } from "./serverFixtures.ts";

const UA = { "user-agent": "ashcast-test/1 last-modified" };
let site: Site;
let server: RunningServer;
const before: Record<string, { lastModified: string; etag: string }> = {};
// Unpinned answers about the latest run: the model (fast path, and the app path through an unknown parameter) and /point.
const ROUTES = ["/", "/.json", "/.json?x=1", "/point?lat=63.6&lon=-19.6"];

beforeAll(async () => {
  site = await makeSite("ashcast-last-modified-");
  await cp(path.resolve("runs"), site.runsDir, { recursive: true });
  await buildSite(site, "2026-11-01T00:00:00Z");
  server = await serve(site);
  for (const route of ROUTES) {
    const res = await http(server, route, { headers: UA });
    expect(res.status, route).toBe(200);
    before[route] = { lastModified: res.headers["last-modified"]!, etag: res.headers.etag! };
  }
  // The newest run (the Rehearsal of 2026-05-02) withdrawn a day later: the latest is the Exercise of 2026-03-14 again.
  await rm(path.join(site.runsDir, "2026-05-02-katla-rehearsal"), { recursive: true });
  const result = await buildSite(site, "2026-11-02T00:00:00Z");
  await untilServing(server, result.release);
}, 180_000);

afterAll(async () => {
  await server?.close();
  await site?.cleanup();
});

describe("after the latest run is withdrawn", () => {
  it("If-Modified-Since with the date a client holds gets the run that is latest now, dated no earlier than the withdrawal", async () => {
    for (const route of ROUTES) {
      const held = before[route]!;
      const res = await http(server, route, { headers: { ...UA, "if-modified-since": held.lastModified } });
      expect(res.status, route).toBe(200);
      expect(res.headers.etag, route).not.toBe(held.etag);
      expect(parseHttpDate(res.headers["last-modified"]!)!, route).toBeGreaterThan(parseHttpDate(held.lastModified)!);
      // And that date revalidates to 304 from then on.
      expect((await http(server, route, { headers: { ...UA, "if-modified-since": res.headers["last-modified"]! } })).status, route).toBe(304);
    }
  });

  it("a pinned answer keeps its run's own date", async () => {
    const pinned = await http(server, "/.json?reftime=2026-03-14T06:00:00Z", { headers: UA });
    expect(pinned.status).toBe(200);
    expect(parseHttpDate(pinned.headers["last-modified"]!)).toBe(Date.parse("2026-11-01T00:00:00Z"));
  });
});

describe("with the clock stepped back between builds", () => {
  it("a run added and then corrected an hour 'earlier' still gets a later date than any a client holds: If-Modified-Since gets the correction", async () => {
    const stepped = await makeSite("ashcast-clock-back-");
    try {
      await addRun(stepped, "older", "2024-05-01T12:00:00Z");
      await buildSite(stepped, "2026-11-01T12:00:00Z");
      const newer = await addRun(stepped, "newer", "2024-05-02T12:00:00Z");
      await buildSite(stepped, "2026-11-01T11:00:00Z"); // the clock an hour back
      const steppedServer = await serve(stepped);
      try {
        const held = await http(steppedServer, "/", { headers: UA });
        await editRunJson(newer, (manifest) => (manifest.description = "Corrected."));
        const corrected = await buildSite(stepped, "2026-11-01T11:00:00Z");
        await untilServing(steppedServer, corrected.release);
        const res = await http(steppedServer, "/", { headers: { ...UA, "if-modified-since": held.headers["last-modified"]! } });
        expect(res.status).toBe(200);
        expect(res.headers.etag).not.toBe(held.headers.etag);
        expect(parseHttpDate(res.headers["last-modified"]!)!).toBeGreaterThan(parseHttpDate(held.headers["last-modified"]!)!);
      } finally {
        await steppedServer.close();
      }
    } finally {
      await stepped.cleanup();
    }
  });
});

