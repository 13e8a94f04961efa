/**
 * How every route group answers with an artefact: the representation chosen by the request's encoding
 * and validators (shared with the fast path, so both send the same headers), and the small answers
 * (204 with nothing published, a 301 to the address with its slash) the groups have in common.
 */
import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import type { Artefact, ListArtefact } from "../../contract/releaseIndex.ts";
import { problemResponse } from "../problem.ts";
import { conditionsOutcome, formatHttpDate, PRECONDITION_FAILED_DETAIL } from "../http.ts";
import { parseInstant } from "../../time/instant.ts";
import { cacheControl, REDIRECT_HEADERS, type CachePolicies, type CachePolicy } from "../cachePolicy.ts";
import { CORS_HEADERS, TAG_HEADERS, type Representations } from "../representation.ts";
import type { ReleaseView } from "../app.ts";

export type Handler = (c: Context) => Response | Promise<Response>;

/** A static document made once at start (not in a release): its body and the artefact that describes it. */
export interface Document {
  artefact: Artefact;
  body: Buffer;
}

export interface Responder {
  /** The memoised cache policies (lifetimes, tags, Vary) answers are sent with. */
  readonly policies: CachePolicies;
  /** One artefact: encoding by Accept-Encoding, 304 by the validators, headers a CDN can use. */
  send(c: Context, artefact: Artefact, modified: string, policy: CachePolicy, body?: Buffer): Promise<Response>;
  /** A list or shared resource of the release (its own Last-Modified). */
  sendList(c: Context, artefact: ListArtefact, policy: CachePolicy): Promise<Response>;
  /** A small JSON answer made per request, cached and tagged as `policy` says, with its validators compared. */
  json(c: Context, body: unknown, policy: CachePolicy, validators: { etag: string; modified: string }): Response;
  /** Nothing is published yet. */
  noContent(): Response;
}

export function createResponder(source: ReleaseView, representations: Representations): Responder {
  async function send(c: Context, artefact: Artefact, modified: string, policy: CachePolicy, fixedBody?: Buffer): Promise<Response> {
    const chosen = representations.choose(artefact, modified, policy, {
      acceptEncoding: c.req.header("accept-encoding"),
      ifNoneMatch: c.req.header("if-none-match"),
      ifModifiedSince: c.req.header("if-modified-since"),
      ifMatch: c.req.header("if-match"),
      ifUnmodifiedSince: c.req.header("if-unmodified-since"),
    });
    if (chosen.status === 412) return problemResponse(412, "the representation does not match If-Match or was modified after If-Unmodified-Since: fetch it again without them");
    const headers = new Headers();
    for (let i = 0; i < chosen.headers.length; i += 2) headers.set(chosen.headers[i]!, chosen.headers[i + 1]!);
    if (chosen.status === 304) return new Response(null, { status: 304, headers });
    const body = fixedBody ?? (await source.body(chosen.stored));
    return new Response(body, { status: 200, headers });
  }
  const { policies } = representations;
  const headersOf = (policy: CachePolicy) => ({
    "cache-control": cacheControl(policy),
    expires: representations.expiresIn(policy.seconds),
    ...Object.fromEntries(TAG_HEADERS.map((name) => [name, policy.tags])),
    ...CORS_HEADERS,
  });
  return {
    policies,
    send,
    sendList: (c, artefact, policy) => send(c, artefact, artefact.modified, policy),
    json: (c, body, policy, { etag, modified }) => {
      const modifiedMs = parseInstant(modified)!;
      const conditions = { ifMatch: c.req.header("if-match"), ifUnmodifiedSince: c.req.header("if-unmodified-since"), ifNoneMatch: c.req.header("if-none-match"), ifModifiedSince: c.req.header("if-modified-since") };
      const outcome = conditionsOutcome(conditions, etag, modifiedMs);
      if (outcome === "failed") return problemResponse(412, PRECONDITION_FAILED_DETAIL);
      const headers = { etag, "last-modified": formatHttpDate(modifiedMs), ...headersOf(policy) };
      if (outcome === "not modified") return new Response(null, { status: 304, headers });
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json;charset=UTF-8", ...headers } });
    },
    noContent: () => new Response(null, { status: 204, headers: headersOf(policies.nothingPublished) }),
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
export const withSlash = (path: string): Handler => (c) => new Response(null, { status: 301, headers: { location: `${path}/${new URL(c.req.url).search}`, ...REDIRECT_HEADERS, ...CORS_HEADERS } });

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
