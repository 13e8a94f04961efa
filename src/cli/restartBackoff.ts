/**
 * When `serve --workers` starts a worker in place of one that stopped. A worker that stops before it
 * listened, or soon after it started, failed at start (a bad release, a full disk, a broken file): its
 * replacement would fail the same way, and replacing it at once would fork at full speed for ever. So
 * each such stop in a row doubles the wait before the next replacement, up to a ceiling, and past a
 * count it is called a crash loop. One backoff per worker slot: a replacement inherits its predecessor's.
 */

export const RESTART = {
  /** A worker that stops within this long of being forked failed at start. */
  quickMs: 10_000,
  /** The wait after the first such stop; doubled after each next one in a row. */
  firstDelayMs: 100,
  maxDelayMs: 30_000,
  /** Stops at start in a row from which it is a crash loop (100 ms … 0.8 s of waits before the fifth). */
  loopAfter: 5,
} as const;

export interface Restart {
  /** The wait before the replacement is forked. */
  delayMs: number;
  /** Stops at start in a row, this one included; 0 when the worker had served a while. */
  inRow: number;
  /** inRow has reached RESTART.loopAfter: the workers fail at start, not by chance. */
  crashLoop: boolean;
}

export interface RestartBackoff {
  /** A worker of this slot stopped: how long to wait before its replacement. */
  stopped(worker: { listened: boolean; livedMs: number }): Restart;
  /** A worker of this slot has served RESTART.quickMs: the next stop is replaced at once. True when that ends a crash loop. */
  served(): boolean;
}

/**
 * @example const slot = restartBackoff(); slot.stopped({ listened: false, livedMs: 300 }).delayMs // 100
 */
export function restartBackoff(policy: typeof RESTART = RESTART): RestartBackoff {
  let inRow = 0;
  return {
    stopped({ listened, livedMs }) {
      inRow = !listened || livedMs < policy.quickMs ? inRow + 1 : 0;
      return {
        delayMs: inRow === 0 ? 0 : Math.min(policy.firstDelayMs * 2 ** (inRow - 1), policy.maxDelayMs),
        inRow,
        crashLoop: inRow >= policy.loopAfter,
      };
    },
    served() {
      const ended = inRow >= policy.loopAfter;
      inRow = 0;
      return ended;
    },
  };
}

/** `0.1 s`, `1.6 s`, `30 s`: the waits as the log says them. */
export const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;
