/**
 * Throttle state in Redis (`REDIS_URL`), so that every instance behind a load balancer enforces one limit
 * per client. The GCRA step runs in Redis as one Lua script (atomic; the clock is Redis's `TIME`, so
 * instances with skewed clocks still agree), loaded once and called by its SHA (EVALSHA); keys expire when
 * they become idle, so Redis holds only active clients.
 *
 * When Redis is unreachable, slow (over `timeoutMs`) or failing, this instance's own bounded in-memory
 * limiter decides instead: the service stays up and every client stays limited, per instance, until Redis
 * is back. Each change of state is logged once (docs/decisions.md, "Limits and transport").
 */
import { createClient } from "@redis/client";
import { createHash } from "node:crypto";
import type { MemoryStore, Rate, ThrottleStore } from "./gcra.ts";

const KEY_PREFIX = "ashcast:throttle:";

/** KEYS[1] the client's key; ARGV[1] the interval in ms, ARGV[2] the burst. Returns 0 (counted) or the ms to wait. */
const GCRA_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local nextTat = tat + interval
local excess = nextTat - now - interval * tonumber(ARGV[2])
if excess > 0.001 then return math.ceil(excess) end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.max(1, math.ceil(nextTat - now)))
return 0
`;
const GCRA_SHA = createHash("sha1").update(GCRA_SCRIPT).digest("hex");

export interface RedisStoreOptions {
  url: string;
  timeoutMs: number;
  /** Decides while Redis cannot. */
  fallback: MemoryStore;
  log: (line: string) => void;
}

/** Where the URL's password would show, only scheme, host and port are logged. */
const redactedUrl = (url: string) => {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "(an invalid REDIS_URL)";
  }
};

export function createRedisStore(options: RedisStoreOptions): ThrottleStore & { readonly shared: boolean } {
  const { fallback, log, timeoutMs } = options;
  const where = redactedUrl(options.url);
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    socket: { connectTimeout: Math.max(timeoutMs * 10, 1000), reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 5), 2000) },
  });
  let shared = false;
  /** Whether the instance has said it limits on its own; each change of state is logged once. */
  let local = false;
  let closing = false;
  /** How long after a failed command Redis is tried again, and since when it has been shared (degradeAfterCommand). */
  let retryMs = 500;
  let sharedSince = 0;
  let retrying = false;
  const degrade = (why: string) => {
    if (local || closing) return;
    log(
      shared
        ? `throttle: Redis at ${where} is not answering (${why}); each instance limits clients on its own until it is back`
        : `throttle: cannot reach Redis at ${where} (${why}); each instance limits clients on its own until it is back`,
    );
    shared = false;
    local = true;
  };
  const share = (again: string) => {
    if (shared || closing) return;
    shared = true;
    local = false;
    log(`throttle: limits are shared through Redis at ${where}${again}`);
  };
  client.on("error", (error: Error) => degrade(error.message || String(error)));
  client.on("ready", () => share(""));
  client.on("end", () => degrade("connection closed"));
  // A failed first connection keeps retrying (reconnectStrategy); its errors come through "error".
  client.connect().catch((error: Error) => degrade(error.message));

  async function inRedis(key: string, rate: Rate): Promise<number> {
    const args = { keys: [KEY_PREFIX + key], arguments: [String(rate.intervalMs), String(rate.burst)] };
    let reply: unknown;
    try {
      reply = await client.evalSha(GCRA_SHA, args);
    } catch (error) {
      if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
      reply = await client.eval(GCRA_SCRIPT, args); // loads it: the next EVALSHA finds it
    }
    if (typeof reply !== "number") throw new Error(`Internal error: the throttle script answered ${JSON.stringify(reply)}`);
    return reply;
  }

  return {
    get shared() {
      return shared;
    },
    get size() {
      return fallback.size;
    },
    take(key, rate) {
      if (!shared) return fallback.take(key, rate);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      return Promise.race([inRedis(key, rate), timeout]).then(
        (wait) => {
          clearTimeout(timer);
          return wait;
        },
        (error: Error) => {
          clearTimeout(timer);
          degradeAfterCommand(error);
          return fallback.take(key, rate);
        },
      );
    },
    async close() {
      closing = true;
      await client.close().catch(() => client.destroy());
      await fallback.close();
    },
  };

  /**
   * A failed command on a connection that still looks ready: fall back, and look again shortly (one slow answer
   * is no outage), then at doubling intervals up to a minute while commands keep failing (a slow or full Redis
   * made the log switch twice a second); a minute of sharing without a failure starts again from a second.
   */
  function degradeAfterCommand(error: Error): void {
    if (!local) retryMs = Date.now() - sharedSince > 60_000 ? 1000 : Math.min(60_000, retryMs * 2);
    degrade(error.message);
    if (!client.isReady || closing || retrying) return;
    retrying = true;
    setTimeout(() => {
      retrying = false;
      if (client.isReady) {
        share(" again");
        sharedSince = Date.now();
      }
    }, retryMs).unref();
  }
}
