/**
 * A release's run list in content-addressed chunks (dist/index/, read back by readReleaseIndex.ts): a
 * bucket of reftimes per chunk, so a release after a change to one run writes one chunk of ~16 entries
 * instead of the list of every run.
 */
import type { IndexChunk, ReleaseIndex } from "../contract/releaseIndex.ts";
import { ChunkMemo, type Chunk } from "../formats/contentChunks.ts";
import { recordJson } from "../formats/memoJson.ts";

const chunks = new ChunkMemo();

/** The chunks of `runs`, in bucket order; a bucket whose entries are the objects of the last call is not written again. */
export function encodeIndexRuns(runs: ReleaseIndex["runs"]): Chunk[] {
  return chunks.encode(
    Object.keys(runs),
    (reftime) => [runs[reftime]],
    (reftimes) => {
      const chunkRuns: IndexChunk["runs"] = {};
      for (const reftime of reftimes) chunkRuns[reftime] = runs[reftime]!;
      return `{"runs":${recordJson(chunkRuns)}}\n`;
    },
  );
}
