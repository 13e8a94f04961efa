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
import { InternalError } from "../errors.ts";
import { fewAtATime } from "../flow/oneAtATime.ts";

/** Drafts written at once (their compression is bounded apart: compressInTurn). */
const WRITES_IN_FLIGHT = 16;
/**
 * zlib's level 5 with its largest hash (memLevel 9): on a full-size run's 16.8 MB of KML and GeoJSON it takes
 * 0.36 s of CPU against 0.58 s at the default level 6, for 1 % more bytes (9 took 2.5× level 6's CPU for 1.4 %
 * fewer). Clients that take brotli get smaller bodies still.
 */
export const GZIP_OPTIONS = { level: 5, memLevel: 9 } as const;

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

/** The gzip and brotli variants of a text draft. */
type Variants = [gzip: Buffer, br: Buffer];

/**
 * Text compressed at once, at most: each body in flight holds two compressors, and libuv's four threads
 * are shared with the image encoders of the build's workers.
 */
const compressInTurn = fewAtATime(4);
const variantsOf = new WeakMap<ArtefactDraft, Promise<Variants>>();

/** Whether a draft gets gzip and brotli variants: text, unless it says it is never served compressed. */
const compressible = (draft: ArtefactDraft): boolean => !draft.contentType.startsWith("image/") && draft.precompress !== false;

/**
 * Starts compressing the drafts' text now (in the background, a few at a time, in order), so that it runs
 * while the rest of the run is drawn rather than after it; writeArtefacts takes the variants from here.
 */
export function startCompressing(drafts: readonly ArtefactDraft[]): void {
  for (const draft of drafts) if (compressible(draft)) void variants(draft).catch(() => {}); // awaited by writeArtefacts
}

function variants(draft: ArtefactDraft): Promise<Variants> {
  let started = variantsOf.get(draft);
  if (started === undefined) {
    started = compressInTurn(() =>
      Promise.all([
        gzipAsync(draft.body, GZIP_OPTIONS),
        brotliAsync(draft.body, {
          params: {
            [zlibConstants.BROTLI_PARAM_QUALITY]: brotliQuality(draft),
            [zlibConstants.BROTLI_PARAM_SIZE_HINT]: draft.body.length,
          },
        }),
      ]),
    );
    variantsOf.set(draft, started);
  }
  return started;
}

/**
 * Writes drafts into `dir` (a fresh directory; `dirFromDist` is its path relative to the dist directory) as
 * they are handed over, a few at a time: a run's files are written while the rest of it is still drawn.
 */
export class ArtefactWriter {
  readonly #dir: string;
  readonly #dirFromDist: string;
  readonly #writes = new Map<ArtefactDraft, Promise<Artefact>>();
  readonly #inTurn = fewAtATime(WRITES_IN_FLIGHT);
  #stopped = false;

  constructor(dir: string, dirFromDist: string) {
    this.#dir = dir;
    this.#dirFromDist = dirFromDist;
  }

  /** Starts compressing and writing drafts not handed over before, in order. */
  add(drafts: readonly ArtefactDraft[]): void {
    // A renderer still at work after another failed hands its drafts over after the directory was removed.
    if (this.#stopped) return;
    // Every body's compression is queued first, in order: the thread pool compresses while this thread writes.
    startCompressing(drafts);
    for (const draft of drafts) {
      if (this.#writes.has(draft)) continue;
      const write = this.#inTurn(() => writeDraft(this.#dir, this.#dirFromDist, draft));
      write.catch(() => {}); // awaited by entries()
      this.#writes.set(draft, write);
    }
  }

  /** The index entries of `drafts` (written now if not handed over before), in their order; on failure, once no write is under way. */
  async entries(drafts: readonly ArtefactDraft[]): Promise<Record<string, Artefact>> {
    if (this.#stopped) throw new InternalError("ArtefactWriter.entries after stop()");
    this.add(drafts);
    try {
      return Object.fromEntries(await Promise.all(drafts.map(async (draft) => [draft.key, await this.#writes.get(draft)!] as const)));
    } catch (error) {
      await this.settled();
      throw error;
    }
  }

  /** Resolves once no write is under way. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#writes.values());
  }

  /** Takes no more drafts and resolves once no write is under way: the directory may be removed then, nothing is written into it after. */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.settled();
  }
}

/** Writes the drafts into `dir` (see ArtefactWriter) and returns their index entries. */
export function writeArtefacts(dir: string, dirFromDist: string, drafts: readonly ArtefactDraft[]): Promise<Record<string, Artefact>> {
  return new ArtefactWriter(dir, dirFromDist).entries(drafts);
}

async function writeDraft(dir: string, dirFromDist: string, draft: ArtefactDraft): Promise<Artefact> {
  const target = path.join(dir, draft.file);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, draft.body);
  const digest = createHash("sha256").update(draft.body).digest();
  const sha256 = digest.toString("hex");
  const tag = digest.toString("base64url").slice(0, 27);
  const file = path.posix.join(dirFromDist, draft.file);
  const entry: Artefact = { contentType: draft.contentType, sha256, identity: { file, size: draft.body.length, etag: `"${tag}"` } };
  if (compressible(draft)) {
    const [gz, br] = await variants(draft);
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
  return entry;
}

/** Deterministic JSON bytes: key order is the order the object was built in, one trailing newline. */
export function jsonBody(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, "utf8");
}
