/**
 * A least-recently-used map of Buffers bounded by their total size, so memory stays flat however many
 * runs are published. Map iteration order is insertion order: re-inserting on use keeps the oldest first.
 */
export class ByteLru {
  readonly #entries = new Map<string, Buffer>();
  #lastKey: string | undefined;
  #bytes = 0;

  readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    if (!(maxBytes > 0)) throw new Error(`ByteLru: maxBytes must be positive, got ${maxBytes}`);
  }

  get(key: string): Buffer | undefined {
    const value = this.#entries.get(key);
    // Re-inserted on use, unless it is the last key used (a hot body asked for again and again).
    if (value !== undefined && key !== this.#lastKey) {
      this.#lastKey = key;
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Buffer): void {
    const old = this.#entries.get(key);
    if (old) {
      this.#bytes -= old.length;
      this.#entries.delete(key);
    }
    if (key === this.#lastKey) this.#lastKey = undefined;
    if (value.length > this.maxBytes) return; // larger than the whole budget: served from disk each time
    this.#entries.set(key, value);
    this.#lastKey = key; // the newest entry is the last one
    this.#bytes += value.length;
    for (const [oldest, buffer] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= buffer.length;
    }
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}
