/**
 * How long an answer may be reused, by whom, and what it depends on (its cache tags): one frozen object
 * per kind of answer and run, made once and reused, so the representation's prepared headers are found
 * by identity and nothing is formatted per request.
 */
import { NOTHING_PUBLISHED_TAGS, resourceTag, runTag, TAG } from "../contract/cacheTags.ts";
import { CACHE_SECONDS } from "./select.ts";

export interface CachePolicy {
  /** max-age: browsers and every cache. */
  readonly seconds: number;
  /** s-maxage: shared caches, which the publisher purges by tag; undefined where no publish purges. */
  readonly sharedSeconds: number | undefined;
  /** Space-separated cache tags (`xkey`, `Surrogate-Key`). */
  readonly tags: string;
  /** `Vary: Accept` (only `/`, when the run has a PNG to negotiate). */
  readonly varyAccept: boolean;
}

/**
 * Shared caches keep what a publish purges ten times as long as browsers do: a purge makes them current at
 * once, and a lost purge leaves them behind for at most 10 min (latest, lists) or 50 min (pinned runs).
 */
export const SHARED_LIFETIME_FACTOR = 10;

/** Memoised policies kept per run or name; far more than a release's hot set, cleared when full. */
const MAX_REMEMBERED = 4096;

const policy = (seconds: number, tags: string, purged: boolean, varyAccept = false): CachePolicy =>
  Object.freeze({ seconds, sharedSeconds: purged ? seconds * SHARED_LIFETIME_FACTOR : undefined, tags, varyAccept });

export class CachePolicies {
  readonly reftimes = policy(CACHE_SECONDS.lists, TAG.reftimes, true);
  readonly changelog = policy(CACHE_SECONDS.lists, TAG.changelog, true);
  readonly viewerPage = policy(CACHE_SECONDS.lists, TAG.viewer, true);
  /** Named by their content hash: never change, nothing to purge. */
  readonly viewerAsset = policy(CACHE_SECONDS.viewerAssets, TAG.viewer, false);
  /** Made at start (or by an operator's POST /config), so not purged by a publish: the browser lifetime for all. */
  readonly document = policy(CACHE_SECONDS.documents, TAG.documents, false);
  /** GET /config: an operator's POST /config changes it at any time, with no publish to purge it: revalidated on every use. */
  readonly config = policy(0, TAG.documents, false);
  readonly nothingPublished = policy(CACHE_SECONDS.latest, NOTHING_PUBLISHED_TAGS, true);
  /** Per reftime: [latest, latest varying on Accept, pinned, pinned varying on Accept]. */
  readonly #models = new Map<string, readonly CachePolicy[]>();
  readonly #resources = new Map<string, CachePolicy>();
  /** Per reftime ("" for none): [latest, pinned]. */
  readonly #resourceNames = new Map<string, readonly CachePolicy[]>();

  /** `/`, `/.json`, `/.png`: the latest run (tagged latest too) or one pinned by `reftime`. */
  model(reftime: string, pinned: boolean, varyAccept: boolean): CachePolicy {
    const four = remember(this.#models, reftime, () => {
      const latest = `${TAG.latest} ${runTag(reftime)}`;
      return [policy(CACHE_SECONDS.latest, latest, true), policy(CACHE_SECONDS.latest, latest, true, true), policy(CACHE_SECONDS.pinned, runTag(reftime), true), policy(CACHE_SECONDS.pinned, runTag(reftime), true, true)];
    });
    return four[(pinned ? 2 : 0) + (varyAccept ? 1 : 0)]!;
  }

  /** `/resources?name=`: a shared resource of the release, or one of a run (its reftime given). */
  resource(name: string, reftime: string | undefined): CachePolicy {
    return remember(this.#resources, name, () => policy(CACHE_SECONDS.resources, reftime === undefined ? resourceTag(name) : `${runTag(reftime)} ${resourceTag(name)}`, true));
  }

  /** `/resources` without name: the shared names and those of one run (the latest unless pinned). */
  resourceNames(reftime: string | undefined, pinned: boolean): CachePolicy {
    const two = remember(this.#resourceNames, reftime ?? "", () => {
      const run = reftime === undefined ? [] : [runTag(reftime)];
      return [policy(CACHE_SECONDS.lists, [TAG.resources, TAG.latest, ...run].join(" "), true), policy(CACHE_SECONDS.lists, [TAG.resources, ...run].join(" "), true)];
    });
    return two[pinned ? 1 : 0]!;
  }
}

function remember<T>(memo: Map<string, T>, key: string, make: () => T): T {
  let found = memo.get(key);
  if (found === undefined) {
    if (memo.size >= MAX_REMEMBERED) memo.clear();
    memo.set(key, (found = make()));
  }
  return found;
}

/** The Cache-Control value of a policy. */
export const cacheControl = (p: CachePolicy): string => `public, max-age=${p.seconds}${p.sharedSeconds === undefined ? "" : `, s-maxage=${p.sharedSeconds}`}`;

/**
 * Redirects (to the address with its slash, to https) depend only on ashcast's own addresses (its code and
 * --prefix): kept as long as the documents and tagged as them, so a shared cache neither keeps them for its
 * own default lifetime nor without a tag to purge. Tag header names as representation.ts sends them.
 */
export const REDIRECT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": `public, max-age=${CACHE_SECONDS.documents}`,
  xkey: TAG.documents,
  "surrogate-key": TAG.documents,
});
