/**
 * POST /token and POST /login (the spec's "same as /token"): the OAuth 2.0 password grant of RFC 6749
 * §4.3. Form body only; answers and errors as §5.1 and §5.2, never cached. An unknown user and a wrong
 * password get the same status, body and work (a dummy hash is verified for unknown users); repeated
 * failures on one account are slowed down per account (LoginBackoff).
 */
import type { Context } from "hono";
import { dummyVerify, parseStoredHash, verifyPassword, type Pepper } from "../auth/passwords.ts";
import type { LoginBackoff } from "../auth/loginBackoff.ts";
import type { TokenResponse } from "../auth/tokens.ts";
import type { UsersFile } from "../auth/users.ts";
import { readLimited } from "./readLimited.ts";

export interface TokenEndpointOptions {
  users: UsersFile["users"];
  /** The secrets the users' hashes were made with; every version a hash names must be here. */
  peppers: readonly Pepper[];
  issueToken: (subject: string, roles: readonly string[]) => Promise<TokenResponse>;
  backoff: LoginBackoff;
  /** Told of each good sign-in, after the answer is made (the server upgrades hashes made with an earlier secret). */
  signedIn?: (username: string, password: string, storedHash: string) => void;
  now?: () => number;
}

/** A form with a username and a password is a few hundred bytes; anything far larger is not a login. */
export const MAX_TOKEN_REQUEST_BYTES = 8 * 1024;
const FORM_TYPE = "application/x-www-form-urlencoded";
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

export function createTokenEndpoint(options: TokenEndpointOptions): (c: Context) => Promise<Response> {
  const now = options.now ?? Date.now;
  for (const [name, user] of Object.entries(options.users)) {
    const version = parseStoredHash(user.hash)?.version;
    if (!options.peppers.some((pepper) => pepper.version === version)) {
      throw new Error(`createTokenEndpoint: user ${name}'s password was hashed with secret version "${version}", which is not configured`);
    }
  }
  // Paid here, not by the first unknown user, so every failed login costs the same.
  void dummyVerify("warm-up");

  return async function tokenEndpoint(c: Context): Promise<Response> {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== FORM_TYPE) return oauthError(415, "invalid_request", `send the fields as ${FORM_TYPE}`);
    const body = await readLimited(c.req.raw, MAX_TOKEN_REQUEST_BYTES);
    if (body === undefined) return oauthError(413, "invalid_request", `the form is larger than ${MAX_TOKEN_REQUEST_BYTES} bytes`);
    let form: URLSearchParams;
    try {
      form = new URLSearchParams(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch {
      return oauthError(400, "invalid_request", "the form is not UTF-8");
    }
    for (const name of new Set(form.keys())) {
      if (form.getAll(name).length > 1) return oauthError(400, "invalid_request", `give ${name.slice(0, 40)} once`);
    }
    const grantType = form.get("grant_type");
    if (grantType !== null && grantType !== "password") return oauthError(400, "unsupported_grant_type", "only grant_type=password (or none) is supported");
    const username = form.get("username");
    const password = form.get("password");
    if (!username || password === null) return oauthError(400, "invalid_request", "give username and password");

    const waitMs = options.backoff.waitMs(username, now());
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      return oauthError(429, "invalid_request", `too many failed logins for this account; try again in ${seconds} s`, { "retry-after": String(seconds) });
    }
    // Counted as failed before the check and forgiven if it succeeds: counted after it, every guess sent
    // at once passed the wait above while the others were being hashed (40 parallel guesses, none refused).
    options.backoff.failed(username, now());
    const user = Object.hasOwn(options.users, username) ? options.users[username]! : undefined;
    const valid = user ? await verifyPassword(user.hash, password, options.peppers) : await dummyVerify(password);
    if (!valid || !user) return oauthError(400, "invalid_grant", "the username or password is wrong");
    options.backoff.succeeded(username);
    const answer = new Response(JSON.stringify(await options.issueToken(username, user.roles)), {
      status: 200,
      headers: { "content-type": "application/json;charset=UTF-8", ...NO_STORE },
    });
    options.signedIn?.(username, password, user.hash);
    return answer;
  };
}

/** RFC 6749 §5.2 error body, never cached. */
export function oauthError(status: number, error: string, description: string, extraHeaders: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json;charset=UTF-8", ...NO_STORE, ...extraHeaders },
  });
}

