/**
 * Artefact bodies to stored files: the identity body plus, for text, gzip and brotli variants made once
 * at build time (never per request), each with a strong ETag derived from the content hash.
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants as zlibConstants, gzip } from "node:zlib";
import type { Artefact } from "../contract/releaseIndex.ts";
import { inOrder } from "../flow/inOrder.ts";

/**
 * Drafts compressed and written at once: enough to keep libuv's four threads compressing, few enough that
 * memory does not hold a compressor per body (all 880 files of a full-size run at once added 120 MB).
 */
const WRITES_IN_FLIGHT = 16;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export const CONTENT_TYPES = {
  json: "application/json;charset=UTF-8",
  png: "image/png",
  kml: "application/vnd.google-earth.kml+xml;charset=UTF-8",
  rss: "application/rss+xml;charset=UTF-8",
  html: "text/html;charset=UTF-8",
  js: "text/javascript;charset=UTF-8",
  css: "text/css;charset=UTF-8",
} as const;

export interface ArtefactDraft {
  /** Key in the release index, e.g. `runs/2024-05-01T12:00:00Z/model.json`. */
  key: string;
  /** File name inside the directory being written, e.g. `model.json` or `kml/advisory.kml`. */
  file: string;
  contentType: string;
  body: Buffer;
  /** The `/resources?name=` under which the artefact is offered, if any. */
  resourceName?: string;
  /** False for text that is never served compressed (the build report): no gzip and brotli variants. */
  precompress?: false;
}

/**
 * Brotli quality: the best (11) for JSON below 4 KiB (a small run model, the lists of a few runs), where it
 * costs at most ~3 ms and saves ~8%; 5 for everything else. Above that size quality 11 costs far more than
 * it saves (measured: 56 ms to save 87 bytes on a 16 KiB run model, 33 ms to save nothing on a 22 KiB
 * reftimes list, 0.5 vs 18 ms per 14 KiB KML), and 9 is no smaller than 5 on this kind of text.
 */
export function brotliQuality(draft: Pick<ArtefactDraft, "contentType" | "body">): number {
  return draft.contentType === CONTENT_TYPES.json && draft.body.length < 4 * 1024 ? 11 : 5;
}

/**
 * Writes the drafts into `dir` (a fresh directory; `dirFromDist` is its path relative to the dist
 * directory) and returns their index entries.
 */
export async function writeArtefacts(dir: string, dirFromDist: string, drafts: readonly ArtefactDraft[]): Promise<Record<string, Artefact>> {
  const entries = await inOrder(
    drafts.map((draft) => async (): Promise<[string, Artefact]> => {
      // Compression starts first, on the thread pool, while this thread writes and hashes.
      const compressed = draft.contentType.startsWith("image/") || draft.precompress === false
        ? undefined
        : Promise.all([
            gzipAsync(draft.body, { level: 9 }),
            brotliAsync(draft.body, {
              params: {
                [zlibConstants.BROTLI_PARAM_QUALITY]: brotliQuality(draft),
                [zlibConstants.BROTLI_PARAM_SIZE_HINT]: draft.body.length,
              },
            }),
          ]);
      compressed?.catch(() => {}); // awaited below; this only keeps a failed write from leaving it unobserved
      const target = path.join(dir, draft.file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, draft.body);
      const digest = createHash("sha256").update(draft.body).digest();
      const sha256 = digest.toString("hex");
      const tag = digest.toString("base64url").slice(0, 27);
      const file = path.posix.join(dirFromDist, draft.file);
      const entry: Artefact = { contentType: draft.contentType, sha256, identity: { file, size: draft.body.length, etag: `"${tag}"` } };
      if (compressed) {
        const [gz, br] = await compressed;
        // A variant that saves nothing is not worth a header dance.
        if (gz.length < draft.body.length) {
          await writeFile(`${target}.gz`, gz);
          entry.gzip = { file: `${file}.gz`, size: gz.length, etag: `"${tag}-gz"` };
        }
        if (br.length < draft.body.length) {
          await writeFile(`${target}.br`, br);
          entry.br = { file: `${file}.br`, size: br.length, etag: `"${tag}-br"` };
        }
      }
      return [draft.key, entry];
    }),
    WRITES_IN_FLIGHT,
  );
  return Object.fromEntries(entries);
}

/** Deterministic JSON bytes: key order is the order the object was built in, one trailing newline. */
export function jsonBody(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, "utf8");
}
