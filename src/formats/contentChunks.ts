/**
 * Long records split into content-addressed chunks: a key goes to one of CHUNK_BUCKETS buckets by a hash
 * of the key, and a chunk file is named by a hash of its text. Releases then share every chunk whose
 * entries did not change, so a change to one entry of 1,000 writes one small file.
 */
import { createHash } from "node:crypto";

/** With 1,000 entries a chunk holds about 16; with 10, one each. */
export const CHUNK_BUCKETS = 64;

export interface Chunk {
  /** The first 128 bits of the sha256 of the text, hex, and `.json`. */
  name: string;
  text: string;
}

/** A chunk's file name: the first 128 bits of the sha256 of its text. */
export function chunkName(text: string): string {
  return `${createHash("sha256").update(text).digest("hex").slice(0, 32)}.json`;
}

export const CHUNK_NAME_PATTERN = /^[0-9a-f]{32}\.json$/;

/** FNV-1a of the key: stable across versions and machines, so buckets (and chunks) stay put. */
export function bucketOf(key: string): number {
  let bucket = buckets.get(key);
  if (bucket === undefined) {
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    buckets.set(key, (bucket = (hash >>> 0) % CHUNK_BUCKETS));
  }
  return bucket;
}
const buckets = new Map<string, number>();

/**
 * Chunks of a record, with the last chunk made for each bucket kept and reused while its members are the
 * very same objects: a build that changed one entry of 1,000 makes one chunk and compares the others.
 */
export class ChunkMemo {
  readonly #last = new Map<number, Chunk & { members: readonly unknown[] }>();

  /**
   * The chunks of the record whose keys are `keys`, in bucket order. `membersOf` lists what a key's entry is
   * made of (objects kept by identity across builds); `textOf` writes the chunk of one bucket's keys.
   */
  encode(keys: Iterable<string>, membersOf: (key: string) => readonly unknown[], textOf: (keys: readonly string[]) => string): Chunk[] {
    const byBucket = new Map<number, string[]>();
    for (const key of keys) {
      const bucket = bucketOf(key);
      const list = byBucket.get(bucket);
      if (list) list.push(key);
      else byBucket.set(bucket, [key]);
    }
    return [...byBucket.entries()].sort(([a], [b]) => a - b).map(([bucket, bucketKeys]) => {
      const members: unknown[] = [];
      for (const key of bucketKeys) members.push(key, ...membersOf(key));
      const last = this.#last.get(bucket);
      if (last && last.members.length === members.length && last.members.every((member, i) => member === members[i])) return last;
      const text = textOf(bucketKeys);
      const chunk = { members, name: chunkName(text), text };
      this.#last.set(bucket, chunk);
      return chunk;
    });
  }

  /** Takes a chunk read back from disk as the last of its keys' bucket, with its members as they were read. */
  remember(keys: readonly string[], membersOf: (key: string) => readonly unknown[], chunk: Chunk): void {
    if (!keys.length) return;
    const members: unknown[] = [];
    for (const key of keys) members.push(key, ...membersOf(key));
    this.#last.set(bucketOf(keys[0]!), { ...chunk, members });
  }
}
