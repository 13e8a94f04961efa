/**
 * Bearer access tokens (issue 5): JWTs signed with HS256 by the one service that also verifies them.
 * The header is `{"alg":"HS256","typ":"at+jwt"}` (RFC 9068); the claims are iss, aud, sub, iat, exp, a
 * random jti, and the user's roles. Verification pins the algorithm, requires the type, issuer, audience,
 * exp and iat, and allows a small clock tolerance (RFC 8725, security.md "Tokens").
 *
 * Cost (performance.md): the key is imported into WebCrypto once, when the issuer or verifier is made
 * (jose would import raw bytes, or a Node KeyObject's exported bytes, on every call), and verified tokens
 * are kept in a bounded LRU by their exact text until their exp, so a client's repeated requests skip
 * the HMAC.
 *
 * Answers (RFC 6750 §3.1): no Bearer credentials at all gives a 401 whose challenge carries no error
 * code; a malformed Authorization header gives `invalid_request` (400); anything wrong with the token
 * gives `invalid_token` (401). A valid token without the right role is the caller's 403.
 */
import { randomBytes, type webcrypto } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import { InternalError, UserError } from "../errors.ts";

export const TOKEN_ALGORITHM = "HS256";
/** RFC 9068's media type for JWT access tokens, so an ID token or any other JWT is not taken for one. */
export const TOKEN_TYPE = "at+jwt";
export const TOKEN_ISSUER = "ashcast";
export const TOKEN_AUDIENCE = "ashcast-api";
export const TOKEN_LIFETIME_SECONDS = 3600;
export const CLOCK_TOLERANCE_SECONDS = 30;
/** security.md: a small tolerance, at most a minute. */
export const MAX_CLOCK_TOLERANCE_SECONDS = 60;
/** 256 bits, the HMAC-SHA-256 output size (RFC 7518 §3.2 requires at least that). */
export const MIN_TOKEN_KEY_BYTES = 32;
export const TOKEN_KEY_VARIABLE = "ASHCAST_TOKEN_KEY";
export const DEFAULT_TOKEN_CACHE_SIZE = 10_000;
/** Our tokens are about 300 characters; anything much longer is not one, and is not parsed. */
export const MAX_TOKEN_LENGTH = 4096;

const HMAC_SHA256 = { name: "HMAC", hash: "SHA-256" } as const;
const KEY_FIX = "set it to 32 random bytes in base64, e.g. the output of `openssl rand -base64 32`";
/** base64 or base64url, padding optional. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, a b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
/** The auth-scheme: the longest run of token characters at the start. */
const SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;

/**
 * The token key from `ASHCAST_TOKEN_KEY`: base64 or base64url of at least 32 bytes (surrounding white
 * space ignored); undefined when unset or empty.
 */
export function tokenKeyFromEnvironment(env: NodeJS.ProcessEnv = process.env): Uint8Array | undefined {
  const text = env[TOKEN_KEY_VARIABLE]?.trim();
  if (text === undefined || text === "") return undefined;
  if (!BASE64.test(text) || text.replace(/=+$/, "").length % 4 === 1) {
    throw new UserError("the token key is not base64", { where: TOKEN_KEY_VARIABLE, fix: KEY_FIX });
  }
  const key = new Uint8Array(Buffer.from(text, "base64"));
  if (key.length < MIN_TOKEN_KEY_BYTES) {
    throw new UserError(`the token key is ${key.length} bytes, fewer than the ${MIN_TOKEN_KEY_BYTES} (256 bits) required`, { where: TOKEN_KEY_VARIABLE, fix: KEY_FIX });
  }
  return key;
}

/**
 * The token key for a server: as tokenKeyFromEnvironment, but a configuration that protects a route
 * (`protectedRoute`, the first one, for the message) without a key is an error at start rather than a
 * route nobody can ever reach.
 */
export function tokenKeyForServer(env: NodeJS.ProcessEnv, protectedRoute: string | undefined): Uint8Array | undefined {
  const key = tokenKeyFromEnvironment(env);
  if (key === undefined && protectedRoute !== undefined) {
    throw new UserError(`the access rules protect ${protectedRoute}, but no token key is set, so no token could ever be checked`, { where: TOKEN_KEY_VARIABLE, fix: KEY_FIX });
  }
  return key;
}

function checkKey(key: Uint8Array): void {
  if (key.length < MIN_TOKEN_KEY_BYTES) throw new InternalError(`a token key of ${key.length} bytes reached the token code; ${MIN_TOKEN_KEY_BYTES} are required`);
}

function importKey(key: Uint8Array, usage: "sign" | "verify"): Promise<webcrypto.CryptoKey> {
  checkKey(key);
  return crypto.subtle.importKey("raw", key, HMAC_SHA256, false, [usage]);
}

/** The body of a successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
}

export interface TokenIssuerOptions {
  key: Uint8Array;
  issuer: string;
  audience: string;
  lifetimeSeconds: number;
  /** The clock, in milliseconds since the epoch. */
  now?: () => number;
}

export interface TokenIssuer {
  issue(subject: string, roles: readonly string[]): Promise<TokenResponse>;
}

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { issuer, audience, lifetimeSeconds, now = Date.now } = options;
  if (!Number.isSafeInteger(lifetimeSeconds) || lifetimeSeconds <= 0) throw new InternalError(`token lifetime ${lifetimeSeconds} is not a positive whole number of seconds`);
  const key = importKey(options.key, "sign");
  return {
    async issue(subject, roles) {
      if (subject === "") throw new InternalError("a token was asked for an empty subject");
      const iat = Math.floor(now() / 1000);
      const accessToken = await new SignJWT({ roles: [...roles] })
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: TOKEN_TYPE })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(subject)
        .setIssuedAt(iat)
        .setExpirationTime(iat + lifetimeSeconds)
        .setJti(randomBytes(16).toString("base64url"))
        .sign(await key);
      return { access_token: accessToken, token_type: "Bearer", expires_in: lifetimeSeconds };
    },
  };
}

export interface TokenSuccess {
  ok: true;
  subject: string;
  roles: readonly string[];
  /** The token's exp, in milliseconds since the epoch. */
  expiresAt: number;
}

export interface TokenFailure {
  ok: false;
  error: "invalid_request" | "invalid_token";
  /** For the `error_description` of the challenge: what is wrong, never the token. */
  description: string;
  /** False when the request carried no Bearer credentials at all: the challenge then names no error. */
  tokenSent: boolean;
  /** RFC 6750 §3.1: 400 for invalid_request with a token sent, else 401. */
  status: 400 | 401;
}

export type TokenResult = TokenSuccess | TokenFailure;

export interface TokenVerifierOptions {
  key: Uint8Array;
  issuer: string;
  audience: string;
  clockToleranceSeconds?: number;
  /** The clock, in milliseconds since the epoch. */
  now?: () => number;
  /** Verified tokens kept; 0 turns the cache off. */
  cacheSize?: number;
}

export interface TokenVerifier {
  /** Never throws for anything a client can send. */
  verify(authorization: string | null | undefined): Promise<TokenResult>;
  /** Verifications answered from the cache. */
  readonly cacheHits: number;
  /** Tokens in the cache. */
  readonly cacheSize: number;
}

function failure(error: TokenFailure["error"], description: string, tokenSent = true): TokenFailure {
  return { ok: false, error, description, tokenSent, status: error === "invalid_request" && tokenSent ? 400 : 401 };
}

/** What a client may be told about a refused token. */
function describe(error: errors.JOSEError): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") return `the token has no "${error.claim}" claim`;
    if (error.claim === "typ") return `the token is not an access token (typ must be ${TOKEN_TYPE})`;
    if (error.claim === "iss") return "the token was issued by someone else";
    if (error.claim === "aud") return "the token is meant for another audience";
    return `the token's "${error.claim}" claim is invalid`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return `the token's algorithm is not ${TOKEN_ALGORITHM}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  return "the token is malformed";
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { issuer, audience, clockToleranceSeconds = CLOCK_TOLERANCE_SECONDS, now = Date.now, cacheSize = DEFAULT_TOKEN_CACHE_SIZE } = options;
  if (!Number.isSafeInteger(clockToleranceSeconds) || clockToleranceSeconds < 0 || clockToleranceSeconds > MAX_CLOCK_TOLERANCE_SECONDS) {
    throw new InternalError(`clock tolerance ${clockToleranceSeconds} s is not a whole number from 0 to ${MAX_CLOCK_TOLERANCE_SECONDS}`);
  }
  if (!Number.isSafeInteger(cacheSize) || cacheSize < 0) throw new InternalError(`token cache size ${cacheSize} is not a whole number ≥ 0`);
  const key = importKey(options.key, "verify");
  /** Token text → verified result; Map order is the LRU order, oldest first. */
  const cache = new Map<string, TokenSuccess>();
  let cacheHits = 0;

  async function verifyToken(token: string, nowMs: number): Promise<TokenResult> {
    const nowSeconds = Math.floor(nowMs / 1000);
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, await key, {
        algorithms: [TOKEN_ALGORITHM],
        typ: TOKEN_TYPE,
        issuer,
        audience,
        requiredClaims: ["exp", "iat", "sub"],
        clockTolerance: clockToleranceSeconds,
        currentDate: new Date(nowSeconds * 1000),
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) return failure("invalid_token", describe(error));
      throw error;
    }
    // jose has checked that exp and iat are numbers and that exp has not passed; iat only when maxTokenAge is set.
    const { sub, iat, exp, roles } = payload as { sub: unknown; iat: number; exp: number; roles: unknown };
    if (iat > nowSeconds + clockToleranceSeconds) return failure("invalid_token", "the token was issued in the future");
    if (typeof sub !== "string" || sub === "") return failure("invalid_token", 'the token\'s "sub" claim is invalid');
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((role) => typeof role === "string" && role !== ""))) {
      return failure("invalid_token", 'the token\'s "roles" claim is invalid');
    }
    const result: TokenSuccess = { ok: true, subject: sub, roles: Object.freeze([...((roles as string[] | undefined) ?? [])]), expiresAt: exp * 1000 };
    // Kept only while before exp: after it, each request is verified again and the tolerance applies.
    if (cacheSize > 0 && nowMs < result.expiresAt) {
      cache.set(token, result);
      if (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
    }
    return result;
  }

  return {
    async verify(authorization) {
      const value = (authorization ?? "").trim();
      const scheme = SCHEME.exec(value)?.[0];
      if (scheme === undefined || scheme.toLowerCase() !== "bearer") {
        return failure("invalid_request", value === "" ? "no Authorization header was sent" : "the Authorization header does not use the Bearer scheme", false);
      }
      const token = BEARER.exec(value)?.[1];
      if (token === undefined) return failure("invalid_request", "the Authorization header is not `Bearer` and one token");
      if (token.length > MAX_TOKEN_LENGTH) return failure("invalid_token", "the token is malformed");
      const nowMs = now();
      const cached = cache.get(token);
      if (cached !== undefined) {
        cache.delete(token);
        if (nowMs < cached.expiresAt) {
          cache.set(token, cached);
          cacheHits++;
          return cached;
        }
      }
      return verifyToken(token, nowMs);
    },
    get cacheHits() {
      return cacheHits;
    },
    get cacheSize() {
      return cache.size;
    },
  };
}

/** A quoted-string (RFC 9110 §5.6.4) for an auth-param value. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750 §3): `Bearer realm="..."`, with `error` and
 * `error_description` when a token was sent and refused. The realm is quoted with `"` and `\` escaped;
 * error_description may hold neither, even escaped (RFC 6750 §3), so they become `'` and `/`, and any
 * other character outside printable ASCII becomes `?`.
 */
export function wwwAuthenticate(realm: string, failure?: TokenFailure): string {
  if (/[\u0000-\u001f\u007f-\uffff]/.test(realm)) throw new InternalError(`the realm ${JSON.stringify(realm)} holds a character a header cannot carry`);
  const challenge = `Bearer realm=${quoted(realm)}`;
  if (failure === undefined || !failure.tokenSent) return challenge;
  const description = failure.description.replace(/"/g, "'").replace(/\\/g, "/").replace(/[^\x20-\x7e]/g, "?");
  return `${challenge}, error="${failure.error}", error_description="${description}"`;
}
