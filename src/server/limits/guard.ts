/**
 * The traffic guard in front of everything the server answers (the fast path and the Hono app): block
 * list (403), identification (429 without a User-Agent), then the throttle per route class (429). Built
 * once at start; per request it reads three headers, classifies the path and makes one store step, and
 * answers refusals straight on node:http with the service's problem+json body, never cacheable.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pathBelowBase, type AccessPolicy } from "../../auth/accessRules.ts";
import { problemJson, writeProblem } from "../problem.ts";
import { anyOf, matchedAgent } from "./listSchemas.ts";
import type { BlockList } from "./blockList.ts";
import type { ClientResolver } from "./clientAddress.ts";
import { rateOf, type Rate, type ThrottleStore } from "./gcra.ts";
import { ROUTE_CLASSES, type RouteClass, type TrafficSettings } from "./trafficConfig.ts";

/** true: the guard answered the request (or will: refusals are held); false: pass it on. A promise only when the store is remote (Redis). */
export type GuardVerdict = boolean | Promise<boolean>;
export type TrafficGuard = ((req: IncomingMessage, res: ServerResponse) => GuardVerdict) & {
  /** Refusals being held right now. */
  readonly holding: number;
};

/**
 * Refusals held at once, at most: beyond that they are answered at once. Each holds a timer and a
 * response object on a connection that exists anyway; this bounds them whatever the number of connections.
 */
const MAX_HELD = 10_000;

export interface GuardOptions {
  base: string;
  settings: Pick<TrafficSettings, "limits" | "genericUserAgents" | "holdRefusalsMs">;
  /** The access rules: a request they protect is of the operator class, whatever its spelling. */
  policy: AccessPolicy;
  store: ThrottleStore;
  blockList: Pick<BlockList, "blocks">;
  client: Pick<ClientResolver, "address">;
}

/** Part of the User-Agent (or browser origin) that goes into a client's key: bounds the memory per key. */
const KEY_AGENT_CHARS = 200;
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
/** Public GETs recognised without normalising the path (the hot routes). */
const HOT_DATA_PATHS = ["/", "/.json", "/.png", "/reftimes", "/resources", "/changelog", "/healthz", "/point"];
const CORS = { "access-control-allow-origin": "*", "access-control-expose-headers": "Retry-After, RateLimit, RateLimit-Policy" } as const;

export function createTrafficGuard(options: GuardOptions): TrafficGuard {
  const { base, policy, store, blockList, client } = options;
  const rates = Object.fromEntries(ROUTE_CLASSES.map((name) => [name, rateOf(options.settings.limits[name])])) as Record<RouteClass, Rate>;
  // RateLimit-Policy (IETF draft): quota `q` = the burst, window `w` = the seconds in which it refills.
  const policyHeaders = Object.fromEntries(
    ROUTE_CLASSES.map((name) => [name, `"${name}";q=${rates[name].burst};w=${Math.max(1, Math.ceil((rates[name].burst * rates[name].intervalMs) / 1000))}`]),
  ) as Record<RouteClass, string>;
  const generic = anyOf(options.settings.genericUserAgents);
  const hotData = new Set(HOT_DATA_PATHS.filter((path) => policy.decide("GET", path).kind === "public").map((path) => `${base}${path}`));
  const terms = `${base}/doc/TermsOfService`;
  const unidentifiedBody = problemJson(
    429,
    `identify your client: send a User-Agent header naming your application and how to reach you, e.g. "User-Agent: myapp/1.2 you@example.org"; the terms of service at ${terms} say why`,
  );
  const unidentifiedHeaders = { "retry-after": "60", link: `<${terms}>; rel="terms-of-service"`, ...CORS };
  const blockedBody = problemJson(403, "access is refused");

  function classify(method: string, url: string): RouteClass {
    // A CORS preflight costs what a data request does, whatever it asks about (it used /route's own allowance).
    if (method === "OPTIONS") return "data";
    const queryAt = url.indexOf("?");
    const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
    if ((method === "GET" || method === "HEAD") && hotData.has(rawPath)) return "data";
    const below = pathBelowBase(rawPath, base);
    if (below.kind !== "below") return "data"; // outside the product (404) or unreadable (400): public answers
    if (below.path === "/token" || below.path === "/login") return "token";
    if (below.path === "/route") return "route"; // far dearer than a data request: a class of its own
    return policy.decide(method, below.path).kind === "protected" ? "operator" : "data";
  }

  const holdMs = options.settings.holdRefusalsMs;
  let held = 0;
  /**
   * Writes a refusal, after `holdMs` (no later than `atMostMs`). A client answered at once comes back at
   * once: a keep-alive connection of an abuser then costs a full request cycle per refusal, and the
   * well-behaved clients wait behind them. Held, the connection sits idle (HTTP/1.1 answers in order).
   */
  function refuse(res: ServerResponse, req: IncomingMessage, status: number, answerAfter: (heldMs: number) => { body: string; headers: Record<string, string> }, atMostMs = Infinity): true {
    const delay = held >= MAX_HELD ? 0 : Math.max(0, Math.min(holdMs, atMostMs));
    // Made knowing the hold: a throttled answer says how long to wait from when it is written, not decided.
    const answer = answerAfter(delay);
    const write = () => {
      if (!res.destroyed && !res.writableEnded) writeProblem(req, res, status, answer.body, answer.headers);
    };
    if (delay <= 0) {
      write();
      return true;
    }
    held++;
    const release = () => {
      clearTimeout(timer);
      res.off("close", release);
      held--;
    };
    const timer = setTimeout(() => {
      release();
      write();
    }, delay);
    // A client that goes away frees its place at once.
    res.once("close", release);
    return true;
  }

  function throttled(req: IncomingMessage, res: ServerResponse, routeClass: RouteClass, waitMs: number): true {
    const rate = rates[routeClass];
    const perSecond = Number((1000 / rate.intervalMs).toPrecision(6));
    return refuse(
      res,
      req,
      429,
      (heldMs) => {
        const seconds = Math.max(0, Math.ceil((waitMs - heldMs) / 1000));
        return {
          body: problemJson(429, `too many requests: a client may make ${perSecond} request(s) per second here, in bursts of up to ${rate.burst}; retry after ${seconds} s (terms of service: ${terms})`),
          headers: { "retry-after": String(seconds), "ratelimit-policy": policyHeaders[routeClass], ratelimit: `"${routeClass}";r=0;t=${seconds}`, ...CORS },
        };
      },
      waitMs,
    );
  }

  function trafficGuard(req: IncomingMessage, res: ServerResponse): GuardVerdict {
    const agent = req.headers["user-agent"];
    const address = client.address(req);
    if (blockList.blocks(address, agent)) return refuse(res, req, 403, () => ({ body: blockedBody, headers: {} }));
    let identity = agent;
    if (agent === undefined || agent.trim() === "" || (generic !== undefined && generic.test(matchedAgent(agent)))) {
      // A browser page is identified by its origin (the API family accepts Origin or Referer).
      const page = req.headers.origin || req.headers.referer;
      const origin = page ? ORIGIN.exec(page)?.[0] : undefined;
      if (!origin) return refuse(res, req, 429, () => ({ body: unidentifiedBody, headers: unidentifiedHeaders }));
      identity = origin;
    }
    const routeClass = classify(req.method ?? "GET", req.url ?? "/");
    const key = `${routeClass}\n${address}\n${identity!.length > KEY_AGENT_CHARS ? identity!.slice(0, KEY_AGENT_CHARS) : identity}`;
    const wait = store.take(key, rates[routeClass]);
    if (typeof wait === "number") return wait === 0 ? false : throttled(req, res, routeClass, wait);
    return wait.then((ms) => (ms === 0 ? false : throttled(req, res, routeClass, ms)));
  }
  return Object.defineProperty(trafficGuard, "holding", { get: () => held }) as TrafficGuard;
}
