/**
 * Which stored body answers a request for an artefact (encoding by Accept-Encoding, 304 by the
 * validators), and its response headers. Headers are prepared once per stored body and reused; at
 * request time only Expires is filled in, memoised per second. The Hono routes and the node fast path
 * both answer through this, so they send the same bytes.
 */
import type { Artefact, StoredBody } from "../contract/releaseIndex.ts";
import { parseInstant } from "../time/instant.ts";
import { cacheControl, CachePolicies, type CachePolicy } from "./cachePolicy.ts";
import { chooseEncoding, formatHttpDate, noneMatchHits, notModifiedSince, preconditionFails, type Encoding } from "./http.ts";

/** Browsers may read every answer (open data), and the validators a cache-aware viewer needs. */
export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "ETag, Retry-After, RateLimit, RateLimit-Policy",
} as const;

/** The request headers that decide the representation. */
export interface RepresentationRequest {
  acceptEncoding: string | undefined;
  ifNoneMatch: string | undefined;
  ifModifiedSince: string | undefined;
  /** Rare on GET: the fast path leaves requests with them to the app. */
  ifMatch?: string | undefined;
  ifUnmodifiedSince?: string | undefined;
}

export interface Representation {
  /** 412: If-Match or If-Unmodified-Since failed; the caller answers with a problem (no headers here). */
  status: 200 | 304 | 412;
  stored: StoredBody;
  /** `[name, value, name, value, ...]` for `writeHead`: shared between requests, so use it before the next one. */
  headers: string[];
}

interface Prepared {
  modified: string;
  ok: string[];
  notModified: string[];
  modifiedMs: number;
}

/** Index of the Expires value in every prepared header list (after etag, last-modified, cache-control). */
const EXPIRES_AT = 7;
/** Distinct Accept-Encoding values remembered; real clients send a handful. */
const MAX_REMEMBERED_ACCEPT_ENCODINGS = 256;

export class Representations {
  /** The cache policies answers are prepared for, shared by the fast path and the app. */
  readonly policies = new CachePolicies();
  /** Per stored body, per cache policy (memoised objects, so a lookup allocates nothing). */
  readonly #prepared = new WeakMap<StoredBody, WeakMap<CachePolicy, Prepared>>();
  /** Per Accept-Encoding value, the encoding chosen when both, only brotli or only gzip are stored. */
  readonly #acceptedEncodings = new Map<string, { both: Encoding; br: Encoding; gzip: Encoding }>();
  readonly #expires = new Map<number, string>();
  #expiresSecond = Number.NaN;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  choose(artefact: Artefact, modified: string, policy: CachePolicy, request: RepresentationRequest): Representation {
    const encoding = this.#encoding(request.acceptEncoding, artefact);
    const stored = encoding === "br" ? artefact.br! : encoding === "gzip" ? artefact.gzip! : artefact.identity;
    const prepared = this.#prepare(artefact, stored, encoding, modified, policy);
    if ((request.ifMatch !== undefined || request.ifUnmodifiedSince !== undefined) && preconditionFails(request.ifMatch, request.ifUnmodifiedSince, stored.etag, prepared.modifiedMs)) {
      return { status: 412, stored, headers: [] }; // a refusal: answered as a problem, never stored by a cache
    }
    const notModified =
      request.ifNoneMatch !== undefined
        ? noneMatchHits(request.ifNoneMatch, stored.etag)
        : request.ifModifiedSince !== undefined && notModifiedSince(request.ifModifiedSince, prepared.modifiedMs);
    const headers = notModified ? prepared.notModified : prepared.ok;
    headers[EXPIRES_AT] = this.expiresIn(policy.seconds);
    return { status: notModified ? 304 : 200, stored, headers };
  }

  #encoding(acceptEncoding: string | undefined, artefact: Artefact): Encoding {
    if (!acceptEncoding || (artefact.br === undefined && artefact.gzip === undefined)) return "identity";
    let accepted = this.#acceptedEncodings.get(acceptEncoding);
    if (accepted === undefined) {
      accepted = {
        both: chooseEncoding(acceptEncoding, { br: true, gzip: true }),
        br: chooseEncoding(acceptEncoding, { br: true, gzip: false }),
        gzip: chooseEncoding(acceptEncoding, { br: false, gzip: true }),
      };
      if (this.#acceptedEncodings.size >= MAX_REMEMBERED_ACCEPT_ENCODINGS) this.#acceptedEncodings.clear();
      this.#acceptedEncodings.set(acceptEncoding, accepted);
    }
    return artefact.br === undefined ? accepted.gzip : artefact.gzip === undefined ? accepted.br : accepted.both;
  }

  #prepare(artefact: Artefact, stored: StoredBody, encoding: Encoding, modified: string, policy: CachePolicy): Prepared {
    let variants = this.#prepared.get(stored);
    if (variants === undefined) this.#prepared.set(stored, (variants = new WeakMap()));
    let prepared = variants.get(policy);
    // A stored body belongs to one run directory, so its modification time does not change in practice.
    if (prepared === undefined || prepared.modified !== modified) {
      const modifiedMs = parseInstant(modified);
      if (modifiedMs === undefined) throw new Error(`Internal error: modification time "${modified}" of ${stored.file} is not an instant`);
      const common = [
        "etag", stored.etag,
        "last-modified", formatHttpDate(modifiedMs),
        "cache-control", cacheControl(policy),
        "expires", "",
        ...varyHeader(policy.varyAccept, artefact.gzip !== undefined || artefact.br !== undefined),
        ...tagHeaders(policy.tags),
        ...Object.entries(CORS_HEADERS).flat(),
      ];
      const content = ["content-type", artefact.contentType, "content-length", String(stored.size), ...(encoding === "identity" ? [] : ["content-encoding", encoding])];
      prepared = { modified, ok: [...common, ...content], notModified: common, modifiedMs };
      variants.set(policy, prepared);
    }
    return prepared;
  }

  /** `Expires` for a response that may be reused `cacheSeconds` from now, formatted once per second. */
  expiresIn(cacheSeconds: number): string {
    const nowMs = this.#now();
    const second = Math.floor(nowMs / 1000);
    if (second !== this.#expiresSecond) {
      this.#expires.clear();
      this.#expiresSecond = second;
    }
    let expires = this.#expires.get(cacheSeconds);
    if (expires === undefined) this.#expires.set(cacheSeconds, (expires = formatHttpDate(second * 1000 + cacheSeconds * 1000)));
    return expires;
  }
}

/** Exactly the request headers that select among this artefact's representations, or no Vary at all. */
function varyHeader(accept: boolean, encodings: boolean): string[] {
  const varies = [...(accept ? ["Accept"] : []), ...(encodings ? ["Accept-Encoding"] : [])];
  return varies.length ? ["vary", varies.join(", ")] : [];
}

/** The headers carrying the cache tags: the one Varnish's xkey reads and the one most CDNs read (the same keys). */
export const TAG_HEADERS = ["xkey", "surrogate-key"] as const;
const tagHeaders = (tags: string): string[] => TAG_HEADERS.flatMap((name) => [name, tags]);
