/**
 * The node fast path in front of the Hono app: for every request it answers, the answer over the real
 * socket must equal the app's own answer to the same request (status, headers, body bytes); it must
 * answer the hot requests itself once their bytes are in memory, and leave everything else to the app.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, PRODUCT_PATH } from "../../src/server/app.ts";
import { parseHttpDate } from "../../src/server/http.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, http, makeSite, serve, type RawResponse, type Site } from "./serverFixtures.ts";

const OLDER = "2024-05-01T12:00:00Z";
const LATEST = "2024-05-02T00:00:00Z";
/** Headers that belong to the connection or the moment, not to the answer. */
const PER_CONNECTION = new Set(["date", "connection", "keep-alive", "expires"]);

let site: Site;
let server: RunningServer;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  site = await makeSite("ashcast-fastpath-");
  await addRun(site, "2024-05-01-hekla", OLDER, "Exercise");
  await addRun(site, "2024-05-02-katla", LATEST, "Rehearsal");
  await buildSite(site);
  server = await serve(site);
  // The app alone, on the same release source, as the reference the fast path must equal.
  app = createApp({ source: server.source, termsOfService: Buffer.from("terms"), openapi: Buffer.from("{}") });
});

afterAll(async () => {
  await server.close();
  await site.cleanup();
});

async function appAnswer(target: string, method: string, headers: Record<string, string>): Promise<RawResponse> {
  const response = await app.request(`http://127.0.0.1${PRODUCT_PATH}${target}`, { method, headers });
  const body = Buffer.from(await response.arrayBuffer());
  const plain: Record<string, string> = {};
  response.headers.forEach((value, name) => (plain[name] = value));
  return { status: response.status, headers: plain, body, text: () => body.toString("utf8"), json: () => JSON.parse(body.toString("utf8")) as unknown };
}

function comparable(res: RawResponse): { status: number; headers: Record<string, unknown>; body: string } {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_CONNECTION.has(name)));
  // The adapter adds the length of a text body on the socket; app.request() leaves it out.
  if (headers["content-length"] === undefined && res.body.length > 0) headers["content-length"] = String(res.body.length);
  return { status: res.status, headers, body: res.body.toString("base64") };
}

/** Run resource names of a run (KML of its advisory layer), as the app lists them. */
async function runResourceNames(reftime: string): Promise<string[]> {
  const names = (await appAnswer(`/resources?reftime=${reftime}`, "GET", {})).json() as string[];
  return names.filter((name) => name.startsWith(`${reftime}/`));
}

describe("the fast path", () => {
  it("answers exactly as the app does, for every hot route, encoding, validator and method", async () => {
    const [runResource] = await runResourceNames(LATEST);
    expect(runResource).toBeDefined();
    const viewerScript = Object.keys(server.source.current!.index.viewer!).find((file) => file.endsWith(".js"))!;
    const targets = [
      "/", "/.json", `/?reftime=${OLDER}`, `/.json?reftime=${LATEST}`, "/reftimes", "/changelog", `/resources?name=${runResource}`, "/resources?name=volcanoes.json",
      "/viewer/", `/viewer/?reftime=${OLDER}&band=SFC%2FFL200`, `/viewer/${viewerScript}`,
    ];
    // Prime the caches through the app first (the fast path answers only from memory).
    for (const target of targets) {
      for (const acceptEncoding of ["identity", "gzip", "br"]) await appAnswer(target, "GET", { "accept-encoding": acceptEncoding });
    }
    let compared = 0;
    for (const target of targets) {
      const identity = await http(server, target);
      const etag = identity.headers.etag as string | undefined;
      const lastModified = identity.headers["last-modified"] as string | undefined;
      const variants: Array<Record<string, string>> = [
        {},
        { "accept-encoding": "gzip" },
        { "accept-encoding": "gzip, deflate, br" },
        { "accept-encoding": "br;q=0, gzip;q=0.5" },
        { accept: "image/png" },
        ...(etag ? [{ "if-none-match": etag }, { "if-none-match": `W/${etag}, "other"` }] : []),
        ...(lastModified ? [{ "if-modified-since": lastModified }] : []),
      ];
      for (const headers of variants) {
        for (const method of ["GET", "HEAD"]) {
          const before = server.fastPath.answered;
          const overSocket = await http(server, target, { method, headers });
          const fromApp = await appAnswer(target, method, headers);
          const label = `${method} ${target} ${JSON.stringify(headers)}`;
          expect(server.fastPath.answered, label).toBe(before + 1);
          expect(comparable(overSocket), label).toEqual(comparable(fromApp));
          const expires = parseHttpDate(overSocket.headers.expires as string);
          expect(Math.abs(expires! - parseHttpDate(fromApp.headers.expires as string)!), label).toBeLessThanOrEqual(1000);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it("leaves errors, encoded queries, other methods and unusual paths to the app", async () => {
    const cases: Array<[string, string, number]> = [
      ["GET", "/?reftime=2024-05-03T00:00:00Z", 404],
      ["GET", "/?reftime=yesterday", 400],
      ["GET", `/?reftime=${encodeURIComponent("2024-05-02T01:00:00+01:00")}`, 200],
      ["GET", `/?reftime=${OLDER}&reftime=${LATEST}`, 400],
      ["GET", "/?format=json", 200],
      ["GET", "/resources", 200],
      ["GET", "/resources?name=nothing", 404],
      ["GET", "/healthz", 200],
      ["GET", "/reftimes/", 404],
      ["GET", "//reftimes", 404],
      ["POST", "/", 401],
      ["OPTIONS", "/", 204],
      ["GET", "/viewer/nothing.js", 404],
      ["GET", "/viewer/%69ndex.html", 200],
    ];
    for (const [method, target, status] of cases) {
      const before = server.fastPath.answered;
      const res = await http(server, target, { method });
      expect(res.status, `${method} ${target}`).toBe(status);
      expect(server.fastPath.answered, `${method} ${target}`).toBe(before);
      expect(comparable(res), `${method} ${target}`).toEqual(comparable(await appAnswer(target, method, {})));
    }
  });

  it("falls through while a body is not in memory, and answers from memory once the app has read it", async () => {
    const { source } = server;
    // A resource of the older run: no request above asked for it, and only the latest run's JSON is read at load.
    const [name] = await runResourceNames(OLDER);
    const run = source.current!.index.runs[OLDER]!;
    const list = await source.runArtefacts(run);
    const stored = list.artefacts[list.resources[name!]!]!.identity;
    expect(source.cachedBody(stored)).toBeUndefined();
    const before = server.fastPath.answered;
    const first = await http(server, `/resources?name=${name}`);
    expect(first.status).toBe(200);
    expect(first.body.equals(await readFile(`${site.distDir}/${stored.file}`))).toBe(true);
    expect(server.fastPath.answered).toBe(before);
    const second = await http(server, `/resources?name=${name}`);
    expect(second.body.equals(first.body)).toBe(true);
    expect(server.fastPath.answered).toBe(before + 1);
  });

  it("answers nothing the access rules protect: a rules file protecting GET /reftimes sends it through the checks", async () => {
    const rulesFile = path.join(site.root, "access-rules.json");
    await writeFile(rulesFile, JSON.stringify({ format: 1, rules: [{ method: "GET", path: "/reftimes", protected: true, role: "operator" }] }));
    const guarded = await serve(site, { accessRulesFile: rulesFile });
    try {
      const before = guarded.fastPath.answered;
      const reftimes = await http(guarded, "/reftimes");
      expect(reftimes.status).toBe(401);
      expect(reftimes.headers["www-authenticate"]).toBe('Bearer realm="ashcast"');
      expect((await http(guarded, "/.json")).status).toBe(200);
      expect(guarded.fastPath.answered).toBe(before + 1); // /.json only
    } finally {
      await guarded.close();
    }
  });
});
