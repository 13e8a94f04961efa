/**
 * Long records split into content-addressed chunks: a key goes to one of CHUNK_BUCKETS buckets by a hash
 * of the key, and a chunk file is named by a hash of its text. Releases then share every chunk whose
 * entries did not change, so a change to one entry of 1,000 writes one small file.
 */
import { createHash } from "node:crypto";

/** With 1,000 entries a chunk holds about 16; with 10, one each. */
export const CHUNK_BUCKETS = 64;

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
