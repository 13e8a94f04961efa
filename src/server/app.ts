/**
 * The Hono application: every endpoint of the specification, answered from the published release.
 * At request time it only selects (reftime, encoding, representation) and checks validators; bodies,
 * ETags and dates were all made at build time and are held in memory.
 */
import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import type { Artefact, StoredBody } from "../contract/releaseIndex.ts";
import { formatInstant, normaliseInstant, parseInstant, INSTANT_FORM } from "../time/instant.ts";
import { chooseEncoding, formatHttpDate, noneMatchHits, notModifiedSince, prefersPng } from "./http.ts";
import { problemResponse } from "./problem.ts";
import { healthText } from "./health.ts";
import type { ServedRelease } from "./releaseSource.ts";

export const PRODUCT_PATH = "/volcanicashforecast/0.1";
const ALLOW = "GET, HEAD";

/** What the app needs of a release source (ReleaseSource, or a fixed release in tests). */
export interface ReleaseView {
  readonly current: ServedRelease | undefined;
  readonly loadError: string | undefined;
  body(stored: StoredBody): Buffer | Promise<Buffer>;
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
  async function send(c: Context, artefact: Artefact, cacheSeconds: number, how: { varyAccept?: boolean; body?: Buffer } = {}): Promise<Response> {
    const encoding = chooseEncoding(c.req.header("accept-encoding"), { br: artefact.br !== undefined, gzip: artefact.gzip !== undefined });
    const stored = encoding === "br" ? artefact.br! : encoding === "gzip" ? artefact.gzip! : artefact.identity;
    const nowMs = now();
    const headers: Record<string, string> = {
      etag: stored.etag,
      "last-modified": formatHttpDate(parseInstant(artefact.modified)!),
      "cache-control": `public, max-age=${cacheSeconds}`,
      expires: formatHttpDate(nowMs + cacheSeconds * 1000),
      vary: how.varyAccept ? "Accept, Accept-Encoding" : "Accept-Encoding",
      "access-control-allow-origin": "*",
    };
    const ifNoneMatch = c.req.header("if-none-match");
    const ifModifiedSince = c.req.header("if-modified-since");
    if (ifNoneMatch !== undefined ? noneMatchHits(ifNoneMatch, stored.etag) : ifModifiedSince !== undefined && notModifiedSince(ifModifiedSince, parseInstant(artefact.modified)!)) {
      return new Response(null, { status: 304, headers });
    }
    headers["content-type"] = artefact.contentType;
    headers["content-length"] = String(stored.size);
    if (encoding !== "identity") headers["content-encoding"] = encoding;
    const body = how.body ?? (await source.body(stored));
    return new Response(body, { status: 200, headers });
  }

  /** The run a request selects: `reftime` (any ISO 8601 spelling) or the latest. */
  function selectRun(c: Context, release: ServedRelease): { reftime: string } | Response {
    const values = c.req.queries("reftime");
    if (!values) return { reftime: release.latest! };
    if (values.length > 1) return problemResponse(400, "give the reftime parameter once");
    // A `+` of a zone offset arrives as a space when the client did not percent-encode it.
    const text = values[0]!.replace(/ (\d{2}:?\d{2})$/, "+$1");
    const reftime = normaliseInstant(text);
    if (!reftime) return problemResponse(400, `reftime "${values[0]}" is not a date-time: expected ${INSTANT_FORM}`);
    if (!Object.hasOwn(release.index.runs, reftime)) return problemResponse(404, `no run is published for reftime ${reftime}; ${base}/reftimes lists those that are`);
    return { reftime };
  }

  async function model(c: Context, format: "json" | "png" | "negotiate"): Promise<Response> {
    const release = source.current;
    if (!release?.latest) return noContent();
    const selected = selectRun(c, release);
    if (selected instanceof Response) return selected;
    const run = release.index.runs[selected.reftime]!;
    const cacheSeconds = c.req.queries("reftime") ? CACHE_SECONDS.pinned : CACHE_SECONDS.latest;
    const png = format === "png" || (format === "negotiate" && prefersPng(c.req.header("accept")) && run.png !== undefined);
    if (png && !run.png) return problemResponse(404, `the run ${selected.reftime} has no PNG map yet; its JSON form is ${base}/.json?reftime=${selected.reftime}`);
    const key = png ? run.png! : run.json;
    return send(c, release.index.artefacts[key]!, cacheSeconds, { varyAccept: format === "negotiate" });
  }

  const noContent = () => new Response(null, { status: 204, headers: { "cache-control": `public, max-age=${CACHE_SECONDS.latest}` } });

  const routes: Array<[string, (c: Context) => Response | Promise<Response>]> = [
    [`${base}`, (c) => model(c, "negotiate")],
    [`${base}/`, (c) => model(c, "negotiate")],
    [`${base}/.json`, (c) => model(c, "json")],
    [`${base}/.png`, (c) => model(c, "png")],
    [`${base}/reftimes`, (c) => {
      const release = source.current;
      return release ? send(c, release.index.artefacts[release.index.lists.reftimes]!, CACHE_SECONDS.lists) : noContent();
    }],
    [`${base}/changelog`, (c) => {
      const release = source.current;
      return release ? send(c, release.index.artefacts[release.index.lists.changelog]!, CACHE_SECONDS.lists) : noContent();
    }],
    [`${base}/resources`, (c) => {
      const release = source.current;
      if (!release) return noContent();
      const names = c.req.queries("name");
      if (!names) {
        return new Response(JSON.stringify(Object.keys(release.index.resources)), {
          headers: { "content-type": "application/json;charset=UTF-8", "cache-control": `public, max-age=${CACHE_SECONDS.lists}`, "access-control-allow-origin": "*" },
        });
      }
      if (names.length > 1) return problemResponse(400, "give the name parameter once");
      const name = names[0]!;
      // An allowlist lookup in the build index: never a path join, so `../`, NUL or an absolute path cannot reach a file.
      if (!Object.hasOwn(release.index.resources, name)) return problemResponse(404, `no resource is named "${name.slice(0, 200)}"; ${base}/resources lists the names`);
      return send(c, release.index.artefacts[release.index.resources[name]!]!, CACHE_SECONDS.resources);
    }],
    [`${base}/healthz`, () => {
      const health = healthText(source, now());
      return new Response(health.text, { status: health.status, headers: { "content-type": "text/plain;charset=UTF-8", "cache-control": "no-store" } });
    }],
    [`${base}/doc/TermsOfService`, (c) => sendDocument(c, termsOfService)],
    [`${base}/openapi.json`, (c) => sendDocument(c, openapi)],
  ];

  const termsOfService = documentArtefact(options.termsOfService, "text/html;charset=UTF-8", now());
  const openapi = documentArtefact(options.openapi, "application/json;charset=UTF-8", now());
  // Documents are not in a release (never compressed: they are small and rarely asked for).
  const sendDocument = (c: Context, document: { artefact: Artefact; body: Buffer }) => send(c, document.artefact, CACHE_SECONDS.documents, { body: document.body });

  for (const [path, handler] of routes) {
    app.get(path, handler);
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

function documentArtefact(body: Buffer, contentType: string, nowMs: number): { artefact: Artefact; body: Buffer } {
  const digest = createHash("sha256").update(body).digest();
  return {
    body,
    artefact: {
      contentType,
      sha256: digest.toString("hex"),
      modified: formatInstant(nowMs),
      identity: { file: `memory:${digest.toString("hex")}`, size: body.length, etag: `"${digest.toString("base64url").slice(0, 27)}"` },
    },
  };
}
