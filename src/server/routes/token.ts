/** `POST /token` and `/login` (the specification's password flow); a browser may sign in from another origin. */
import { Hono, type Context } from "hono";
import { LoginBackoff } from "../../auth/loginBackoff.ts";
import { problemResponse } from "../problem.ts";
import { createTokenEndpoint } from "../tokenEndpoint.ts";
import { PREFLIGHT_HEADERS } from "./respond.ts";

const LOGIN_ALLOW = "POST, OPTIONS";
/** A browser signing in from another origin: a form POST. */
const LOGIN_PREFLIGHT_HEADERS = { ...PREFLIGHT_HEADERS, "access-control-allow-methods": "POST", "access-control-allow-headers": "Content-Type" } as const;

/** Without an endpoint every login fails as with an unknown user (no users configured). */
export function tokenRoutes(base: string, tokenEndpoint: ((c: Context) => Promise<Response>) | undefined): Hono {
  const endpoint =
    tokenEndpoint ??
    createTokenEndpoint({ users: {}, peppers: [], backoff: new LoginBackoff(), issueToken: () => Promise.reject(new Error("Internal error: a token was issued without users")) });
  const group = new Hono();
  for (const path of [`${base}/token`, `${base}/login`]) {
    group.post(path, endpoint);
    group.options(path, () => new Response(null, { status: 204, headers: { allow: LOGIN_ALLOW, ...LOGIN_PREFLIGHT_HEADERS } }));
    group.all(path, () => problemResponse(405, `only ${LOGIN_ALLOW} are allowed here`, { allow: LOGIN_ALLOW }));
  }
  return group;
}
