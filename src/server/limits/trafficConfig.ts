/**
 * The traffic settings (issue 6): throttling per route class, client identification, the block list and
 * the proxies trusted to say who the client is and whether it came over HTTPS. Read once at start from a
 * small JSON file (`config/traffic.json`, env ASHCAST_TRAFFIC_FILE; templates/traffic.json shows every
 * key), checked by zod; `ASHCAST_RATE_PER_SECOND` / `ASHCAST_RATE_BURST` override the data class, so an
 * operator or a benchmark changes the public limit without editing a file.
 */
import { z } from "zod";
import { readConfigJson } from "../../auth/configFile.ts";
import { UserError } from "../../errors.ts";
import { AddressEntry, AgentPattern } from "./listSchemas.ts";

export const TRAFFIC_FILE_FORMAT = 1;
export const ROUTE_CLASSES = ["data", "token", "operator", "route"] as const;
export type RouteClass = (typeof ROUTE_CLASSES)[number];

const Limit = z.strictObject({
  /** Sustained requests per second of one client (User-Agent and address). */
  ratePerSecond: z.number().positive().max(1_000_000),
  /** Requests a client may make at once before the rate applies. */
  burst: z.number().int().min(1).max(1_000_000),
});
export type Limit = z.infer<typeof Limit>;

export const TrafficFile = z.strictObject({
  format: z.literal(TRAFFIC_FILE_FORMAT),
  limits: z.strictObject({ data: Limit, token: Limit, operator: Limit, route: Limit }).partial().optional(),
  /** Clients tracked at once per instance; the least recently seen idle ones are dropped first. */
  maxTrackedClients: z.number().int().min(1000).max(10_000_000).optional(),
  /** User-Agents that identify nobody (e.g. "^curl/", "^python-requests/"): answered as a missing one. */
  genericUserAgents: z.array(AgentPattern).max(200).optional(),
  /** Peers whose forwarding headers are believed: addresses or CIDR ranges of your proxies / load balancers. */
  trustedProxies: z.array(AddressEntry).max(1000).optional(),
  /** How many trusted proxies stand in front of the service: the client is that many entries from the right. */
  proxyHops: z.number().int().min(1).max(10).optional(),
  /** The header your proxies write; the other one is ignored (a client could have sent it). */
  forwardedHeader: z.enum(["x-forwarded-for", "forwarded"]).optional(),
  /** The block list file (reloaded while running); config/blocklist.json by default, missing means empty. */
  blockList: z.string().min(1).optional(),
  blockListReloadSeconds: z.number().positive().max(3600).optional(),
  /** How long a request waits for Redis before this instance's own limiter decides. */
  redisTimeoutMs: z.number().int().min(1).max(10_000).optional(),
  /** Refusals (403, 429) are answered after this long (a 429 no later than its Retry-After): an abuser's connection then idles instead of costing a request each. 0: at once. */
  holdRefusalsMs: z.number().int().min(0).max(10_000).optional(),
});
export type TrafficFile = z.infer<typeof TrafficFile>;

/** Everything resolved: what startServer and the guard are given. */
export interface TrafficSettings {
  limits: Record<RouteClass, Limit>;
  maxTrackedClients: number;
  genericUserAgents: readonly string[];
  trustedProxies: readonly string[];
  proxyHops: number;
  forwardedHeader: "x-forwarded-for" | "forwarded";
  blockList: string;
  blockListReloadSeconds: number;
  redisTimeoutMs: number;
  holdRefusalsMs: number;
}

/**
 * Defaults for a public open-data service: 20 requests/s per client with bursts of 100 (a viewer loading
 * a run's images at once), sign-in slower (the per-account backoff is behind it), operators in between.
 */
export const DEFAULT_TRAFFIC: TrafficSettings = Object.freeze({
  // route: at its bounds a POST /route costs thousands of data requests (docs/benchmarks.md, "Point and route queries").
  limits: { data: { ratePerSecond: 20, burst: 100 }, token: { ratePerSecond: 1, burst: 10 }, operator: { ratePerSecond: 5, burst: 50 }, route: { ratePerSecond: 1, burst: 5 } },
  maxTrackedClients: 100_000,
  genericUserAgents: [],
  trustedProxies: [],
  proxyHops: 1,
  forwardedHeader: "x-forwarded-for",
  blockList: "config/blocklist.json",
  blockListReloadSeconds: 5,
  redisTimeoutMs: 100,
  holdRefusalsMs: 1000,
});

export const TRAFFIC_FILE_VARIABLE = "ASHCAST_TRAFFIC_FILE";
const DEFAULT_TRAFFIC_FILE = "config/traffic.json";

/** The file's settings over the defaults, then the environment's data-class overrides. */
export function resolveTraffic(file: TrafficFile | undefined, env: NodeJS.ProcessEnv = {}): TrafficSettings {
  const limits = { ...DEFAULT_TRAFFIC.limits, ...file?.limits };
  const rate = envNumber(env, "ASHCAST_RATE_PER_SECOND", (n) => n > 0 && n <= 1_000_000, "a number of requests per second above 0, e.g. 20");
  const burst = envNumber(env, "ASHCAST_RATE_BURST", (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000, "a whole number of requests from 1, e.g. 100");
  limits.data = { ratePerSecond: rate ?? limits.data.ratePerSecond, burst: burst ?? limits.data.burst };
  return {
    limits,
    maxTrackedClients: file?.maxTrackedClients ?? DEFAULT_TRAFFIC.maxTrackedClients,
    genericUserAgents: file?.genericUserAgents ?? DEFAULT_TRAFFIC.genericUserAgents,
    trustedProxies: file?.trustedProxies ?? DEFAULT_TRAFFIC.trustedProxies,
    proxyHops: file?.proxyHops ?? DEFAULT_TRAFFIC.proxyHops,
    forwardedHeader: file?.forwardedHeader ?? DEFAULT_TRAFFIC.forwardedHeader,
    blockList: file?.blockList ?? DEFAULT_TRAFFIC.blockList,
    blockListReloadSeconds: file?.blockListReloadSeconds ?? DEFAULT_TRAFFIC.blockListReloadSeconds,
    redisTimeoutMs: file?.redisTimeoutMs ?? DEFAULT_TRAFFIC.redisTimeoutMs,
    holdRefusalsMs: file?.holdRefusalsMs ?? DEFAULT_TRAFFIC.holdRefusalsMs,
  };
}

function envNumber(env: NodeJS.ProcessEnv, name: string, valid: (n: number) => boolean, expected: string): number | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === "") return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || !valid(value)) throw new UserError(`"${text}" is not a valid value`, { where: name, fix: `set it to ${expected}, or unset it to use the traffic file's value` });
  return value;
}

/** Checks parsed JSON as a traffic file; errors name the file, the key and the fix. */
export function parseTrafficFile(json: unknown, where: string): TrafficFile {
  const parsed = TrafficFile.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const keys = issue.code === "unrecognized_keys" ? [...issue.path, ...issue.keys] : issue.path;
  const key = keys.map(String).join(".") || "(top level)";
  throw new UserError(`${key}: ${issue.code === "unrecognized_keys" ? "is not a traffic setting" : issue.message}`, {
    where,
    fix: "see templates/traffic.json for every key and its form (rates per second above 0, whole bursts from 1, proxies as addresses or CIDR ranges)",
  });
}

/**
 * The traffic settings for `serve` / `start`: the given file (which must exist), else config/traffic.json
 * when it exists, else the defaults; the environment's overrides on top.
 */
export async function loadTraffic(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<TrafficSettings> {
  const chosen = file ?? env[TRAFFIC_FILE_VARIABLE] ?? DEFAULT_TRAFFIC_FILE;
  const json = await readConfigJson(chosen, {
    what: "traffic settings file",
    maxBytes: 1024 * 1024,
    sizeFix: "check that this is the traffic settings file (templates/traffic.json shows one)",
    readFix: "check the path and that the service's account may read it",
    syntaxFix: "fix the JSON syntax (templates/traffic.json is a valid example)",
    ...(file ?? env[TRAFFIC_FILE_VARIABLE] ? { missingFix: "give the path of an existing file (copy templates/traffic.json), or none to use the defaults" } : {}),
  });
  return resolveTraffic(json === undefined ? undefined : parseTrafficFile(json, chosen), env);
}
