/**
 * How every route group answers with an artefact: the representation chosen by the request's encoding
 * and validators (shared with the fast path, so both send the same headers), and the small answers
 * (204 with nothing published, a 301 to the address with its slash) the groups have in common.
 */
import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import type { Artefact, ListArtefact } from "../../contract/releaseIndex.ts";
import { problemResponse } from "../problem.ts";
import { CORS_HEADERS, type Representations } from "../representation.ts";
import { CACHE_SECONDS } from "../select.ts";
import type { ReleaseView } from "../app.ts";

export type Handler = (c: Context) => Response | Promise<Response>;

/** A static document made once at start (not in a release): its body and the artefact that describes it. */
export interface Document {
  artefact: Artefact;
  body: Buffer;
}

export interface Responder {
  /** One artefact: encoding by Accept-Encoding, 304 by the validators, headers a CDN can use. */
  send(c: Context, artefact: Artefact, modified: string, cacheSeconds: number, how?: { varyAccept?: boolean; body?: Buffer }): Promise<Response>;
  /** A list or shared resource of the release (its own Last-Modified). */
  sendList(c: Context, artefact: ListArtefact, cacheSeconds?: number): Promise<Response>;
  /** Nothing is published yet. */
  noContent(): Response;
}

export function createResponder(source: ReleaseView, representations: Representations): Responder {
  async function send(c: Context, artefact: Artefact, modified: string, cacheSeconds: number, how: { varyAccept?: boolean; body?: Buffer } = {}): Promise<Response> {
    const chosen = representations.choose(artefact, modified, cacheSeconds, how.varyAccept ?? false, {
      acceptEncoding: c.req.header("accept-encoding"),
      ifNoneMatch: c.req.header("if-none-match"),
      ifModifiedSince: c.req.header("if-modified-since"),
    });
    const headers = new Headers();
    for (let i = 0; i < chosen.headers.length; i += 2) headers.set(chosen.headers[i]!, chosen.headers[i + 1]!);
    if (chosen.status === 304) return new Response(null, { status: 304, headers });
    const body = how.body ?? (await source.body(chosen.stored));
    return new Response(body, { status: 200, headers });
  }
  return {
    send,
    sendList: (c, artefact, cacheSeconds = CACHE_SECONDS.lists) => send(c, artefact, artefact.modified, cacheSeconds),
    noContent: () =>
      new Response(null, { status: 204, headers: { "cache-control": `public, max-age=${CACHE_SECONDS.latest}`, expires: representations.expiresIn(CACHE_SECONDS.latest), ...CORS_HEADERS } }),
  };
}

/** A document held in memory, described as an artefact (strong ETag from its hash). */
export function documentArtefact(body: Buffer, contentType: string): Document {
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

/** 301 to `path` with a trailing slash, query kept. */
export const withSlash = (path: string): Handler => (c) => new Response(null, { status: 301, headers: { location: `${path}/${new URL(c.req.url).search}`, ...CORS_HEADERS } });

export const READ_ALLOW = "GET, HEAD, OPTIONS";
export const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  "access-control-allow-methods": "GET, HEAD",
  "access-control-allow-headers": "Accept, Accept-Encoding, If-None-Match, If-Modified-Since, User-Agent",
  "access-control-max-age": "86400",
} as const;

/**
 * Read-only addresses: GET (and HEAD), a CORS preflight for browsers, 405 naming what is allowed for the rest.
 * `allow` is what the 405 and OPTIONS name: more than GET where the group adds other methods itself first.
 */
export function readOnlyRoutes(routes: ReadonlyArray<readonly [path: string, handler: Handler]>, allow: (path: string) => string = () => READ_ALLOW, group = new Hono()): Hono {
  for (const [path, handler] of routes) {
    const allowed = allow(path);
    group.get(path, handler);
    group.options(path, () => new Response(null, { status: 204, headers: { allow: allowed, ...PREFLIGHT_HEADERS } }));
    group.all(path, () => problemResponse(405, `only ${allowed} are allowed here`, { allow: allowed }));
  }
  return group;
}
