/** Bearer tokens with the real jose: the key from the environment, issued claims, every refusal, the cache, the challenge header. */
import { createHmac, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { SignJWT, type JWTHeaderParameters, type JWTPayload } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createTokenIssuer,
  createTokenVerifier,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  tokenKeyForServer,
  tokenKeyFromEnvironment,
  wwwAuthenticate,
  type TokenFailure,
} from "../../src/auth/tokens.ts";
import { InternalError, UserError } from "../../src/errors.ts";

const KEY = new Uint8Array(Array.from({ length: 32 }, (_, i) => i + 1));
const OTHER_KEY = new Uint8Array(32).fill(7);
/** 2023-11-14T22:13:20Z, in milliseconds, and in seconds for the claims. */
const T0 = 1_700_000_000_000;
const T0S = T0 / 1000;
const EXP = T0S + 3600;

let clock = T0;
const now = (): number => clock;
afterEach(() => {
  clock = T0;
  vi.restoreAllMocks();
});

const issuer = createTokenIssuer({ key: KEY, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, lifetimeSeconds: 3600, now });
function verifier(options: { cacheSize?: number; clockToleranceSeconds?: number } = {}) {
  return createTokenVerifier({ key: KEY, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, now, ...options });
}

const b64u = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
const decode = (part: string): unknown => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
const HEADER = { alg: "HS256", typ: "at+jwt" } as const;
const CLAIMS = { iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, sub: "alice", iat: T0S, exp: EXP, jti: "j1", roles: ["operator"] };
const ALICE = { ok: true, subject: "alice", roles: ["operator"], expiresAt: EXP * 1000 };

/** A token signed by jose with any header, claims and key. */
function sign(claims: JWTPayload, header: JWTHeaderParameters = HEADER, key: Parameters<SignJWT["sign"]>[0] = KEY): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header).sign(key);
}

/** A token put together by hand: base64url JSON header and payload, and the signature given. */
function forge(header: unknown, claims: unknown, signature = ""): string {
  return `${b64u(header)}.${b64u(claims)}.${signature}`;
}

function refused(description: string, extra: Partial<TokenFailure> = {}): TokenFailure {
  return { ok: false, error: "invalid_token", description, tokenSent: true, status: 401, ...extra };
}

describe("tokenKeyFromEnvironment", () => {
  const base64 = Buffer.from(KEY).toString("base64"); // "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

  it("is undefined when unset or empty", () => {
    expect(tokenKeyFromEnvironment({})).toBeUndefined();
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: "" })).toBeUndefined();
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: " \n" })).toBeUndefined();
  });

  it("reads base64 and base64url, padded or not, around white space", () => {
    const bytes = new Uint8Array(Array.from({ length: 33 }, (_, i) => 250 - i * 3)); // gives '+', '/' and '-', '_' in the two alphabets
    const std = Buffer.from(bytes).toString("base64");
    const url = Buffer.from(bytes).toString("base64url");
    expect(std).toMatch(/[+/]/);
    expect(url).toMatch(/[-_]/);
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: std })).toEqual(bytes);
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: url })).toEqual(bytes);
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: base64 })).toEqual(KEY);
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: base64.replace(/=+$/, "") })).toEqual(KEY);
    expect(tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: `  ${base64}\n` })).toEqual(KEY);
  });

  it("refuses a key shorter than 32 bytes, naming the variable and the fix", () => {
    const error = (() => {
      try {
        tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: Buffer.alloc(31, 1).toString("base64") });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toBe("the token key is 31 bytes, fewer than the 32 (256 bits) required");
    expect((error as UserError).where).toBe("ASHCAST_TOKEN_KEY");
    expect((error as UserError).fix).toBe("set it to 32 random bytes in base64, e.g. the output of `openssl rand -base64 32`");
  });

  it.each(["not base64 at all!", "a".repeat(45), `${base64}===`, `=${base64}`, "AQID BAUG"])("refuses %j as not base64", (text) => {
    expect(() => tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: text })).toThrow(UserError);
    expect(() => tokenKeyFromEnvironment({ ASHCAST_TOKEN_KEY: text })).toThrow("the token key is not base64");
  });
});

describe("tokenKeyForServer", () => {
  it("fails at start when a route is protected and no key is set", () => {
    let error: unknown;
    try {
      tokenKeyForServer({}, "/jobs");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toBe("the access rules protect /jobs, but no token key is set, so no token could ever be checked");
    expect((error as UserError).where).toBe("ASHCAST_TOKEN_KEY");
  });

  it("needs no key when nothing is protected, and returns the key when set", () => {
    expect(tokenKeyForServer({}, undefined)).toBeUndefined();
    expect(tokenKeyForServer({ ASHCAST_TOKEN_KEY: Buffer.from(KEY).toString("base64url") }, "/jobs")).toEqual(KEY);
  });
});

describe("createTokenIssuer", () => {
  it("answers the RFC 6749 §5.1 body with an HS256 at+jwt carrying iss, aud, sub, iat, exp, jti and roles", async () => {
    const response = await issuer.issue("alice", ["operator"]);
    expect(Object.keys(response).sort()).toEqual(["access_token", "expires_in", "token_type"]);
    expect(response.token_type).toBe("Bearer");
    expect(response.expires_in).toBe(3600);
    const [header, payload, signature] = response.access_token.split(".") as [string, string, string];
    expect(decode(header)).toEqual({ alg: "HS256", typ: "at+jwt" });
    const claims = decode(payload) as Record<string, unknown>;
    expect(claims).toEqual({ roles: ["operator"], iss: "ashcast", aud: "ashcast-api", sub: "alice", iat: T0S, exp: T0S + 3600, jti: claims.jti });
    expect(claims.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(signature).toBe(createHmac("sha256", KEY).update(`${header}.${payload}`).digest("base64url"));
  });

  it("gives every token its own jti, and takes iat from the clock in whole seconds", async () => {
    clock = T0 + 999;
    const a = decode((await issuer.issue("alice", [])).access_token.split(".")[1]!) as JWTPayload;
    const b = decode((await issuer.issue("alice", [])).access_token.split(".")[1]!) as JWTPayload;
    expect(a.jti).not.toBe(b.jti);
    expect([a.iat, a.exp, a.roles]).toEqual([T0S, T0S + 3600, []]);
  });

  it("refuses a key shorter than 256 bits and a lifetime that is not a positive whole number", () => {
    expect(() => createTokenIssuer({ key: new Uint8Array(31), issuer: "i", audience: "a", lifetimeSeconds: 60 })).toThrow(InternalError);
    expect(() => createTokenIssuer({ key: KEY, issuer: "i", audience: "a", lifetimeSeconds: 0 })).toThrow(InternalError);
    expect(() => createTokenIssuer({ key: KEY, issuer: "i", audience: "a", lifetimeSeconds: 1.5 })).toThrow(InternalError);
  });
});

describe("createTokenVerifier: the Authorization header", () => {
  it("accepts an issued token, whatever the case of the scheme and the spaces after it", async () => {
    const { access_token } = await issuer.issue("alice", ["operator"]);
    expect(await verifier().verify(`Bearer ${access_token}`)).toEqual(ALICE);
    expect(await verifier().verify(`bearer ${access_token}`)).toEqual(ALICE);
    expect(await verifier().verify(`BEARER   ${access_token}  `)).toEqual(ALICE);
  });

  it.each([undefined, null, "", "   "])("no header (%j): 401 whose challenge names no error", async (value) => {
    expect(await verifier().verify(value)).toEqual({ ok: false, error: "invalid_request", description: "no Authorization header was sent", tokenSent: false, status: 401 });
  });

  it.each(["Basic YWxpY2U6c2VjcmV0", "Bearerx abc", "Token abc"])("another scheme (%j): 401 whose challenge names no error", async (value) => {
    expect(await verifier().verify(value)).toEqual({ ok: false, error: "invalid_request", description: "the Authorization header does not use the Bearer scheme", tokenSent: false, status: 401 });
  });

  it.each(["Bearer", "Bearer ", "Bearer a b", "Bearer,abc", "Bearer\tabc", "Bearer a=b", "Bearer ä", 'Bearer "abc"'])("a malformed Bearer header (%j) is invalid_request, 400", async (value) => {
    expect(await verifier().verify(value)).toEqual({ ok: false, error: "invalid_request", description: "the Authorization header is not `Bearer` and one token", tokenSent: true, status: 400 });
  });

  it("does not parse a token longer than 4096 characters", async () => {
    expect(await verifier().verify(`Bearer ${"a".repeat(4097)}`)).toEqual(refused("the token is malformed"));
  });
});

describe("createTokenVerifier: refusals", () => {
  it("refuses alg none, with or without a signature", async () => {
    const none = forge({ alg: "none", typ: "at+jwt" }, CLAIMS);
    expect(await verifier().verify(`Bearer ${none}`)).toEqual(refused("the token's algorithm is not HS256"));
    const noneSigned = forge({ alg: "none", typ: "at+jwt" }, CLAIMS, createHmac("sha256", KEY).update(none.slice(0, -1)).digest("base64url"));
    expect(await verifier().verify(`Bearer ${noneSigned}`)).toEqual(refused("the token's algorithm is not HS256"));
    expect(await verifier().verify(`Bearer ${forge({ alg: "NONE", typ: "at+jwt" }, CLAIMS)}`)).toEqual(refused("the token's algorithm is not HS256"));
  });

  it("accepts a hand-made HS256 token with our key (the forging is right), and refuses it signed with another key", async () => {
    const body = `${b64u(HEADER)}.${b64u(CLAIMS)}`;
    expect(await verifier().verify(`Bearer ${body}.${createHmac("sha256", KEY).update(body).digest("base64url")}`)).toEqual({ ...ALICE });
    expect(await verifier().verify(`Bearer ${body}.${createHmac("sha256", OTHER_KEY).update(body).digest("base64url")}`)).toEqual(refused("the token's signature does not verify"));
    expect(await verifier().verify(`Bearer ${await sign(CLAIMS, HEADER, OTHER_KEY)}`)).toEqual(refused("the token's signature does not verify"));
  });

  it("refuses a tampered payload", async () => {
    const [header, , signature] = (await issuer.issue("alice", ["operator"])).access_token.split(".");
    const tampered = `${header}.${b64u({ ...CLAIMS, sub: "mallory" })}.${signature}`;
    expect(await verifier().verify(`Bearer ${tampered}`)).toEqual(refused("the token's signature does not verify"));
  });

  it("refuses other algorithms, even with the same secret or a real key pair", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const ed = generateKeyPairSync("ed25519");
    const tokens = [
      await sign(CLAIMS, { alg: "HS384", typ: "at+jwt" }, new Uint8Array(48).fill(1)),
      await sign(CLAIMS, { alg: "HS512", typ: "at+jwt" }, new Uint8Array([...KEY, ...KEY])),
      await sign(CLAIMS, { alg: "RS256", typ: "at+jwt" }, rsa.privateKey),
      await sign(CLAIMS, { alg: "PS256", typ: "at+jwt" }, rsa.privateKey),
      await sign(CLAIMS, { alg: "ES256", typ: "at+jwt" }, ec.privateKey),
      await sign(CLAIMS, { alg: "EdDSA", typ: "at+jwt" }, ed.privateKey),
      // The classic swap: a token that claims HS256 but is signed with the RSA public key as the HMAC secret.
      await sign(CLAIMS, HEADER, new Uint8Array(rsa.publicKey.export({ type: "spki", format: "der" }))),
    ];
    const answers = await Promise.all(tokens.map((token) => verifier().verify(`Bearer ${token}`)));
    expect(answers).toEqual([...Array(6).fill(refused("the token's algorithm is not HS256")), refused("the token's signature does not verify")]);
  });

  it.each([
    ["JWT", "JWT"],
    ["absent", undefined],
    ["application/jwt", "application/jwt"],
    ["dpop+jwt", "dpop+jwt"],
  ])("refuses a typ %s", async (_name, typ) => {
    const token = await sign(CLAIMS, typ === undefined ? { alg: "HS256" } : { alg: "HS256", typ });
    expect(await verifier().verify(`Bearer ${token}`)).toEqual(refused("the token is not an access token (typ must be at+jwt)"));
  });

  it("takes the full media type of at+jwt as the same type (RFC 7515 §4.1.9)", async () => {
    expect(await verifier().verify(`Bearer ${await sign(CLAIMS, { alg: "HS256", typ: "application/at+jwt" })}`)).toEqual(ALICE);
  });

  it("refuses another issuer or audience, and accepts ours in an audience list", async () => {
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, iss: "someone-else" })}`)).toEqual(refused("the token was issued by someone else"));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, aud: "another-api" })}`)).toEqual(refused("the token is meant for another audience"));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, aud: ["another-api", TOKEN_AUDIENCE] })}`)).toEqual(ALICE);
    const other = createTokenIssuer({ key: KEY, issuer: TOKEN_ISSUER, audience: "another-api", lifetimeSeconds: 60, now });
    expect(await verifier().verify(`Bearer ${(await other.issue("alice", [])).access_token}`)).toEqual(refused("the token is meant for another audience"));
  });

  it.each(["exp", "iat", "sub", "iss", "aud"])("refuses a token without %s", async (claim) => {
    const claims: Record<string, unknown> = { ...CLAIMS };
    delete claims[claim];
    expect(await verifier().verify(`Bearer ${await sign(claims)}`)).toEqual(refused(`the token has no "${claim}" claim`));
  });

  it("refuses claims of the wrong type", async () => {
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, exp: String(EXP) } as unknown as JWTPayload)}`)).toEqual(refused('the token\'s "exp" claim is invalid'));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, iat: "now" } as unknown as JWTPayload)}`)).toEqual(refused('the token\'s "iat" claim is invalid'));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, sub: "" })}`)).toEqual(refused('the token\'s "sub" claim is invalid'));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, roles: "operator" })}`)).toEqual(refused('the token\'s "roles" claim is invalid'));
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, roles: [1] })}`)).toEqual(refused('the token\'s "roles" claim is invalid'));
  });

  it("reads a token without roles as one with no roles", async () => {
    const { roles: _roles, ...claims } = CLAIMS;
    expect(await verifier().verify(`Bearer ${await sign(claims)}`)).toEqual({ ...ALICE, roles: [] });
  });

  it("expiry: valid before exp + 30 s to the millisecond, refused from exp + 30 s (RFC 7519: now must be before exp)", async () => {
    const token = `Bearer ${await sign(CLAIMS)}`;
    clock = (EXP + 29) * 1000 + 999;
    expect(await verifier().verify(token)).toEqual(ALICE);
    clock = (EXP + 30) * 1000;
    expect(await verifier().verify(token)).toEqual(refused("the token has expired"));
    clock = (EXP + 31) * 1000;
    expect(await verifier().verify(token)).toEqual(refused("the token has expired"));
  });

  it("expiry with no tolerance: refused at exp itself", async () => {
    const token = `Bearer ${await sign(CLAIMS)}`;
    clock = EXP * 1000 - 1;
    expect(await verifier({ clockToleranceSeconds: 0 }).verify(token)).toEqual(ALICE);
    clock = EXP * 1000;
    expect(await verifier({ clockToleranceSeconds: 0 }).verify(token)).toEqual(refused("the token has expired"));
  });

  it("issued in the future: up to 30 s ahead accepted, 31 s refused", async () => {
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, iat: T0S + 30 })}`)).toEqual(ALICE);
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, iat: T0S + 31 })}`)).toEqual(refused("the token was issued in the future"));
    clock = T0 + 999; // whole seconds, as jose counts
    expect(await verifier().verify(`Bearer ${await sign({ ...CLAIMS, iat: T0S + 31 })}`)).toEqual(refused("the token was issued in the future"));
  });

  it("refuses a tolerance above 60 s or below 0, and a bad cache size", () => {
    expect(() => verifier({ clockToleranceSeconds: 61 })).toThrow(InternalError);
    expect(() => verifier({ clockToleranceSeconds: -1 })).toThrow(InternalError);
    expect(() => verifier({ cacheSize: -1 })).toThrow(InternalError);
    expect(() => createTokenVerifier({ key: new Uint8Array(16), issuer: "i", audience: "a" })).toThrow(InternalError);
  });

  it.each(["abc", "a.b.c", "a.b", "a..c", "....", `${b64u(HEADER)}.${b64u([1])}.x`, `${b64u(HEADER)}.${Buffer.from("not json").toString("base64url")}.x`])("refuses the garbage token %j as malformed", async (token) => {
    const answer = await verifier().verify(`Bearer ${token}`);
    expect(answer.ok).toBe(false);
    expect((answer as TokenFailure).error).toBe("invalid_token");
    expect((answer as TokenFailure).status).toBe(401);
  });

  it("never throws, whatever the header", async () => {
    const v = verifier();
    const part = fc.oneof(fc.string(), fc.base64String(), fc.json().map((json) => Buffer.from(json).toString("base64url")));
    const header = fc.oneof(
      fc.string(),
      fc.tuple(part, part, part).map(([h, p, s]) => `Bearer ${h}.${p}.${s}`),
      fc.tuple(fc.jsonValue(), fc.jsonValue(), fc.string()).map(([h, p, s]) => `Bearer ${b64u(h)}.${b64u(p)}.${Buffer.from(s).toString("base64url")}`),
      fc.tuple(fc.jsonValue(), fc.dictionary(fc.constantFrom("iss", "aud", "sub", "iat", "exp", "roles", "nbf"), fc.jsonValue())).map(([alg, extra]) => `Bearer ${forge({ alg, typ: "at+jwt" }, { ...CLAIMS, ...extra })}`),
    );
    await fc.assert(
      fc.asyncProperty(header, async (value) => {
        const answer = await v.verify(value);
        expect(answer.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe("createTokenVerifier: key import and cache", () => {
  it("imports the key once, when the verifier is made, not per verification", async () => {
    const tokens = await Promise.all(["a", "b", "c"].map(async (sub) => (await issuer.issue(sub, [])).access_token));
    const importKey = vi.spyOn(crypto.subtle, "importKey");
    const v = verifier({ cacheSize: 0 });
    expect(importKey).toHaveBeenCalledTimes(1);
    for (const token of [...tokens, ...tokens]) expect((await v.verify(`Bearer ${token}`)).ok).toBe(true);
    expect(importKey).toHaveBeenCalledTimes(1);
    expect(importKey.mock.calls[0]!.slice(2)).toEqual([{ name: "HMAC", hash: "SHA-256" }, false, ["verify"]]);
  });

  it("answers a token seen before from the cache, without verifying again", async () => {
    const token = `Bearer ${(await issuer.issue("alice", ["operator"])).access_token}`;
    const v = verifier();
    expect(await v.verify(token)).toEqual(ALICE);
    expect([v.cacheHits, v.cacheSize]).toEqual([0, 1]);
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await v.verify(token)).toEqual(ALICE);
    expect(await v.verify(token.replace("Bearer", "bearer"))).toEqual(ALICE); // the same token text
    expect([v.cacheHits, v.cacheSize]).toEqual([2, 1]);
    expect(verify).not.toHaveBeenCalled();
  });

  it("does not use a cached token from its exp on, and refuses it once past the tolerance", async () => {
    const token = `Bearer ${(await issuer.issue("alice", ["operator"])).access_token}`;
    const v = verifier();
    expect(await v.verify(token)).toEqual(ALICE);
    clock = EXP * 1000 - 1;
    expect(await v.verify(token)).toEqual(ALICE);
    expect([v.cacheHits, v.cacheSize]).toEqual([1, 1]);
    clock = EXP * 1000; // verified afresh: within the tolerance, but no longer cached
    expect(await v.verify(token)).toEqual(ALICE);
    expect([v.cacheHits, v.cacheSize]).toEqual([1, 0]);
    clock = (EXP + 30) * 1000;
    expect(await v.verify(token)).toEqual(refused("the token has expired"));
    expect([v.cacheHits, v.cacheSize]).toEqual([1, 0]);
  });

  it("refuses an expired token that is still in the cache", async () => {
    const token = `Bearer ${(await issuer.issue("alice", ["operator"])).access_token}`;
    const v = verifier();
    await v.verify(token);
    clock = (EXP + 3600) * 1000;
    expect(await v.verify(token)).toEqual(refused("the token has expired"));
    expect([v.cacheHits, v.cacheSize]).toEqual([0, 0]);
  });

  it("keeps no refused token", async () => {
    const v = verifier();
    const bad = `Bearer ${await sign(CLAIMS, HEADER, OTHER_KEY)}`;
    await v.verify(bad);
    await v.verify(bad);
    expect([v.cacheHits, v.cacheSize]).toEqual([0, 0]);
  });

  it("is a bounded LRU: the least recently used token goes first", async () => {
    const [t1, t2, t3] = await Promise.all(["a", "b", "c"].map(async (sub) => `Bearer ${(await issuer.issue(sub, [])).access_token}`));
    const v = verifier({ cacheSize: 2 });
    await v.verify(t1);
    await v.verify(t2);
    await v.verify(t1); // hit: t1 is now the most recent
    await v.verify(t3); // evicts t2
    expect([v.cacheHits, v.cacheSize]).toEqual([1, 2]);
    await v.verify(t1);
    expect(v.cacheHits).toBe(2);
    await v.verify(t2); // a miss, verified again; evicts t3
    expect([v.cacheHits, v.cacheSize]).toEqual([2, 2]);
    await v.verify(t3);
    expect(v.cacheHits).toBe(2);
  });

  it("with cacheSize 0 keeps nothing", async () => {
    const token = `Bearer ${(await issuer.issue("alice", ["operator"])).access_token}`;
    const v = verifier({ cacheSize: 0 });
    expect(await v.verify(token)).toEqual(ALICE);
    expect(await v.verify(token)).toEqual(ALICE);
    expect([v.cacheHits, v.cacheSize]).toEqual([0, 0]);
  });

  it("hands out roles that cannot be changed through the cache", async () => {
    const token = `Bearer ${(await issuer.issue("alice", ["operator"])).access_token}`;
    const v = verifier();
    const first = await v.verify(token);
    expect(() => (first as unknown as { roles: string[] }).roles.push("admin")).toThrow(TypeError);
    expect(await v.verify(token)).toEqual(ALICE);
  });
});

describe("wwwAuthenticate", () => {
  it("without a failure, or for a request that sent no token, is the bare challenge", () => {
    expect(wwwAuthenticate("ashcast")).toBe('Bearer realm="ashcast"');
    expect(wwwAuthenticate("ashcast", { ok: false, error: "invalid_request", description: "no Authorization header was sent", tokenSent: false, status: 401 })).toBe('Bearer realm="ashcast"');
  });

  it("names the error and its description when a token was refused", () => {
    expect(wwwAuthenticate("ashcast", refused("the token has expired"))).toBe('Bearer realm="ashcast", error="invalid_token", error_description="the token has expired"');
    expect(wwwAuthenticate("ashcast", { ok: false, error: "invalid_request", description: "the Authorization header is not `Bearer` and one token", tokenSent: true, status: 400 })).toBe(
      'Bearer realm="ashcast", error="invalid_request", error_description="the Authorization header is not `Bearer` and one token"',
    );
  });

  it("escapes quotes and backslashes in the realm", () => {
    expect(wwwAuthenticate('ash "cast" \\ 1')).toBe('Bearer realm="ash \\"cast\\" \\\\ 1"');
  });

  it("keeps the description within RFC 6750's characters: no quote, backslash, control or non-ASCII character", () => {
    expect(wwwAuthenticate("ashcast", refused('the "sub" claim\\x is\r\nbad: é'))).toBe(`Bearer realm="ashcast", error="invalid_token", error_description="the 'sub' claim/x is??bad: ?"`);
  });

  it("refuses a realm no header can carry", () => {
    expect(() => wwwAuthenticate("ash\r\nX-Injected: 1")).toThrow(InternalError);
    expect(() => wwwAuthenticate("ashcäst")).toThrow(InternalError);
  });
});
