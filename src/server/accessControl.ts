/**
 * The access rules applied to every request before routing: the path below the product base is
 * normalised once (every spelling gets the decision of its canonical form), a public request passes, a
 * protected one needs a valid bearer token with the rule's role. 400 for a path that cannot be
 * normalised, 401 with `WWW-Authenticate: Bearer` without a valid token, 403 for a valid token without
 * the role. Built once at start from the rules and the verifier.
 */
import type { MiddlewareHandler } from "hono";
import { createAccessPolicy, pathBelowBase, type AccessPolicy, type AccessRule } from "../auth/accessRules.ts";
import { wwwAuthenticate, type TokenVerifier } from "../auth/tokens.ts";
import { problemResponse } from "./problem.ts";

export const REALM = "ashcast";

/** Who signed the request in, for the handlers behind a protected rule (the audit log). */
const signedIn = new WeakMap<Request, string>();
export function signedInUser(request: Request): string | undefined {
  return signedIn.get(request);
}

export interface AccessControlOptions {
  base: string;
  rules: readonly AccessRule[];
  /** Undefined when no token key is configured: nobody can hold a token, so protected requests get 401. */
  verifier: TokenVerifier | undefined;
}

export interface AccessControl {
  policy: AccessPolicy;
  middleware: MiddlewareHandler;
  /** Whether a GET of this exact path (below the base, canonical) is public: the fast path answers only those. */
  publicGet(pathBelowBaseCanonical: string): boolean;
}

/** A Cache-Control for one client: `public` and `s-maxage` taken out, `private` put in. */
export function privateOf(cacheControl: string): string {
  const kept = cacheControl.split(",").map((directive) => directive.trim()).filter((directive) => directive && !/^(public|s-maxage\s*=.*)$/i.test(directive));
  return ["private", ...kept].join(", ");
}

export function createAccessControl(options: AccessControlOptions): AccessControl {
  const policy = createAccessPolicy(options.rules);
  const { base, verifier } = options;
  const middleware: MiddlewareHandler = async (c, next) => {
    const url = c.req.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const queryAt = url.indexOf("?", pathStart);
    const rawPath = pathStart < 0 ? "/" : url.slice(pathStart, queryAt < 0 ? undefined : queryAt);
    const below = pathBelowBase(rawPath, base);
    if (below.kind === "outside") return next();
    if (below.kind === "malformed") return problemResponse(400, `the path cannot be read: ${below.reason}`);
    const decision = policy.decide(c.req.method, below.path);
    if (decision.kind === "public") return next();
    if (decision.kind === "malformed") return problemResponse(400, "the path cannot be read");
    if (!verifier) {
      return problemResponse(401, "this address needs a signed-in operator, and sign-in is not configured on this service", { "www-authenticate": wwwAuthenticate(REALM) });
    }
    const checked = await verifier.verify(c.req.header("authorization"));
    if (!checked.ok) {
      return problemResponse(checked.status, `${checked.description}; get a token from ${base}/token`, { "www-authenticate": wwwAuthenticate(REALM, checked) });
    }
    if (decision.role !== undefined && !checked.roles.includes(decision.role)) {
      return problemResponse(403, `this address needs the role ${decision.role}, which ${checked.subject} does not have`);
    }
    signedIn.set(c.req.raw, checked.subject);
    await next();
    // An answer behind sign-in is for the one who signed in: no shared cache may keep it (RFC 9111 §5.2.2.7),
    // whatever lifetime the route gives its public answers, and a browser's own cache gives it only to a request
    // with the same credentials (Vary: Authorization), not to a later one without.
    const cacheControl = c.res.headers.get("cache-control");
    if (cacheControl && !/\bno-store\b/i.test(cacheControl)) {
      c.res = new Response(c.res.body, c.res);
      if (!/\bprivate\b/i.test(cacheControl)) c.res.headers.set("cache-control", privateOf(cacheControl));
      const vary = c.res.headers.get("vary");
      if (!vary || !/\bauthorization\b/i.test(vary)) c.res.headers.set("vary", vary ? `${vary}, Authorization` : "Authorization");
    }
  };
  return { policy, middleware, publicGet: (path) => policy.decide("GET", path).kind === "public" };
}
