/**
 * ashcast behind a real Varnish running deploy/varnish/ashcast.vcl, started as README.md says: what is
 * stored, what is stored apart, what never is, conditional requests, throttling per client through the
 * proxy, purges only from the allowed addresses, and grace while the origin is down.
 */
import { Agent } from "node:http";
import { connect } from "node:net";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { trafficFor } from "../limits/trafficFixtures.ts";
import { OPERATOR_ENV, writeOperator } from "../operator/operatorFixtures.ts";
import { addRun, buildSite, http, makeSite, waitFor, type RawResponse, type Site } from "../server/serverFixtures.ts";
import { cacheStatus, client, startVarnish, through, type Varnish } from "./varnishFixtures.ts";

const GRACE_SECONDS = 3;
const MODEL_REFTIME = "2024-05-03T00:00:00Z";
let site: Site;
let origin: RunningServer;
let varnish: Varnish;
let operator: Record<string, string>;

beforeAll(async () => {
  site = await makeSite("ashcast-varnish-");
  await addRun(site, "older", "2024-05-01T12:00:00Z");
  // The latest run has model output, so it has a PNG map and `/` negotiates JSON or PNG.
  const modelRun = path.join(site.runsDir, "model");
  await writeEemepOutput({ outDir: modelRun, nx: 40, ny: 20, steps: 3, reftime: MODEL_REFTIME, volcanoXml: true });
  await writeFile(path.join(modelRun, "run.json"), JSON.stringify({ type: "Exercise" }));
  await buildSite(site);
  const usersFile = path.join(site.root, "users.json");
  await writeOperator(usersFile);
  await writeFile(path.join(site.root, "blocklist.json"), JSON.stringify({ format: 1, userAgents: ["^blocked-agent"], addresses: [] }));
  origin = await startServer({
    distDir: site.distDir,
    port: 0,
    host: "127.0.0.1",
    usersFile,
    env: OPERATOR_ENV,
    // Varnish is the trusted proxy: its X-Forwarded-For names the client.
    traffic: trafficFor(site, { trustedProxies: ["127.0.0.1"] }),
  });
  varnish = await startVarnish(Number(new URL(origin.url).port), GRACE_SECONDS);
  // Signed in through the proxy, as over HTTPS (the origin refuses credentials sent in clear).
  const token = await through(varnish, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
  operator = { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
});

afterAll(async () => {
  await varnish?.stop();
  await origin?.close();
  await site?.cleanup();
});

const decoded = (res: RawResponse): Buffer => {
  const encoding = res.headers["content-encoding"];
  return encoding === "br" ? brotliDecompressSync(res.body) : encoding === "gzip" ? gunzipSync(res.body) : res.body;
};

describe("through Varnish", () => {
  it("the second request for an address is a hit, with the same bytes and validators", async () => {
    const first = await through(varnish, "/reftimes");
    const second = await through(varnish, "/reftimes");
    expect(first.status).toBe(200);
    expect(cacheStatus(first)).toBe("MISS");
    expect(cacheStatus(second)).toBe("HIT");
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers.etag).toBe(first.headers.etag);
    // The tags are for Varnish; a CDN in front still reads Surrogate-Key.
    expect(second.headers.xkey).toBeUndefined();
    expect(second.headers["surrogate-key"]).toBe("reftimes");
  });

  it("JSON and PNG, br, gzip and identity are stored apart, each answered as the origin answers it", async () => {
    const variants = [
      { accept: "application/json", contentType: "application/json;charset=UTF-8" },
      { accept: "image/png", contentType: "image/png" },
    ];
    for (const { accept, contentType } of variants) {
      for (const encoding of ["br", "gzip", "identity"]) {
        const headers = { accept, "accept-encoding": encoding === "identity" ? "" : `${encoding}` };
        const direct = await http(origin, "/", { headers: client(headers) });
        const first = await through(varnish, "/", { headers });
        const again = await through(varnish, "/", { headers });
        const what = `${accept} ${encoding}`;
        expect(first.status, what).toBe(200);
        expect(first.headers["content-type"], what).toBe(contentType);
        expect(first.headers["content-encoding"], what).toBe(direct.headers["content-encoding"]);
        expect(first.headers.etag, what).toBe(direct.headers.etag);
        expect(decoded(first).equals(decoded(direct)), what).toBe(true);
        expect(cacheStatus(again), what).toBe("HIT");
        expect(again.headers.etag, what).toBe(direct.headers.etag);
      }
    }
    // Codings refused by q=0, or named in capitals, and a media type in capitals: as the origin decides.
    const refusals: Array<Record<string, string>> = [
      { "accept-encoding": "br;q=0, gzip" },
      { "accept-encoding": "gzip;q=0, identity" },
      { "accept-encoding": "br;q=0" },
      { "accept-encoding": "GZIP" },
      { "accept-encoding": "br;q=0.5, gzip;q=0.0" },
      { accept: "IMAGE/PNG", "accept-encoding": "gzip" },
    ];
    for (const headers of refusals) {
      const direct = await http(origin, "/", { headers: client(headers) });
      const cached = await through(varnish, "/", { headers });
      const what = JSON.stringify(headers);
      expect(cached.headers["content-encoding"], what).toBe(direct.headers["content-encoding"]);
      expect(cached.headers["content-type"], what).toBe(direct.headers["content-type"]);
    }
    // An Accept that names no image: JSON, and the same stored copy whatever its exact text.
    const html = await through(varnish, "/", { headers: { accept: "text/html, */*;q=0.1", "accept-encoding": "gzip" } });
    expect(html.headers["content-type"]).toBe("application/json;charset=UTF-8");
    expect(cacheStatus(html)).toBe("HIT");
  });

  it("conditional requests are answered 304 by the cache", async () => {
    const full = await through(varnish, "/changelog", { headers: { "accept-encoding": "gzip" } });
    expect(full.status).toBe(200);
    const conditionals: Array<Record<string, string>> = [{ "if-none-match": full.headers.etag! }, { "if-modified-since": full.headers["last-modified"]! }];
    for (const conditional of conditionals) {
      const res = await through(varnish, "/changelog", { headers: { "accept-encoding": "gzip", ...conditional } });
      expect(res.status, JSON.stringify(conditional)).toBe(304);
      expect(res.body.length).toBe(0);
      expect(res.headers.etag).toBe(full.headers.etag);
      expect(cacheStatus(res)).toBe("HIT");
    }
  });

  it("401, 403 and 429 are never stored: the next client on the same address gets its own answer", async () => {
    // 403: a blocked agent asks first for an address nobody asked for yet.
    const blocked = await through(varnish, "/.json", { headers: { "user-agent": "blocked-agent/1" } });
    expect(blocked.status).toBe(403);
    const afterBlocked = await through(varnish, "/.json");
    expect(afterBlocked.status).toBe(200);
    expect(cacheStatus(afterBlocked)).toBe("MISS");
    // 429: no User-Agent, on another fresh address.
    const anonymous = await through(varnish, `/.json?reftime=${MODEL_REFTIME}`, { headers: { "user-agent": "" } });
    expect(anonymous.status).toBe(429);
    expect(anonymous.headers["cache-control"]).toBe("no-store");
    const afterAnonymous = await through(varnish, `/.json?reftime=${MODEL_REFTIME}`);
    expect(afterAnonymous.status).toBe(200);
    // 401 twice: each asked of the origin, never a copy.
    for (let i = 0; i < 2; i++) {
      const refused = await through(varnish, "/datasets");
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(cacheStatus(refused)).not.toBe("HIT");
    }
  });

  it("operator answers and token-bearing requests always reach the origin: nobody gets another client's answer", async () => {
    const report = await through(varnish, "/datasets", { headers: operator });
    expect(report.status).toBe(200);
    expect(cacheStatus(report)).not.toBe("HIT");
    // Right after the operator's 200, an anonymous client still gets its own 401.
    expect((await through(varnish, "/datasets")).status).toBe(401);
    // /config is public, but an operator changes it without a publish: always asked of the origin.
    for (let i = 0; i < 2; i++) expect(cacheStatus(await through(varnish, "/config"))).toBe("MISS");
    // A stored public answer is not given to a request that carries a token (it may be answered differently).
    await through(varnish, "/resources?name=volcanoes.json");
    expect(cacheStatus(await through(varnish, "/resources?name=volcanoes.json"))).toBe("HIT");
    const withToken = await through(varnish, "/resources?name=volcanoes.json", { headers: operator });
    expect(withToken.status).toBe(200);
    expect(cacheStatus(withToken)).not.toBe("HIT");
    // Any Authorization at all, even one the origin ignores on a public address, is passed.
    expect(cacheStatus(await through(varnish, "/resources?name=volcanoes.json", { headers: { authorization: "Bearer forged" } }))).toBe("MISS");
  });

  it("throttles per client behind Varnish: X-Forwarded-For from the trusted proxy names the client, a forged one changes nothing", async () => {
    const from = (address: string) => new Agent({ keepAlive: true, localAddress: address });
    const greedy = from("127.0.0.2");
    const other = from("127.0.0.3");
    try {
      // /healthz is passed to the origin on every request, so each one meets the guard.
      const statuses: number[] = [];
      for (let i = 0; i < 160 && !statuses.includes(429); i++) statuses.push((await through(varnish, "/healthz", { agent: greedy, headers: { "x-forwarded-for": `10.9.${i}.1` } })).status);
      expect(statuses).toContain(429);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(100);
      // Another client, same User-Agent, through the same Varnish: its own allowance.
      expect((await through(varnish, "/healthz", { agent: other })).status).toBe(200);
    } finally {
      greedy.destroy();
      other.destroy();
    }
  });

  it("behind the TLS terminator (PROXY protocol): each client throttled by its own address, and no purge whatever the address", async () => {
    // What hitch or haproxy sends: the client's address in the PROXY line, then its request, all from 127.0.0.1.
    const viaTerminator = (source: string, request: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = connect(varnish.tlsPort, "127.0.0.1");
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        socket.on("error", reject);
        socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
        socket.end(`PROXY TCP4 ${source} 127.0.0.1 40000 ${varnish.tlsPort}\r\n${request}`);
      });
    const get = (source: string) => viaTerminator(source, `GET /volcanicashforecast/0.1/healthz HTTP/1.1\r\nHost: ashcast\r\nUser-Agent: airline-poller/1 ops@example.org\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n`);
    // From an address the purge list allows, but through the terminator's listener: refused.
    expect(await viaTerminator("127.0.0.1", "PURGE / HTTP/1.1\r\nHost: ashcast\r\nxkey: changelog\r\nConnection: close\r\n\r\n")).toBe(403);
    const statuses: number[] = [];
    for (let i = 0; i < 160 && !statuses.includes(429); i++) statuses.push(await get("203.0.113.7"));
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(100);
    // Another client through the same terminator: its own allowance.
    expect(await get("203.0.113.8")).toBe(200);
  });

  it("purges only from the allowed addresses, and only by tag", async () => {
    const purge = (agent?: Agent, headers: Record<string, string> = { xkey: "changelog" }) => http(varnish.url, "/", { method: "PURGE", headers, ...(agent ? { agent } : {}) });
    const stranger = new Agent({ localAddress: "127.0.0.5" });
    try {
      expect((await purge(stranger)).status).toBe(403);
    } finally {
      stranger.destroy();
    }
    expect((await purge(undefined, {})).status).toBe(400);
    await through(varnish, "/changelog");
    const allowed = await purge();
    expect(allowed.status).toBe(200);
    expect(allowed.text()).toMatch(/purged [1-9]\d* objects/);
    expect(cacheStatus(await through(varnish, "/changelog"))).toBe("MISS");
  });
});

describe("with the origin down", () => {
  it("serves the last copy within grace, saying it is stale, then a clear 503 problem", async () => {
    const fresh = await through(varnish, "/reftimes");
    expect(fresh.status).toBe(200);
    // A publish purges softly: the copy expires but stays for grace.
    expect((await http(varnish.url, "/", { method: "PURGE", headers: { xkey: "reftimes" } })).status).toBe(200);
    await origin.close();
    let stale: RawResponse | undefined;
    await waitFor("Varnish to see the origin down and serve the stale copy", async () => {
      stale = await through(varnish, "/reftimes");
      return cacheStatus(stale) === "STALE";
    });
    expect(stale!.status).toBe(200);
    expect(stale!.body.equals(fresh.body)).toBe(true);
    expect(stale!.headers.warning).toContain("110");
    // Past the grace: an error that says what happened, never cached.
    let gone: RawResponse | undefined;
    await waitFor("the grace to run out", async () => {
      gone = await through(varnish, "/reftimes");
      return gone.status === 503;
    });
    expect(gone!.headers["content-type"]).toBe("application/problem+json");
    expect(gone!.headers["cache-control"]).toBe("no-store");
    expect((gone!.json() as { detail: string }).detail).toMatch(/origin servers are unreachable/);
  });
});
