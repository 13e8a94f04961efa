/**
 * Throttling and identification in front of everything the server answers (security.md, "Throttling and
 * identification"; spec, Limits and Errors rule 3), over real sockets: 429 with Retry-After and the
 * RateLimit fields, never cacheable; a missing or empty User-Agent is 429; per route class limits; the
 * client key from the socket, a forged X-Forwarded-For from an untrusted peer changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTraffic, parseTrafficFile, resolveTraffic, DEFAULT_TRAFFIC } from "../../src/server/limits/trafficConfig.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, expectProblem, header, http, makeSite, serve, waitFor, type Site } from "../server/serverFixtures.ts";
import { burstOnly, trafficFor, UA } from "./trafficFixtures.ts";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { formatError, UserError } from "../../src/errors.ts";
import { execFile } from "node:child_process";
import { request as httpRequest } from "node:http";
import { promisify } from "node:util";

let site: Site;
const servers: RunningServer[] = [];
const start = async (traffic: Parameters<typeof trafficFor>[1]) => {
  const server = await serve(site, { traffic: trafficFor(site, traffic) });
  servers.push(server);
  return server;
};

beforeAll(async () => {
  site = await makeSite("ashcast-throttle-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await site.cleanup();
});

describe("throttling", () => {
  it("answers 429 past the limit, with Retry-After in seconds, RateLimit-Policy and RateLimit, no-store, a problem body", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(3) } });
    for (let i = 0; i < 3; i++) expect((await http(server, "/reftimes", { headers: UA })).status).toBe(200);
    const res = await http(server, "/reftimes", { headers: UA });
    const problem = expectProblem(res, 429);
    expect(problem.title).toBe("Too Many Requests");
    expect(problem.detail).toMatch(/retry after \d+ s/);
    expect(header(res, "retry-after")).toMatch(/^[1-9]\d*$/);
    expect(Number(header(res, "retry-after"))).toBeGreaterThan(900); // 1 request per 1000 s
    expect(header(res, "ratelimit-policy")).toMatch(/^"data";q=3;w=\d+$/);
    expect(header(res, "ratelimit")).toBe(`"data";r=0;t=${header(res, "retry-after")}`);
    expect(header(res, "cache-control")).toBe("no-store");
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers["last-modified"]).toBeUndefined();
    expect(res.headers.expires).toBeUndefined();
    // HEAD is counted alike and gets the same headers, without a body.
    const head = await http(server, "/reftimes", { method: "HEAD", headers: UA });
    expect(head.status).toBe(429);
    expect(head.body.length).toBe(0);
    expect(header(head, "retry-after")).toMatch(/^\d+$/);
  });

  it("sits in front of the fast path: a refused request never reaches it", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(2) } });
    await http(server, "/", { headers: UA });
    await http(server, "/", { headers: UA });
    const answered = server.fastPath.answered;
    expect(answered).toBe(2);
    expect((await http(server, "/", { headers: UA })).status).toBe(429);
    expect((await http(server, "/.json", { headers: UA })).status).toBe(429);
    expect(server.fastPath.answered).toBe(answered);
    // And in front of the app too (a route the fast path never answers).
    expect((await http(server, "/openapi.json", { headers: UA })).status).toBe(429);
  });

  it("keys clients by User-Agent and address: another agent from the same address has its own allowance", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(1) } });
    expect((await http(server, "/reftimes", { headers: { "user-agent": "one/1" } })).status).toBe(200);
    expect((await http(server, "/reftimes", { headers: { "user-agent": "one/1" } })).status).toBe(429);
    expect((await http(server, "/reftimes", { headers: { "user-agent": "two/1" } })).status).toBe(200);
  });

  it("counts a client with a huge User-Agent under one bounded key (the first 200 characters)", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(1) } });
    const long = `big/1 ${"x".repeat(8000)}`;
    expect((await http(server, "/reftimes", { headers: { "user-agent": `${long}a` } })).status).toBe(200);
    expect((await http(server, "/reftimes", { headers: { "user-agent": `${long}b` } })).status).toBe(429);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy: forging it gains nothing", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(2) }, trustedProxies: ["10.1.2.3"] });
    const forged = (n: number) => ({ ...UA, "x-forwarded-for": `198.51.100.${n}`, forwarded: `for=198.51.100.${n}` });
    // (With a proxy configured, a plain request from anyone else is redirected to HTTPS: 301, but counted first.)
    expect((await http(server, "/reftimes", { headers: forged(1) })).status).toBe(301);
    expect((await http(server, "/reftimes", { headers: forged(2) })).status).toBe(301);
    expect((await http(server, "/reftimes", { headers: forged(3) })).status).toBe(429);
  });

  it("keys the clients of a trusted proxy by the address it forwards, N hops from the right", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(1) }, trustedProxies: ["127.0.0.1", "::1"], proxyHops: 1 });
    // (Requests carry X-Forwarded-Proto: https, or the trusted proxy's plain requests would be redirected.)
    const via = (chain: string) => ({ ...UA, "x-forwarded-for": chain, "x-forwarded-proto": "https" });
    expect((await http(server, "/reftimes", { headers: via("6.6.6.6, 198.51.100.1") })).status).toBe(200);
    expect((await http(server, "/reftimes", { headers: via("7.7.7.7, 198.51.100.1") })).status).toBe(429); // same client, spoofed left part
    expect((await http(server, "/reftimes", { headers: via("198.51.100.2") })).status).toBe(200);
  });

  it("limits each route class on its own: data, sign-in (/token, /login), operator addresses in every spelling, and /route", async () => {
    const server = await start({ limits: { data: burstOnly(2), token: burstOnly(1), operator: burstOnly(2), route: burstOnly(1) } });
    // Sign-in: POST /token and /login share the token class.
    const form = { ...UA, "content-type": "application/x-www-form-urlencoded" };
    expect((await http(server, "/token", { method: "POST", headers: form, body: "username=a&password=b" })).status).not.toBe(429);
    const login = await http(server, "/login", { method: "POST", headers: form, body: "username=a&password=b" });
    expectProblem(login, 429);
    expect(header(login, "ratelimit-policy")).toMatch(/^"token";q=1;w=\d+$/);
    // Operator: protected addresses, however spelled, count in the operator class (401 until it is used up).
    expect((await http(server, "/datasets", { headers: UA })).status).toBe(401);
    expect((await http(server, "//datasets/", { headers: UA })).status).toBe(401);
    const third = await http(server, "/%64atasets", { headers: UA });
    expect(third.status).toBe(429);
    expect(header(third, "ratelimit-policy")).toMatch(/^"operator";/);
    // POST /route: its own class (a route costs far more than a data request); the second is refused.
    const geojson = { ...UA, "content-type": "application/geo+json" };
    expect((await http(server, "/route", { method: "POST", headers: geojson, body: "{}" })).status).not.toBe(429);
    const route = await http(server, "//route", { method: "POST", headers: geojson, body: "{}" });
    expectProblem(route, 429);
    expect(header(route, "ratelimit-policy")).toMatch(/^"route";q=1;w=\d+$/);
    // Data is untouched by the others.
    expect((await http(server, "/reftimes", { headers: UA })).status).toBe(200);
    expect((await http(server, "/", { headers: UA })).status).toBe(200);
    expect(header(await http(server, "/changelog", { headers: UA }), "ratelimit-policy")).toMatch(/^"data";/);
  });

  it("classes a request by its path whatever the target's form: an absolute-form POST /route is a route, not data; a preflight is data", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, route: burstOnly(1), token: burstOnly(1) } });
    const { port } = new URL(server.url);
    // node:http sends `path` as the request target as it is: here an absolute URL, as a proxy client would.
    const absolute = (target: string, method: string, headers: Record<string, string>, body: string) =>
      new Promise<{ status: number; policy: string | undefined }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, method, path: `http://elsewhere.example/volcanicashforecast/0.1${target}`, headers: { ...UA, ...headers }, agent: false }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, policy: res.headers["ratelimit-policy"] as string | undefined }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const geojson = { "content-type": "application/geo+json" };
    expect((await absolute("/route", "POST", geojson, "{}")).status).not.toBe(429);
    const second = await absolute("/route", "POST", geojson, "{}");
    expect(second.status).toBe(429);
    expect(second.policy).toMatch(/^"route";q=1;/);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    expect((await absolute("/token", "POST", form, "username=a&password=b")).status).not.toBe(429);
    expect((await absolute("/token", "POST", form, "username=c&password=d")).status).toBe(429);
    // CORS preflights of /route are data requests: they leave its allowance alone.
    const other = { "user-agent": "preflighting-page/1 ops@example.org" };
    for (let i = 0; i < 3; i++) expect((await http(server, "/route", { method: "OPTIONS", headers: { ...other, origin: "https://maps.example.org", "access-control-request-method": "POST" } })).status).toBe(204);
    expect((await http(server, "/route", { method: "POST", headers: { ...other, ...geojson }, body: "{}" })).status).not.toBe(429);
  });

  it("says how long to wait from when the refusal is written, not from when it was decided", async () => {
    // 1 request per 2 s after a burst of 1; refusals held 1.5 s: written with at most 0.5 s left, so Retry-After 1, not 2.
    const server = await start({ limits: { ...trafficFor(site).limits, data: { ratePerSecond: 0.5, burst: 1 } }, holdRefusalsMs: 1500 });
    expect((await http(server, "/reftimes", { headers: UA })).status).toBe(200);
    const refused = await http(server, "/reftimes", { headers: UA });
    expect(refused.status).toBe(429);
    expect(header(refused, "retry-after")).toBe("1");
    expect(header(refused, "ratelimit")).toBe('"data";r=0;t=1');
  });

  it("allows exactly the burst at every rate: no refusal from rounding (7 per second in bursts of 1 refused every fresh client)", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: { ratePerSecond: 7, burst: 1 } } });
    for (let i = 0; i < 30; i++) expect((await http(server, "/reftimes", { headers: { "user-agent": `fresh-client-${i}/1 ops@example.org` } })).status).toBe(200);
  });

  it("holds refusals before answering them (an abuser's connection idles), at most until its Retry-After, and frees them when the client goes away", async () => {
    const server = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(1) }, holdRefusalsMs: 800 });
    expect((await http(server, "/reftimes", { headers: UA })).status).toBe(200);
    const refused = http(server, "/reftimes", { headers: UA });
    await waitFor("the refusal to be held", () => server.traffic!.guard.holding === 1);
    const res = await refused;
    expectProblem(res, 429);
    expect(server.traffic!.guard.holding).toBe(0);
    // A client that hangs up while held frees its place: long before the 10 s hold would end.
    const holding = await start({ limits: { ...trafficFor(site).limits, data: burstOnly(1) }, holdRefusalsMs: 10_000 });
    expect((await http(holding, "/reftimes", { headers: UA })).status).toBe(200);
    const controller = new AbortController();
    const gone = fetch(`${holding.url}/reftimes`, { headers: UA, signal: controller.signal }).catch(() => "aborted");
    await waitFor("the second refusal to be held", () => holding.traffic!.guard.holding === 1);
    controller.abort();
    expect(await gone).toBe("aborted");
    await waitFor("the place to be freed", () => holding.traffic!.guard.holding === 0, 5000);
  });

  it("shows the limits in effect in GET /config", async () => {
    const server = await start({ limits: { data: burstOnly(50), token: burstOnly(5), operator: burstOnly(5), route: burstOnly(5) } });
    const config = (await http(server, "/config", { headers: UA })).json() as { traffic: { limits: { data: { burst: number } }; sharedState: string }; transport: { mode: string } };
    expect(config.traffic.limits.data.burst).toBe(50);
    expect(config.traffic.sharedState).toMatch(/^memory/);
    expect(config.transport.mode).toBe("loopback");
  });
});

describe("the OpenAPI document", () => {
  it("lists the guard's 301, 403 and 429 (with Retry-After and the RateLimit fields) on every operation", async () => {
    const { openApiDocument } = await import("../../src/server/openapi.ts");
    const paths = openApiDocument().paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> }>>;
    for (const [route, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of ["301", "403", "429"]) expect(operation.responses[status], `${method} ${route} ${status}`).toBeDefined();
        expect(Object.keys(operation.responses["429"]!.headers ?? {})).toEqual(["Retry-After", "RateLimit-Policy", "RateLimit"]);
        expect(operation.responses["429"]!.content).toHaveProperty(["application/problem+json"]);
      }
    }
    // The sign-in 429 keeps its OAuth body (the per-account backoff) beside the guard's problem.
    expect(Object.keys(paths["/token"]!.post!.responses["429"]!.content!).sort()).toEqual(["application/json;charset=UTF-8", "application/problem+json"]);
  });
});

describe("identification", () => {
  it("answers 429 to a missing or empty User-Agent, saying how to identify and linking the terms of service", async () => {
    const server = await start({});
    for (const headers of [{}, { "user-agent": "" }, { "user-agent": "   " }] as Array<Record<string, string>>) {
      const res = await http(server, "/", { headers });
      const problem = expectProblem(res, 429);
      expect(problem.detail).toMatch(/User-Agent/);
      expect(problem.detail).toContain("/volcanicashforecast/0.1/doc/TermsOfService");
      expect(header(res, "cache-control")).toBe("no-store");
      expect(header(res, "retry-after")).toMatch(/^\d+$/);
      expect(header(res, "link")).toContain("/doc/TermsOfService");
    }
    // The terms themselves need an identified client too, but the link is what a person follows in a browser.
    expect((await http(server, "/doc/TermsOfService", { headers: UA })).status).toBe(200);
  });

  it("treats configured generic agents as missing, and accepts Origin or Referer from browsers", async () => {
    const server = await start({ genericUserAgents: ["^curl/", "^python-requests/"] });
    expectProblem(await http(server, "/", { headers: { "user-agent": "curl/8.5.0" } }), 429);
    expectProblem(await http(server, "/", { headers: { "user-agent": "python-requests/2.31" } }), 429);
    expect((await http(server, "/", { headers: { "user-agent": "curlish-app/1 me@example.org" } })).status).toBe(200);
    expect((await http(server, "/", { headers: { "user-agent": "curl/8.5.0", origin: "https://viewer.example.org" } })).status).toBe(200);
    expect((await http(server, "/", { headers: { referer: "https://viewer.example.org/map?x=1" } })).status).toBe(200);
    expectProblem(await http(server, "/", { headers: { referer: "not a url" } }), 429);
  });
});

describe("the traffic settings file", () => {
  const template = fileURLToPath(new URL("../../templates/traffic.json", import.meta.url));

  it("templates/traffic.json holds the defaults", async () => {
    const parsed = parseTrafficFile(JSON.parse(await readFile(template, "utf8")), template);
    expect(resolveTraffic(parsed, {})).toEqual(DEFAULT_TRAFFIC);
  });

  it("ASHCAST_RATE_PER_SECOND and ASHCAST_RATE_BURST override the data class only", () => {
    const resolved = resolveTraffic(undefined, { ASHCAST_RATE_PER_SECOND: "5000", ASHCAST_RATE_BURST: "20000" });
    expect(resolved.limits.data).toEqual({ ratePerSecond: 5000, burst: 20000 });
    expect(resolved.limits.token).toEqual(DEFAULT_TRAFFIC.limits.token);
    expect(() => resolveTraffic(undefined, { ASHCAST_RATE_BURST: "1.5" })).toThrow(UserError);
    try {
      resolveTraffic(undefined, { ASHCAST_RATE_PER_SECOND: "fast" });
    } catch (error) {
      expect(formatError(error)).toMatch(/ASHCAST_RATE_PER_SECOND: "fast" is not a valid value\n {2}fix: /);
    }
  });

  it("refuses a broken file at start, naming the file, the key and the fix", async () => {
    const file = path.join(site.root, "traffic.json");
    await writeFile(file, JSON.stringify({ format: 1, limits: { data: { ratePerSecond: 0, burst: 10 } } }));
    await expect(loadTraffic(file, {})).rejects.toThrow(/limits\.data\.ratePerSecond/);
    await writeFile(file, JSON.stringify({ format: 1, trustedProxies: ["proxy.example.org"] }));
    const error = await loadTraffic(file, {}).catch((e: unknown) => e);
    expect(formatError(error)).toContain(file);
    expect(formatError(error)).toMatch(/trustedProxies\.0: .*not an IP address/);
    await writeFile(file, JSON.stringify({ format: 1, burst: 3 }));
    await expect(loadTraffic(file, {})).rejects.toThrow(/burst: is not a traffic setting/);
    await expect(loadTraffic(path.join(site.root, "missing.json"), {})).rejects.toThrow(/cannot read the traffic settings file/);
  });

  it("ashcast start refuses a broken file before its first build", async () => {
    const file = path.join(site.root, "broken-traffic.json");
    await writeFile(file, JSON.stringify({ format: 1, proxyHops: 0 }));
    const out = path.join(site.root, "never-built");
    const bin = fileURLToPath(new URL("../../bin/ashcast", import.meta.url));
    const failed = await promisify(execFile)(bin, ["start", "--runs", site.runsDir, "--out", out, "--traffic", file, "--port", "0"], { cwd: site.root, timeout: 60_000 }).catch((error: { code: unknown; stderr: string }) => error);
    expect((failed as { code: unknown }).code).toBe(2);
    expect((failed as { stderr: string }).stderr).toContain(`${file}: proxyHops:`);
    await expect(readFile(path.join(out, "current", "index.json"))).rejects.toThrow(/ENOENT/);
  });
});
