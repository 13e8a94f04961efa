/**
 * A release's run list in content-addressed chunks (dist/index/, read back by readReleaseIndex.ts): a
 * bucket of reftimes per chunk, so a release after a change to one run writes one chunk of ~16 entries
 * instead of the list of every run.
 */
import type { IndexChunk, ReleaseIndex } from "../contract/releaseIndex.ts";
import { bucketOf, chunkName } from "../formats/contentChunks.ts";
import { recordJson } from "../formats/memoJson.ts";

export interface EncodedChunk {
  name: string;
  text: string;
}

/** The chunks of `runs`, in bucket order. */
export function encodeIndexRuns(runs: ReleaseIndex["runs"]): EncodedChunk[] {
  const buckets = new Map<number, string[]>();
  for (const reftime of Object.keys(runs)) {
    const bucket = bucketOf(reftime);
    const members = buckets.get(bucket);
    if (members) members.push(reftime);
    else buckets.set(bucket, [reftime]);
  }
  return [...buckets.entries()].sort(([a], [b]) => a - b).map(([bucket, reftimes]) => chunkOf(bucket, reftimes, runs));
}

/** The last chunk made for each bucket: reused while its reftimes and entries are the same objects. */
const lastChunks = new Map<number, EncodedChunk & { members: unknown[] }>();

function chunkOf(bucket: number, reftimes: readonly string[], runs: ReleaseIndex["runs"]): EncodedChunk {
  const members: unknown[] = [];
  for (const reftime of reftimes) members.push(reftime, runs[reftime]);
  const last = lastChunks.get(bucket);
  if (last && last.members.length === members.length && last.members.every((member, i) => member === members[i])) return last;
  const chunkRuns: IndexChunk["runs"] = {};
  for (const reftime of reftimes) chunkRuns[reftime] = runs[reftime]!;
  const text = `{"runs":${recordJson(chunkRuns)}}\n`;
  const chunk = { members, name: chunkName(text), text };
  lastChunks.set(bucket, chunk);
  return chunk;
}
