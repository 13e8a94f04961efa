/**
 * Reads a release as the server and the next build use it: index.json, then the chunks of its run list,
 * joined into one record by reftime. Chunks are immutable (named by their content), so a reader that
 * follows one release after another passes a cache and reads only the chunks it has not seen.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { chunkName } from "../formats/contentChunks.ts";
import { INDEX_CHUNKS_DIR, INDEX_FILE, IndexChunk, InlineReleaseIndex, RELEASE_INDEX_FORMAT, StoredReleaseIndex, type PublishedRun, type ReleaseIndex } from "./releaseIndex.ts";

/** Chunks read before, by name: their runs, as parsed. */
export type IndexChunkCache = Map<string, IndexChunk["runs"]>;
/**
 * Where chunks are looked up before they are read and checked here: a cache of chunks read before, or a
 * reader of its own (the build's, src/build/indexChunks.ts). A chunk it does not give is read and checked here.
 */
export interface IndexChunkSource {
  get(name: string): IndexChunk["runs"] | undefined;
  set(name: string, runs: IndexChunk["runs"]): unknown;
}

/**
 * The release in `releaseDir` (under `distDir`). Throws an Error naming the file when index.json or a chunk
 * is missing, not JSON, not of the contract's shape, not the content its name says, or when the chunks do
 * not hold exactly one entry per listed reftime.
 */
export async function readReleaseIndex(distDir: string, releaseDir: string, cache: IndexChunkSource = new Map()): Promise<ReleaseIndex> {
  const indexFile = path.join(releaseDir, INDEX_FILE);
  const json = parsedJson(indexFile, await readFile(indexFile, "utf8"));
  if ((json as { format?: unknown } | null)?.format === 2) {
    // Written before the run list was chunked: read as it is (the next build writes it in chunks).
    return { ...shaped(indexFile, json, InlineReleaseIndex), format: RELEASE_INDEX_FORMAT, runChunks: [] };
  }
  const stored = shaped(indexFile, json, StoredReleaseIndex);
  const byReftime = new Map<string, PublishedRun>();
  for (const name of stored.runChunks) {
    let runs = cache.get(name);
    if (!runs) {
      const file = path.join(distDir, INDEX_CHUNKS_DIR, name);
      const text = await readFile(file, "utf8");
      if (chunkName(text) !== name) throw new Error(`${file} does not hold the content its name says: it was changed or damaged`);
      runs = shaped(file, parsedJson(file, text), IndexChunk).runs;
      cache.set(name, runs);
    }
    for (const [reftime, run] of Object.entries(runs)) {
      if (byReftime.has(reftime)) throw new Error(`${indexFile}: two of its run chunks list ${reftime}`);
      byReftime.set(reftime, run);
    }
  }
  if (byReftime.size !== stored.reftimes.length) throw new Error(`${indexFile} lists ${stored.reftimes.length} reftime(s) but its run chunks hold ${byReftime.size}`);
  // Oldest first, as the build lists them.
  const runs: Record<string, PublishedRun> = {};
  for (let i = stored.reftimes.length - 1; i >= 0; i--) {
    const reftime = stored.reftimes[i]!;
    const run = byReftime.get(reftime);
    if (!run) throw new Error(`${indexFile} lists ${reftime} but none of its run chunks holds it`);
    runs[reftime] = run;
  }
  return { ...stored, runs };
}

function parsedJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
}

function shaped<T>(file: string, json: unknown, schema: { parse(value: unknown): T }): T {
  try {
    return schema.parse(json);
  } catch (error) {
    throw new Error(`${file} is not of the release index's shape: ${(error as Error).message}`);
  }
}
