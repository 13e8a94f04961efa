/**
 * Tells shared caches what a publish changed: for each configured cache, one HTTP `PURGE` per batch of
 * cache tags (Varnish's vmod xkey: the tags in the `xkey` header). In the background, with bounded retries
 * and backoff: a cache that is down never delays, blocks or undoes a publish; each failure is logged and
 * kept for operators (`GET /datasets`). The cache decides who may purge (deploy/varnish: an address
 * allowlist); nothing secret is sent.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { CachePurge } from "../contract/cachePurges.ts";
import { UserError } from "../errors.ts";

export interface PurgerOptions {
  /** Purge addresses of the caches, e.g. `http://127.0.0.1:6081/`. */
  urls: readonly string[];
  log?: (line: string) => void;
  /** Attempts per cache and batch (the first included). */
  attempts?: number;
  /** Wait before the second attempt; doubled before each next one. */
  backoffMs?: number;
  /** How long one attempt may take. */
  timeoutMs?: number;
  /**
   * The purge is sent again these long after the first (each from the first's delivery): servers switch to
   * a new release a few milliseconds after it is published (later on a slow volume, where they poll every
   * second), and a request the cache sends them meanwhile stores the old answer again. The first repeat
   * clears what that race stored within a fraction of a second, the last what a slow volume did. []: once.
   */
  repeatsAfterMs?: readonly number[];
  /** Called whenever a purge's record changes (the watch worker forwards them to the server). */
  onChange?: (records: readonly CachePurge[]) => void;
}

export interface CachePurger {
  /** Queues the purge of `tags` (changed by publishing `release`) at every cache; returns at once. */
  purge(release: string, tags: readonly string[]): void;
  /** The recent purges, newest first. */
  records(): readonly CachePurge[];
  /** Resolves when no purge is sending (for `ashcast build`, which exits after publishing). */
  settled(): Promise<void>;
}

/** Varnish refuses request headers over 8 KiB by default: tags go in batches well below that. */
const MAX_TAG_BYTES = 4000;
const KEPT_RECORDS = 50;

/** The purge addresses from `--purge` (repeatable) and ASHCAST_PURGE_URLS (spaces or commas), checked. */
export function resolvePurgeUrls(flags: readonly string[] | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = (env.ASHCAST_PURGE_URLS ?? "").split(/[\s,]+/).filter(Boolean);
  const urls = [...(flags ?? []), ...fromEnv];
  for (const url of urls) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (parsed === undefined || !["http:", "https:"].includes(parsed.protocol)) {
      throw new UserError(`"${url}" is not a cache's purge address`, { where: (flags ?? []).includes(url) ? "--purge" : "ASHCAST_PURGE_URLS", fix: "give an http(s) URL of the cache, e.g. --purge http://127.0.0.1:6081/" });
    }
  }
  return [...new Set(urls)];
}

/** Splits tags into header values of at most MAX_TAG_BYTES. */
export function tagBatches(tags: readonly string[]): string[] {
  const batches: string[] = [];
  let current = "";
  for (const tag of tags) {
    if (current && current.length + 1 + tag.length > MAX_TAG_BYTES) {
      batches.push(current);
      current = "";
    }
    current = current ? `${current} ${tag}` : tag;
  }
  if (current) batches.push(current);
  return batches;
}

export function createPurger(options: PurgerOptions): CachePurger {
  const attempts = options.attempts ?? 5;
  const backoffMs = options.backoffMs ?? 250;
  const timeoutMs = options.timeoutMs ?? 2000;
  const repeatsAfterMs = options.repeatsAfterMs ?? [250, 2000];
  const log = options.log ?? (() => {});
  if (!Number.isInteger(attempts) || attempts < 1) throw new Error(`createPurger: attempts must be a whole number of at least 1, not ${attempts}`);
  const targets = options.urls.map((url) => ({ url: new URL(url), shown: shownUrl(url) }));
  const records: CachePurge[] = [];
  const sending = new Set<Promise<void>>();

  const changed = () => options.onChange?.(records.slice());

  async function send(target: (typeof targets)[number], record: CachePurge): Promise<void> {
    if (!(await sendOnce(target, record))) return;
    const delivered = Date.now();
    for (const after of repeatsAfterMs) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, delivered + after - Date.now())));
      if (!(await sendOnce(target, record))) return;
    }
    record.state = "done";
    record.retriesLeft = 0;
    delete record.error;
    changed();
  }

  /** Every batch, each retried; false (the record failed) when one is never accepted. */
  async function sendOnce(target: (typeof targets)[number], record: CachePurge): Promise<boolean> {
    for (const batch of tagBatches(record.tags)) {
      for (let attempt = 1; ; attempt++) {
        record.attempts++;
        const error = await purgeOnce(target.url, batch, timeoutMs);
        record.at = new Date().toISOString();
        if (error === undefined) break;
        record.error = error;
        record.retriesLeft = attempts - attempt;
        if (attempt >= attempts) {
          record.state = "failed";
          log(`cache purge failed: ${target.shown} did not purge ${record.tags.length} tag(s) of release ${record.release} after ${attempt} attempts (${error}); it serves the old answers until their s-maxage runs out`);
          changed();
          return false;
        }
        changed();
        await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 1)));
      }
      // Delivered: the next batch, and the repeat, have their own attempts.
      record.retriesLeft = attempts - 1;
      changed();
    }
    return true;
  }

  return {
    purge(release, tags) {
      if (tags.length === 0 || targets.length === 0) return;
      for (const target of targets) {
        const record: CachePurge = { release, cache: target.shown, tags: [...tags], state: "sending", attempts: 0, retriesLeft: attempts - 1, at: new Date().toISOString() };
        records.unshift(record);
        records.length = Math.min(records.length, KEPT_RECORDS);
        const done = send(target, record).catch((error: unknown) => log(`Internal error while purging ${target.shown}: ${(error as Error).stack ?? String(error)}`));
        sending.add(done);
        void done.finally(() => sending.delete(done));
      }
      changed();
    },
    records: () => records,
    async settled() {
      while (sending.size) await Promise.all(sending);
    },
  };
}

/** One PURGE; undefined when the cache answered 2xx, else what went wrong. */
function purgeOnce(url: URL, tags: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = request(url, { method: "PURGE", headers: { xkey: tags, "user-agent": "ashcast-purge" }, timeout: timeoutMs, agent: false }, (res: IncomingMessage) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 300 ? undefined : `answered ${status} ${res.statusMessage ?? ""}`.trim());
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (error) => resolve(error.message));
    req.end();
  });
}

/** The address without user name or password, for logs and /datasets. */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}
