/**
 * A request fuzzer driven by the server's own /openapi.json. One real server as `ashcast start` runs
 * it (the builder in its worker thread, users, operator routes, the fast path in front), and a seeded
 * random sample of requests: the document's paths and respellings of them (percent-encoding, dot
 * segments, double and trailing slashes, encoded slashes), unknown suffixes and paths, random query
 * parameters, methods, headers (Accept, Accept-Encoding, If-None-Match, Range, Content-Type,
 * Authorization with valid, role-less, expired, foreign-key, unsigned and garbage tokens) and bodies.
 *
 * Every answer must be: below 500; a status the document declares for that path and method (a
 * respelt path may also be redirected, refused as unreadable or not found; an undocumented method
 * gets 405, an auth refusal, or the CORS preflight answer for OPTIONS); and a protected request never
 * succeeds without an operator's token.
 *
 * Also: a resource name finds a body only when it is listed exactly (every respelling of every listed name,
 * then random names).
 *
 * Replay a failure with ASHCAST_FUZZ_SEED=<seed> (printed, and in fast-check's report);
 * ASHCAST_LONG_TESTS=1 sends twenty times as many requests.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { writeEemepOutput } from "../../scripts/make-model-output.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createTokenIssuer, TOKEN_AUDIENCE, TOKEN_ISSUER } from "../../src/auth/tokens.ts";
import { writeUsers } from "../../src/auth/users.ts";
import { startWatchWorker, type WatchWorker } from "../../src/build/watchWorker.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { addRun, http, makeSite, PUBLIC_URL, type RawResponse, type Site } from "../server/serverFixtures.ts";
import { fuzzSeed, iterations } from "../stress.ts";

const SECRET = "pepper-for-fuzz-0123456789";
const TOKEN_KEY = Buffer.alloc(32, 9);
const ENV = { AUTH_HASH_SALT: SECRET, ASHCAST_TOKEN_KEY: TOKEN_KEY.toString("base64url") };
const BASE = "/volcanicashforecast/0.1";
const REFTIMES = ["2026-01-10T06:00:00Z", "2026-01-11T06:00:00Z"];
/** An older run with model output, for /point and /route answers other than 422. */
const MODEL_REFTIME = "2026-01-09T00:00:00Z";
const SEED = fuzzSeed();
const REQUESTS = iterations(400);

interface Operation {
  responses: Record<string, unknown>;
}
type OpenApi = { paths: Record<string, Record<string, Operation>> };

/** One generated request, and what the oracle needs to know about it. */
interface FuzzRequest {
  method: string;
  /** The path as sent, below the server's origin. */
  target: string;
  /** The document's path template it means (respellings keep it), or undefined for an unknown path. */
  template: string | undefined;
  /** Sent exactly as the document spells the path (no respelling). */
  exact: boolean;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Whether Authorization carries a valid token of a user with the operator role. */
  operator: boolean;
}

// ---- the oracle ---------------------------------------------------------------------------------

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const OPERATOR_PATHS = /^\/(datasets|jobs|upload|withdraw|config\/reset)(\/|$)/;

/** Stated independently of src/auth: the operator addresses, POST /config, and every unsafe method but sign-in and POST /route. */
function isProtected(template: string | undefined, method: string): boolean {
  if (template !== undefined && OPERATOR_PATHS.test(template)) return true;
  if (template === "/config" && !SAFE_METHODS.has(method)) return true;
  if (SAFE_METHODS.has(method)) return false;
  return !(method === "POST" && (template === "/token" || template === "/login" || template === "/route"));
}

function matchTemplate(doc: OpenApi, below: string): string | undefined {
  const templates = Object.keys(doc.paths);
  if (templates.includes(below)) return below;
  return templates.find((template) => template.includes("{") && new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`).test(below));
}

/**
 * The path a raw request path means, by RFC 3986 rules as security.md states them (stated here
 * independently of src/auth): the URL's own path, then up to three rounds of percent-decoding, empty and '.' segments dropped,
 * '..' resolved (at the root it stays there, as URL parsing does); undefined when it cannot be read (a stray '%',
 * a control character, a backslash).
 */
function canonicalPath(raw: string): string | undefined {
  // The server sees the request target as a WHATWG URL: dot segments (also %2e) resolved first, so `/a//../b` is `/a/b`.
  let path: string;
  try {
    path = new URL(`http://fuzz.invalid${raw}`).pathname;
  } catch {
    return undefined;
  }
  for (let round = 0; round < 3 && path.includes("%"); round++) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return undefined;
    }
  }
  if (/[%\\\u0000-\u001f\u007f]/.test(path) || /\p{Cs}/u.test(path)) return undefined;
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    // '..' at the root stays at the root: the server parses the request target as a WHATWG URL does.
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join("/")}`;
}

/** The document's path template a raw request path (below the origin) means, if any. */
function templateOf(doc: OpenApi, rawPath: string): string | undefined {
  const path = canonicalPath(rawPath);
  if (path === undefined) return undefined;
  const below = path === BASE ? "/" : path.startsWith(`${BASE}/`) ? path.slice(BASE.length) : undefined;
  if (below === undefined) return undefined;
  // A folder's own address is its index page where the document says so (`/viewer/` is `/viewer/{file}`'s index.html).
  return matchTemplate(doc, below) ?? matchTemplate(doc, `${below}/`) ?? matchTemplate(doc, `${below}/index.html`);
}

/** The statuses the document allows for this request. */
function allowedStatuses(doc: OpenApi, request: FuzzRequest): Set<number> {
  const auth = [400, 401, 403];
  if (request.template === undefined) {
    // Not a documented address: not found, refused as unreadable, or refused by the access rules.
    return new Set([...auth, 404, 405, 301, ...(request.method === "OPTIONS" ? [204] : [])]);
  }
  const item = doc.paths[request.template]!;
  const operation = item[request.method === "HEAD" ? "get" : request.method.toLowerCase()];
  const declared = operation ? Object.keys(operation.responses).map(Number) : [...auth, 405, ...(request.method === "OPTIONS" ? [204] : [])];
  // A respelt path may be redirected to its canonical form, found unreadable, or not routed at all.
  return new Set([...declared, ...(request.exact ? [] : [301, 400, 404, 405])]);
}

function describeRequest(request: FuzzRequest, res?: RawResponse): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}...` : value}`);
  const body = request.body === undefined ? "" : `\n  body (${request.body.length} bytes): ${String(request.body).slice(0, 120)}`;
  const answer = res ? `\n  -> ${res.status} ${res.body.toString("utf8").slice(0, 300)}` : "";
  return `${request.method} ${request.target} (template ${request.template ?? "none"}, ${request.exact ? "exact" : "respelt"})\n  ${headers.join("\n  ")}${body}${answer}\n  seed ${SEED}: rerun with ASHCAST_FUZZ_SEED=${SEED}`;
}

// ---- the generators -----------------------------------------------------------------------------

const encodeChar = (c: string, upper: boolean) => {
  const hex = c.charCodeAt(0).toString(16).padStart(2, "0");
  return `%${upper ? hex.toUpperCase() : hex}`;
};

/** Respellings that the access rules must read as the same path. */
const respelling = fc.record({
  kind: fc.constantFrom("double-slash", "trailing-slash", "dot", "dot-dot", "encode-char", "encode-slash", "double-encode"),
  at: fc.nat(),
  upper: fc.boolean(),
});

function respell(below: string, { kind, at, upper }: { kind: string; at: number; upper: boolean }): string {
  const slashes = [...below.matchAll(/\//g)].map((m) => m.index);
  const slash = slashes[at % slashes.length] ?? 0;
  const letters = [...below.matchAll(/[a-z.]/g)].map((m) => m.index);
  const letter = letters.length ? letters[at % letters.length]! : -1;
  switch (kind) {
    case "double-slash":
      return `${below.slice(0, slash)}/${below.slice(slash)}`;
    case "trailing-slash":
      return below.endsWith("/") ? below : `${below}/`;
    case "dot":
      return `${below.slice(0, slash)}/.${below.slice(slash)}`;
    case "dot-dot":
      return `${below.slice(0, slash)}/zz/..${below.slice(slash)}`;
    case "encode-char":
      return letter < 0 ? below : `${below.slice(0, letter)}${encodeChar(below[letter]!, upper)}${below.slice(letter + 1)}`;
    case "encode-slash":
      return slash === 0 ? below : `${below.slice(0, slash)}${upper ? "%2F" : "%2f"}${below.slice(slash + 1)}`;
    default:
      return letter < 0 ? below : `${below.slice(0, letter)}%25${encodeChar(below[letter]!, upper).slice(1)}${below.slice(letter + 1)}`;
  }
}

const unknownSuffix = fc.constantFrom("/x", ".bak", "~", "/..%2f..%2fetc%2fpasswd", "/%00", "%", "%zz", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "\\..\\x", "/é", "/%C3%A9", "/%ED%A0%80", "/*", "/.well-known/x");
const unknownPath = fc.oneof(
  fc.constantFrom("/", "/volcanicashforecast", "/volcanicashforecast/0.2/", "/volcanicashforecast/0.1.json", "/../volcanicashforecast/0.1/datasets", "//volcanicashforecast/0.1/datasets", "/%76olcanicashforecast/0.1/jobs"),
  fc.stringMatching(/^\/[A-Za-z0-9%._~\/-]{0,30}$/),
);

function requests(doc: OpenApi, context: { tokens: Record<string, string>; resourceNames: string[]; viewerFiles: string[] }): fc.Arbitrary<FuzzRequest> {
  const templates = Object.keys(doc.paths);
  // Values for the path parameters; the hostile ones (traversal, NUL) leave the template, so the oracle treats them as unknown paths.
  const ids = ["0", "job-1", "x".repeat(300), "00000000-0000-4000-8000-000000000000"];
  const files = [...context.viewerFiles, "index.html", "x.js"];
  const hostile = ["..", "%2e%2e", "..%2f..%2findex.json", "%00", "..%5c..%5cindex.json"];
  const concreteOf = (template: string, pick: number): { below: string; known: boolean } => {
    if (!template.includes("{")) return { below: template, known: true };
    const bad = pick % 4 === 0;
    const value = bad ? hostile[pick % hostile.length]! : template.includes("{id}") ? ids[pick % ids.length]! : files[pick % files.length]!;
    return { below: template.replace(/\{[^}]+\}/, value), known: !bad };
  };
  const concrete = (template: string, pick: number): string => concreteOf(template, pick).below;
  const known = (template: string, pick: number): string | undefined => (concreteOf(template, pick).known ? template : undefined);

  const target = fc.oneof(
    { weight: 5, arbitrary: fc.record({ template: fc.constantFrom(...templates), pick: fc.nat() }).map(({ template, pick }) => ({ below: concrete(template, pick), template: known(template, pick), exact: known(template, pick) !== undefined })) },
    {
      weight: 4,
      arbitrary: fc.record({ template: fc.constantFrom(...templates), pick: fc.nat(), spellings: fc.array(respelling, { minLength: 1, maxLength: 3 }) }).map(({ template, pick, spellings }) => ({
        below: spellings.reduce(respell, concrete(template, pick)),
        template: known(template, pick),
        exact: false,
      })),
    },
    { weight: 2, arbitrary: fc.record({ template: fc.constantFrom(...templates), suffix: unknownSuffix, pick: fc.nat() }).map(({ template, suffix, pick }) => ({ below: concrete(template, pick) + suffix, template: undefined, exact: false })) },
    { weight: 1, arbitrary: unknownPath.map((full) => ({ below: full, template: undefined, exact: false, outside: true })) },
  );

  const reftimeSpelling = fc.oneof(fc.constantFrom(...REFTIMES), fc.constantFrom(...REFTIMES).map((r) => r.replace("Z", "+00:00")), fc.constantFrom("2026-01-10T07:00:00+01:00", "2026-01-10 06:00Z", "20260110T060000Z", "2099-01-01T00:00:00Z", "garbage", "", "2026-02-30T00:00:00Z", "%", "2026-01-10T06:00:00 01:00"));
  const queryPair = fc.oneof(
    reftimeSpelling.map((v) => `reftime=${encodeURIComponent(v)}`),
    fc.constantFrom(...context.resourceNames, "../index.json", "%2e%2e%2findex.json", "", "x".repeat(500), "volcanoes.json").map((v) => `name=${encodeURIComponent(v)}`),
    fc.constantFrom("folder=2026-01-12-hekla", "folder=../x", "folder=", "reftime", "name", "=", "&&", "a=%zz", "reftime=%", "x=%00", "name=%C0%AF"),
    fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 12 })).map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
    // GET /point's parameters, good and bad.
    fc.tuple(fc.constantFrom("lat", "lon"), fc.oneof(fc.double({ min: -200, max: 200 }).map(String), fc.constantFrom("63.98", "-19.7", "", "1e3", "NaN", "Infinity", "90", "-180", "0x10", " 1"))).map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
    fc.constantFrom("time=2026-01-09T03:00:00Z", "time=garbage", "time=", "lat=63.98&lon=-19.7", `lat=63.98&lon=-19.7&reftime=${MODEL_REFTIME}`, `lat=63.98&lon=-19.7&reftime=${MODEL_REFTIME}&time=2026-01-09T03:00:00Z`, `reftime=${MODEL_REFTIME}`),
  );
  const query = fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 2, arbitrary: fc.array(queryPair, { minLength: 1, maxLength: 3 }).map((pairs) => `?${pairs.join("&")}`) });

  const authorization = fc.constantFrom<[string, string | undefined]>(
    ["none", undefined],
    ["operator", `Bearer ${context.tokens.operator}`],
    ["operator", `bearer ${context.tokens.operator}`],
    ["no-role", `Bearer ${context.tokens.noRole}`],
    ["expired", `Bearer ${context.tokens.expired}`],
    ["foreign", `Bearer ${context.tokens.foreign}`],
    ["unsigned", `Bearer ${context.tokens.unsigned}`],
    ["garbage", "Bearer not.a.token"],
    ["garbage", "Bearer"],
    ["garbage", `Bearer ${"A".repeat(5000)}`],
    ["garbage", "Basic YWxpY2U6Y29ycmVjdCBob3JzZQ=="],
    ["garbage", `Bearer ${context.tokens.operator}x`],
  );
  const headers = fc.record(
    {
      "user-agent": fc.constantFrom("fuzz/1.0 ops@example.org", "", "x"),
      accept: fc.constantFrom("*/*", "application/json", "image/png", "text/html", "application/problem+json", "application/xml", "image/*;q=0.1, application/json;q=0", "garbage;;;", ""),
      "accept-encoding": fc.constantFrom("gzip", "br", "gzip, br", "identity;q=0", "*", "deflate", "br;q=0, gzip;q=0, *;q=0", ""),
      "if-none-match": fc.constantFrom("*", '"x"', 'W/"x"', "garbage", '"", W/""'),
      "if-modified-since": fc.constantFrom("Thu, 01 Jan 2099 00:00:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "garbage"),
      range: fc.constantFrom("bytes=0-10", "bytes=-5", "bytes=100000000-", "bytes=5-1", "lines=1-2", "bytes=0-1,3-4"),
      "content-type": fc.constantFrom("application/geo+json", "application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "multipart/form-data", "application/zip", "text/plain", "application/json; charset=utf-16", "garbage"),
    },
    { requiredKeys: [] },
  );
  const method = fc.constantFrom("GET", "GET", "GET", "HEAD", "HEAD", "POST", "POST", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND");
  const body = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
    fc.constantFrom('{"kind":"cleanup"}', '{"kind":"rebuild","run":"no-such-run"}', '{"kind":"rebuild","run":"../x"}', '{"uploadMaxBytes":1}', '{"uploadMaxBytes":-1}', '{"__proto__":{"x":1}}', "username=alice&password=wrong", "username=alice&password=a&password=b&grant_type=client_credentials", "--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../run.json\"\r\n\r\n{}\r\n--xyz--\r\n", "PK\u0003\u0004garbage"),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
    // POST /route bodies: GeoJSON good and bad.
    fc
      .record({
        coordinates: fc.array(fc.array(fc.oneof(fc.double({ min: -400, max: 40_000 }), fc.constant("x" as unknown as number)), { minLength: 0, maxLength: 4 }), { maxLength: 6 }),
        times: fc.option(fc.array(fc.constantFrom("2026-01-09T01:00:00Z", "2026-01-09T03:00:00Z", "2026-01-10T08:00:00", "x"), { maxLength: 6 })),
        type: fc.constantFrom("Feature", "FeatureCollection", "LineString"),
      })
      .map(({ coordinates, times, type }) => JSON.stringify({ type, geometry: { type: "LineString", coordinates }, properties: times === null ? null : { coordTimes: times } })),
    fc.constant('{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-22,64,10668],[-10,60,10668]]},"properties":{"coordTimes":["2026-01-10T06:00:00Z","2026-01-10T07:00:00Z"]}}'),
  );

  return fc.record({ target, query, authorization, headers, method, body }).map(({ target: t, query: q, authorization: [kind, value], headers: h, method: m, body: b }) => {
    const sentHeaders: Record<string, string> = Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined && v !== ""));
    if (value !== undefined) sentHeaders.authorization = value;
    const outside = "outside" in t;
    const sentPath = `${outside ? "" : BASE}${t.below}`;
    // What the sent path means decides the oracle, whatever the generator meant it to be.
    const template = templateOf(doc, sentPath);
    return {
      method: m,
      target: `${sentPath}${q}`,
      template,
      exact: t.exact && template === t.template,
      headers: sentHeaders,
      ...(b === undefined || m === "GET" || m === "HEAD" ? {} : { body: b }),
      operator: kind === "operator",
    };
  });
}

// ---- the server ---------------------------------------------------------------------------------

describe("request fuzzer from /openapi.json", () => {
  let dir: string;
  let site: Site;
  let worker: WatchWorker;
  let server: RunningServer;
  let origin: string;
  let doc: OpenApi;
  const context = { tokens: {} as Record<string, string>, resourceNames: [] as string[], viewerFiles: [] as string[] };

  beforeAll(async () => {
    console.log(`[fuzz requests] seed ${SEED} (rerun with ASHCAST_FUZZ_SEED=${SEED}), ${REQUESTS} requests`);
    dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-fuzz-"));
    site = await makeSite("ashcast-fuzz-site-");
    await addRun(site, "2026-01-10-hekla", REFTIMES[0]!);
    await addRun(site, "2026-01-11-hekla", REFTIMES[1]!, "Rehearsal");
    const modelDir = path.join(site.runsDir, "2026-01-09-hekla-model");
    await mkdir(modelDir);
    await writeFile(path.join(modelDir, "run.json"), '{"type": "Exercise"}\n');
    await writeEemepOutput({ outDir: modelDir, reftime: MODEL_REFTIME, nx: 40, ny: 30, steps: 4, res: 1 });
    worker = startWatchWorker({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL }, () => {});
    await worker.firstBuild;
    const usersFile = path.join(dir, "users.json");
    await writeUsers(usersFile, { format: 1, users: { alice: { hash: await hashPassword("correct horse", { version: "1", secret: Buffer.from(SECRET) }), created: "2026-11-23T12:00:00Z", roles: ["operator"] } } });
    server = await startServer({
      distDir: site.distDir,
      port: 0,
      host: "127.0.0.1",
      usersFile,
      env: ENV,
      operator: { runsDir: site.runsDir, auditLogFile: path.join(dir, "audit.log"), settingsFile: path.join(dir, "settings.json"), jobs: worker },
    });
    origin = new URL(server.url).origin;

    const token = await http(server, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
    expect(token.status).toBe(200);
    context.tokens.operator = (token.json() as { access_token: string }).access_token;
    const issuer = (key: Uint8Array, now?: () => number) => createTokenIssuer({ key, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, lifetimeSeconds: 600, ...(now ? { now } : {}) });
    context.tokens.noRole = (await issuer(TOKEN_KEY).issue("bob", [])).access_token;
    context.tokens.expired = (await issuer(TOKEN_KEY, () => Date.now() - 3 * 3600_000).issue("alice", ["operator"])).access_token;
    context.tokens.foreign = (await issuer(Buffer.alloc(32, 1)).issue("alice", ["operator"])).access_token;
    const [, payload] = context.tokens.operator.split(".");
    context.tokens.unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt" })).toString("base64url")}.${payload}.`;

    const openapi = await http(server, "/openapi.json", { headers: { "user-agent": "fuzz/1.0" } });
    expect(openapi.status).toBe(200);
    doc = openapi.json() as OpenApi;
    const names = await http(server, "/resources", { headers: { "user-agent": "fuzz/1.0" } });
    context.resourceNames = (names.json() as string[]).slice(0, 200);
    const viewer = await http(server, "/viewer/", { headers: { "user-agent": "fuzz/1.0" } });
    context.viewerFiles = [...new Set([...viewer.text().matchAll(/(?:src|href)="(?:\.\/)?([A-Za-z0-9._-]+)"/g)].map((m) => m[1]!))];
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await worker?.close();
    await site?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the document lists the addresses the fuzzer starts from", () => {
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/", "/reftimes", "/resources", "/point", "/route", "/datasets", "/jobs", "/jobs/{id}", "/upload", "/withdraw", "/token"]));
    expect(context.resourceNames.length).toBeGreaterThan(0);
  });

  it("a resource name finds a body only when it is listed, exactly as listed (every respelling of every listed name, then a property)", { timeout: 120_000 }, async () => {
    const listed = new Set(context.resourceNames);
    const get = (value: string) => http(server, `/resources?name=${encodeURIComponent(value)}`, { headers: { "user-agent": "fuzz/1.0" } });
    const check = (value: string, status: number) => {
      const where = `name ${JSON.stringify(value)} -> ${status} (seed ${SEED}: rerun with ASHCAST_FUZZ_SEED=${SEED})`;
      expect([200, 400, 404], where).toContain(status);
      if (status === 200) expect(listed.has(value), where).toBe(true);
    };
    const prefixes = ["../", "./", "/", "%2e%2e/", "..\\", "x/../", "current/", "releases/../"];
    const suffixes = ["\u0000", "/", "/.", ".bak", "%00", " ", "/../volcanoes.json"];
    const respellings = (name: string) => [...prefixes.map((p) => p + name), ...suffixes.map((x) => name + x), name.toUpperCase(), name.replace(/\//g, "\\"), name.replace(/\//g, "//")];
    for (const name of context.resourceNames) {
      expect((await get(name)).status, name).toBe(200);
      for (const value of respellings(name)) check(value, (await get(value)).status);
    }
    const anyName = fc.oneof(
      fc.tuple(fc.constantFrom(...context.resourceNames), fc.nat()).map(([name, i]) => respellings(name)[i % respellings(name).length]!),
      fc.constantFrom("index.json", "../index.json", "../../index.json", "/etc/passwd", "current/index.json", "report.json", "..", ".", ""),
      fc.string({ maxLength: 30 }),
    );
    await fc.assert(
      fc.asyncProperty(anyName, async (value) => check(value, (await get(value)).status)),
      { seed: SEED, numRuns: iterations(150) },
    );
  });

  it(`${REQUESTS} seeded random requests: no 5xx, only documented statuses, no protected success without an operator token`, { timeout: 600_000 }, async () => {
    const counts = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requests(doc, context), async (request) => {
        const res = await http(origin, request.target, { method: request.method, headers: request.headers, ...(request.body === undefined ? {} : { body: request.body }) });
        counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
        const where = describeRequest(request, res);
        expect(res.status, where).toBeLessThan(500);
        expect([...allowedStatuses(doc, request)], `undocumented status ${res.status}\n${where}`).toContain(res.status);
        const protectedRequest = request.template === undefined ? !SAFE_METHODS.has(request.method) : isProtected(request.template, request.method);
        if (protectedRequest && !request.operator) {
          expect([400, 401, 403, 404, 405], `a protected request without an operator token got ${res.status}\n${where}`).toContain(res.status);
          if (request.template !== undefined) expect([400, 401, 403], where).toContain(res.status);
        }
        if (res.status === 401) expect(String(res.headers["www-authenticate"]), where).toMatch(/^Bearer /);
      }),
      { seed: SEED, numRuns: REQUESTS, endOnFailure: true },
    );
    console.log(`[fuzz requests] statuses: ${[...counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ")}`);
  });
});
