/**
 * The Hono application: every endpoint of the specification, answered from the published release.
 * At request time it only selects (reftime, encoding, representation) and checks validators; bodies,
 * ETags and dates were all made at build time and are held in memory.
 */
import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import { reftimeOfResource, type Artefact, type ListArtefact, type PublishedRun, type RunArtefacts, type StoredBody } from "../contract/releaseIndex.ts";
import { formatInstant, normaliseInstant, parseInstant, INSTANT_FORM } from "../time/instant.ts";
import { chooseEncoding, formatHttpDate, noneMatchHits, notModifiedSince, prefersPng } from "./http.ts";
import { problemResponse } from "./problem.ts";
import { healthText } from "./health.ts";
import type { ServedRelease } from "./releaseSource.ts";

export const PRODUCT_PATH = "/volcanicashforecast/0.1";
const ALLOW = "GET, HEAD, OPTIONS";
/** Browsers may read every answer (open data), and the validators a cache-aware viewer needs. */
export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "ETag, Retry-After, RateLimit, RateLimit-Policy",
} as const;
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  "access-control-allow-methods": "GET, HEAD",
  "access-control-allow-headers": "Accept, Accept-Encoding, If-None-Match, If-Modified-Since, User-Agent",
  "access-control-max-age": "86400",
} as const;

/** What the app needs of a release source (ReleaseSource, or a fixed release in tests). */
export interface ReleaseView {
  readonly current: ServedRelease | undefined;
  readonly loadError: string | undefined;
  body(stored: StoredBody): Buffer | Promise<Buffer>;
  runArtefacts(run: PublishedRun): RunArtefacts | Promise<RunArtefacts>;
}

export interface AppOptions {
  source: ReleaseView;
  /** Put in front of the product path, e.g. `/weatherapi`; empty by default. */
  prefix?: string;
  /** Earlier product versions that were removed: their addresses answer 404. */
  removedVersions?: readonly string[];
  /** Static documents made once at start: the terms of service page and the OpenAPI document. */
  termsOfService: Buffer;
  openapi: Buffer;
  now?: () => number;
}

/** Seconds a response may be reused by a client or a CDN, per kind of resource. */
export const CACHE_SECONDS = { latest: 60, pinned: 300, lists: 60, resources: 300, documents: 3600 } as const;

export function createApp(options: AppOptions): Hono {
  const prefix = (options.prefix ?? "").replace(/\/+$/, "");
  if (prefix && !/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix)) throw new Error(`createApp: prefix "${prefix}" must look like /weatherapi`);
  for (const version of options.removedVersions ?? []) {
    if (!/^\d+(\.\d+)*$/.test(version) || version === "0.1") throw new Error(`createApp: removed version "${version}" must be a version number other than 0.1`);
  }
  const base = `${prefix}${PRODUCT_PATH}`;
  const now = options.now ?? Date.now;
  const { source } = options;
  const app = new Hono();

  /** Sends one artefact: encoding by Accept-Encoding, 304 by the validators, headers a CDN can use. */
  async function send(c: Context, artefact: Artefact, modified: string, cacheSeconds: number, how: { varyAccept?: boolean; body?: Buffer } = {}): Promise<Response> {
    const encoding = chooseEncoding(c.req.header("accept-encoding"), { br: artefact.br !== undefined, gzip: artefact.gzip !== undefined });
    const stored = encoding === "br" ? artefact.br! : encoding === "gzip" ? artefact.gzip! : artefact.identity;
    const nowMs = now();
    const headers: Record<string, string> = {
      etag: stored.etag,
      "last-modified": formatHttpDate(parseInstant(modified)!),
      "cache-control": `public, max-age=${cacheSeconds}`,
      expires: formatHttpDate(nowMs + cacheSeconds * 1000),
      vary: how.varyAccept ? "Accept, Accept-Encoding" : "Accept-Encoding",
      ...CORS_HEADERS,
    };
    const ifNoneMatch = c.req.header("if-none-match");
    const ifModifiedSince = c.req.header("if-modified-since");
    if (ifNoneMatch !== undefined ? noneMatchHits(ifNoneMatch, stored.etag) : ifModifiedSince !== undefined && notModifiedSince(ifModifiedSince, parseInstant(modified)!)) {
      return new Response(null, { status: 304, headers });
    }
    headers["content-type"] = artefact.contentType;
    headers["content-length"] = String(stored.size);
    if (encoding !== "identity") headers["content-encoding"] = encoding;
    const body = how.body ?? (await source.body(stored));
    return new Response(body, { status: 200, headers });
  }

  /** The normalised `reftime` parameter, undefined when absent, or the 400 answer for a malformed one. */
  function reftimeParameter(c: Context): string | undefined | Response {
    const values = c.req.queries("reftime");
    if (!values) return undefined;
    if (values.length > 1) return problemResponse(400, "give the reftime parameter once");
    // A `+` of a zone offset arrives as a space when the client did not percent-encode it.
    const reftime = normaliseInstant(values[0]!.replace(/ (\d{2}:?\d{2})$/, "+$1"));
    return reftime ?? problemResponse(400, `reftime "${values[0]!.slice(0, 100)}" is not a date-time: expected ${INSTANT_FORM}`);
  }

  const checkReftimeSyntax = (c: Context): Response | undefined => {
    const parameter = reftimeParameter(c);
    return parameter instanceof Response ? parameter : undefined;
  };

  /** The run a request selects: `reftime` (any ISO 8601 spelling) or the latest. */
  function selectRun(c: Context, release: ServedRelease): { reftime: string } | Response {
    const reftime = reftimeParameter(c);
    if (reftime instanceof Response) return reftime;
    if (reftime === undefined) return { reftime: release.latest! };
    if (!Object.hasOwn(release.index.runs, reftime)) return problemResponse(404, `no run is published for reftime ${reftime}; ${base}/reftimes lists those that are`);
    return { reftime };
  }

  async function model(c: Context, format: "json" | "png" | "negotiate"): Promise<Response> {
    const release = source.current;
    // A malformed request is answered as such, published runs or not.
    const malformed = checkReftimeSyntax(c);
    if (malformed) return malformed;
    if (!release?.latest) return noContent();
    const selected = selectRun(c, release);
    if (selected instanceof Response) return selected;
    const run = release.index.runs[selected.reftime]!;
    const cacheSeconds = c.req.queries("reftime") ? CACHE_SECONDS.pinned : CACHE_SECONDS.latest;
    const png = format === "png" || (format === "negotiate" && prefersPng(c.req.header("accept")) && run.png !== undefined);
    if (png && !run.png) return problemResponse(404, `the run ${selected.reftime} has no PNG map yet; its JSON form is ${base}/.json?reftime=${selected.reftime}`);
    const list = await source.runArtefacts(run);
    return send(c, list.artefacts[png ? run.png! : run.json]!, run.modified, cacheSeconds, { varyAccept: format === "negotiate" });
  }

  const noContent = () =>
    new Response(null, { status: 204, headers: { "cache-control": `public, max-age=${CACHE_SECONDS.latest}`, expires: formatHttpDate(now() + CACHE_SECONDS.latest * 1000), ...CORS_HEADERS } });

  const routes: Array<[string, (c: Context) => Response | Promise<Response>]> = [
    // Without the slash, the relative timestep urls (`./resources?...`) would resolve one level up.
    [`${base}`, (c) => new Response(null, { status: 301, headers: { location: `${base}/${new URL(c.req.url).search}`, ...CORS_HEADERS } })],
    [`${base}/`, (c) => model(c, "negotiate")],
    [`${base}/.json`, (c) => model(c, "json")],
    [`${base}/.png`, (c) => model(c, "png")],
    [`${base}/reftimes`, (c) => {
      const release = source.current;
      return release ? sendList(c, release.index.artefacts[release.index.lists.reftimes]!) : noContent();
    }],
    [`${base}/changelog`, (c) => {
      const release = source.current;
      return release ? sendList(c, release.index.artefacts[release.index.lists.changelog]!) : noContent();
    }],
    [`${base}/resources`, async (c) => {
      const release = source.current;
      if (!release) return noContent();
      const names = c.req.queries("name");
      if (!names) {
        // The shared resources, and those of one run (the latest, or ?reftime=): never all runs at once.
        const selected = selectRun(c, release);
        const run = release.latest && !(selected instanceof Response) ? release.index.runs[selected.reftime] : undefined;
        if (selected instanceof Response && release.latest) return selected;
        const runNames = run ? Object.keys((await source.runArtefacts(run)).resources) : [];
        return new Response(JSON.stringify([...Object.keys(release.index.resources), ...runNames]), {
          headers: { "content-type": "application/json;charset=UTF-8", "cache-control": `public, max-age=${CACHE_SECONDS.lists}`, ...CORS_HEADERS },
        });
      }
      if (names.length > 1) return problemResponse(400, "give the name parameter once");
      const name = names[0]!;
      const missing = () => problemResponse(404, `no resource is named "${name.slice(0, 200)}"; ${base}/resources lists the names`);
      // Allowlist lookups in the published lists: never a path join, so `../`, NUL or an absolute path cannot reach a file.
      if (Object.hasOwn(release.index.resources, name)) return sendList(c, release.index.artefacts[release.index.resources[name]!]!, CACHE_SECONDS.resources);
      const reftime = reftimeOfResource(name);
      const run = reftime !== undefined && Object.hasOwn(release.index.runs, reftime) ? release.index.runs[reftime]! : undefined;
      if (!run) return missing();
      const list = await source.runArtefacts(run);
      if (!Object.hasOwn(list.resources, name)) return missing();
      return send(c, list.artefacts[list.resources[name]!]!, run.modified, CACHE_SECONDS.resources);
    }],
    [`${base}/healthz`, () => {
      const health = healthText(source, now());
      return new Response(health.text, { status: health.status, headers: { "content-type": "text/plain;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
    }],
    [`${base}/doc/TermsOfService`, (c) => sendDocument(c, termsOfService)],
    [`${base}/openapi.json`, (c) => sendDocument(c, openapi)],
  ];

  const startedAt = formatInstant(now());
  const termsOfService = documentArtefact(options.termsOfService, "text/html;charset=UTF-8");
  const openapi = documentArtefact(options.openapi, "application/json;charset=UTF-8");
  // Documents are not in a release (never compressed: they are small and rarely asked for).
  const sendDocument = (c: Context, document: { artefact: Artefact; body: Buffer }) => send(c, document.artefact, startedAt, CACHE_SECONDS.documents, { body: document.body });
  const sendList = (c: Context, artefact: ListArtefact, cacheSeconds: number = CACHE_SECONDS.lists) => send(c, artefact, artefact.modified, cacheSeconds);

  for (const [path, handler] of routes) {
    app.get(path, handler);
    app.options(path, () => new Response(null, { status: 204, headers: { allow: ALLOW, ...PREFLIGHT_HEADERS } }));
    app.all(path, () => problemResponse(405, `only ${ALLOW} are allowed here`, { allow: ALLOW }));
  }
  for (const version of options.removedVersions ?? []) {
    const removed = `${prefix}/volcanicashforecast/${version}`;
    const gone = () => problemResponse(404, `version ${version} of this product was removed; use ${base}`);
    app.all(removed, gone);
    app.all(`${removed}/*`, gone);
  }
  app.notFound((c) => problemResponse(404, `nothing is served at ${c.req.path.slice(0, 200)}; the product lives under ${base}`));
  app.onError((error) => {
    console.error(`Internal error while answering a request: ${error.stack ?? error.message}`);
    return problemResponse(500, "internal error; it has been logged");
  });
  return app;
}

function documentArtefact(body: Buffer, contentType: string): { artefact: Artefact; body: Buffer } {
  const digest = createHash("sha256").update(body).digest();
  return {
    body,
    artefact: {
      contentType,
      sha256: digest.toString("hex"),
      identity: { file: `memory:${digest.toString("hex")}`, size: body.length, etag: `"${digest.toString("base64url").slice(0, 27)}"` },
    },
  };
}
