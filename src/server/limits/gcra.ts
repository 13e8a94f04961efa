/**
 * GCRA (the generic cell rate algorithm): per key, one number, the theoretical arrival time (TAT) of the
 * next request. A request at `now` is allowed when `max(TAT, now) + interval - now <= interval * burst`,
 * and then the TAT moves on by one interval; otherwise it waits the excess. Same limits as a token bucket
 * of `burst` tokens refilled at `1/interval`, with one number per client and no timer.
 */

/** A limit in the form the stores use. */
export interface Rate {
  /** Milliseconds between requests at the sustained rate (1000 / requests per second). */
  intervalMs: number;
  burst: number;
}

export const rateOf = (limit: { ratePerSecond: number; burst: number }): Rate => ({ intervalMs: 1000 / limit.ratePerSecond, burst: limit.burst });

/**
 * Where the TATs live. `take` answers 0 when the request is allowed (and counted), otherwise the
 * milliseconds until it would be (nothing is stored for a refused request).
 */
export interface ThrottleStore {
  take(key: string, rate: Rate): number | Promise<number>;
  /** Keys held now (for tests and GET /config). */
  readonly size: number;
  close(): Promise<void>;
}

/**
 * The in-memory store of one instance, bounded: at most `maxKeys` clients, in two generations of Maps
 * of at most half that each. A key is looked up in the current generation, then in the previous one (and
 * moved to the current one when its client shows up, allowed or refused); when the current generation
 * is full it becomes the previous one and the old previous one is dropped whole. So a client seen
 * within the last generation keeps its state, the keys dropped are those not seen for a whole generation
 * (under a flood, the flood's own one-off keys), and every step is O(1): no scan, no timer. (Deleting
 * from the front of one Map and iterating it again is quadratic in V8: deleted entries stay as holes.)
 */
/** Rounding of the sums of times, not lateness: at most this much past the limit is within it (also in the Redis script). */
export const EXCESS_TOLERANCE_MS = 0.001;

export class MemoryStore implements ThrottleStore {
  #current = new Map<string, number>();
  #previous = new Map<string, number>();
  readonly #generation: number;
  readonly #now: () => number;

  constructor(options: { maxKeys: number; now?: () => number }) {
    if (!Number.isInteger(options.maxKeys) || options.maxKeys < 2) throw new Error(`MemoryStore: maxKeys must be a whole number from 2, not ${options.maxKeys}`);
    this.#generation = Math.floor(options.maxKeys / 2);
    this.#now = options.now ?? performance.now.bind(performance);
  }

  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  take(key: string, rate: Rate): number {
    const now = this.#now();
    let tat = this.#current.get(key);
    let promote = false;
    if (tat === undefined) {
      tat = this.#previous.get(key);
      if (tat !== undefined) {
        this.#previous.delete(key);
        promote = true;
      }
    }
    const next = (tat === undefined || tat < now ? now : tat) + rate.intervalMs;
    const excess = next - now - rate.intervalMs * rate.burst;
    // Within a microsecond is on time: the sums above round (1000 / 7 ms added to a clock of 1e6 ms).
    if (excess > EXCESS_TOLERANCE_MS) {
      if (promote) this.#put(key, tat!); // still limited, and seen: keep it
      return excess;
    }
    this.#put(key, next);
    return 0;
  }

  #put(key: string, tat: number): void {
    if (this.#current.size >= this.#generation && !this.#current.has(key)) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, tat);
  }

  close(): Promise<void> {
    this.#current.clear();
    this.#previous.clear();
    return Promise.resolve();
  }
}
