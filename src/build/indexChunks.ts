/**
 * A release's run list in content-addressed chunks (dist/index/, read back by readReleaseIndex.ts): a
 * bucket of reftimes per chunk, so a release after a change to one run writes one chunk of ~16 entries
 * instead of the list of every run.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { IndexChunkSource } from "../contract/readReleaseIndex.ts";
import { INDEX_CHUNKS_DIR, type IndexChunk, type ReleaseIndex } from "../contract/releaseIndex.ts";
import { ChunkMemo, chunkName, type Chunk } from "../formats/contentChunks.ts";
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

/**
 * The chunks of the current release's run list as a build reads them back (for readReleaseIndex): read
 * synchronously (64 small files cost less than 64 round trips through the thread pool), checked by their
 * content hash instead of field by field (a chunk whose text hashes to its name is what a build of this
 * format wrote, as for the state's chunks: 1,000 runs in ~4 ms instead of ~15), its entries frozen, and
 * remembered as the last chunk of its bucket, so that a release whose entries there stay the same objects
 * names it again instead of writing it again. A chunk that is missing, damaged or not JSON is not given:
 * readReleaseIndex then reads it itself and refuses it with the file's name.
 */
export function indexChunksAsWritten(distDir: string): IndexChunkSource {
  return {
    get(name) {
      let text: string;
      try {
        text = readFileSync(path.join(distDir, INDEX_CHUNKS_DIR, name), "utf8");
      } catch {
        return undefined;
      }
      if (chunkName(text) !== name) return undefined;
      let runs: IndexChunk["runs"];
      try {
        runs = (JSON.parse(text) as IndexChunk).runs;
      } catch {
        return undefined;
      }
      if (typeof runs !== "object" || runs === null) return undefined;
      for (const run of Object.values(runs)) Object.freeze(run); // flat records: their text is kept in the memo
      chunks.remember(Object.keys(runs), (reftime) => [runs[reftime]], { name, text });
      return runs;
    },
    set() {},
  };
}
