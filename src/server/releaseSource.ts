/**
 * The release the server answers from. It follows `dist/current` (fs.watch plus a cheap readlink poll),
 * loads a new release completely (index parsed and checked, hot bodies read) before switching to it with
 * one assignment: a request holds the release object it started with, so it sees the old release or the
 * new one, whole. A release that fails to load is reported and the previous one stays.
 */
import { watch, type FSWatcher } from "node:fs";
import { readFile, readlink } from "node:fs/promises";
import path from "node:path";
import { BuildReport } from "../contract/buildReport.ts";
import { readReleaseIndex, type IndexChunkCache } from "../contract/readReleaseIndex.ts";
import { Artefact, CURRENT_LINK, RUN_ARTEFACTS_FILE, RunArtefacts, type PublishedRun, type ReleaseIndex, type StoredBody } from "../contract/releaseIndex.ts";
import { parseInstant } from "../time/instant.ts";
import { ByteLru } from "./byteLru.ts";

/** Artefact bodies kept in memory by default: the hot runs' JSON, maps and KML, with room to spare under 250 MB of RSS. */
export const DEFAULT_BODY_CACHE_BYTES = 64 * 1024 * 1024;

/** Run artefact lists kept in memory: the runs clients are browsing, not all 1,000. */
const MAX_RUN_LISTS = 256;

export interface ServedRelease {
  id: string;
  index: ReleaseIndex;
  /** Newest reftime, when any run is published. */
  latest: string | undefined;
  report: BuildReport | undefined;
  builtMs: number;
}

export interface ReleaseSourceOptions {
  distDir: string;
  /** Largest total size of artefact bodies kept in memory. */
  cacheBytes?: number;
  /** How often `dist/current` is checked besides file-system events. */
  pollMs?: number;
  log?: (line: string) => void;
}

export class ReleaseSource {
  #release: ServedRelease | undefined;
  #target: string | undefined;
  #loadError: string | undefined;
  #loading: Promise<void> | undefined;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #bodies: ByteLru;
  /** The run-list chunks of the release last loaded (immutable, named by content), so a new release reads only its new ones. */
  readonly #indexChunks: IndexChunkCache = new Map();
  /** Artefact lists of runs by directory (immutable, so shared across releases), most recent last. */
  readonly #runLists = new Map<string, RunArtefacts>();
  #lastRunDir: string | undefined;
  readonly #distDir: string;
  readonly #log: (line: string) => void;

  private constructor(options: ReleaseSourceOptions) {
    this.#distDir = path.resolve(options.distDir);
    this.#bodies = new ByteLru(options.cacheBytes ?? DEFAULT_BODY_CACHE_BYTES);
    this.#log = options.log ?? (() => {});
  }

  /** Opens the dist directory (which may hold no release yet) and starts following it. */
  static async open(options: ReleaseSourceOptions): Promise<ReleaseSource> {
    const source = new ReleaseSource(options);
    await source.refresh();
    try {
      source.#watcher = watch(source.#distDir, { persistent: false }, () => void source.refresh());
      source.#watcher.on("error", () => {}); // the poll below still follows the release
    } catch {
      // dist/ does not exist yet: the poll picks it up once a build creates it
    }
    source.#timer = setInterval(() => void source.refresh(), options.pollMs ?? 1000);
    source.#timer.unref();
    return source;
  }

  /** The release to answer from, or undefined when none has been published (or none could be loaded). */
  get current(): ServedRelease | undefined {
    return this.#release;
  }

  /** Why the newest release could not be loaded, when it could not. */
  get loadError(): string | undefined {
    return this.#loadError;
  }

  /** Checks `dist/current` and loads the release it points at when it changed. */
  refresh(): Promise<void> {
    this.#loading ??= this.#refresh().finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  async #refresh(): Promise<void> {
    const target = await readlink(path.join(this.#distDir, CURRENT_LINK)).catch(() => undefined);
    if (target === undefined || target === this.#target) return;
    try {
      const release = await this.#load(path.resolve(this.#distDir, target));
      this.#release = release;
      this.#target = target;
      this.#loadError = undefined;
      this.#log(`serving release ${release.id} (${release.index.reftimes.length} runs)`);
    } catch (error) {
      this.#target = target; // do not retry a broken release on every poll; the next switch is a new target
      this.#loadError = `release ${path.basename(target)} could not be loaded: ${(error as Error).message}`;
      this.#log(`${this.#loadError}; still serving ${this.#release?.id ?? "nothing"}`);
    }
  }

  async #load(releaseDir: string): Promise<ServedRelease> {
    const index = await readReleaseIndex(this.#distDir, releaseDir, this.#indexChunks);
    // Chunks are shared by consecutive releases: keep those of this one for the next.
    const used = new Set(index.runChunks);
    for (const name of this.#indexChunks.keys()) if (!used.has(name)) this.#indexChunks.delete(name);
    const latest = index.reftimes[0];
    // Warm what nearly every client asks for: the lists and the latest run, in every encoding.
    const hot: Artefact[] = [index.lists.reftimes, index.lists.changelog, index.lists.report].map((key) => {
      const artefact = index.artefacts[key];
      if (!artefact) throw new Error(`index.json names ${key} but has no artefact for it`);
      return artefact;
    });
    if (latest) {
      const run = index.runs[latest]!;
      const json = (await this.runArtefacts(run)).artefacts[run.json];
      if (!json) throw new Error(`${run.dir}/${RUN_ARTEFACTS_FILE} has no ${run.json}`);
      hot.push(json);
    }
    for (const artefact of hot) for (const stored of storedBodies(artefact)) await this.body(stored);
    const reportEntry = index.artefacts[index.lists.report]!;
    const parsedReport = BuildReport.safeParse(JSON.parse((await this.body(reportEntry.identity)).toString("utf8")));
    return { id: index.release, index, latest, report: parsedReport.success ? parsedReport.data : undefined, builtMs: parseInstant(index.built) ?? 0 };
  }

  /** The artefact list of a published run: from memory, else read once (run directories never change). */
  runArtefacts(run: PublishedRun): RunArtefacts | Promise<RunArtefacts> {
    return this.cachedRunArtefacts(run) ?? this.#readRunArtefacts(run);
  }

  /** The artefact list of a published run when it is in memory, else undefined (nothing is read). */
  cachedRunArtefacts(run: PublishedRun): RunArtefacts | undefined {
    const cached = this.#runLists.get(run.dir);
    // Moved to the end on use (least recently used first), unless it was the last one used.
    if (cached && run.dir !== this.#lastRunDir) {
      this.#lastRunDir = run.dir;
      this.#runLists.delete(run.dir);
      this.#runLists.set(run.dir, cached);
    }
    return cached;
  }

  /**
   * The artefacts of a run whose keys start with `prefix`, read from its list and not kept: for the point-query
   * grids, which keep only their own files. Going through the list cache (and its full check) for each of 1,000
   * runs in turn churned it, and the churn grew the heap by 80 MB; only the entries used are checked here.
   */
  async readRunArtefacts(run: PublishedRun, prefix: string): Promise<Record<string, Artefact>> {
    const list = JSON.parse(await readFile(path.join(this.#distDir, run.dir, RUN_ARTEFACTS_FILE), "utf8")) as { artefacts?: Record<string, unknown> };
    const found: Record<string, Artefact> = {};
    for (const [key, value] of Object.entries(list.artefacts ?? {})) if (key.startsWith(prefix)) found[key] = Artefact.parse(value);
    return found;
  }

  async #readRunArtefacts(run: PublishedRun): Promise<RunArtefacts> {
    const list = RunArtefacts.parse(JSON.parse(await readFile(path.join(this.#distDir, run.dir, RUN_ARTEFACTS_FILE), "utf8")));
    this.#runLists.delete(run.dir);
    this.#runLists.set(run.dir, list);
    this.#lastRunDir = run.dir;
    for (const oldest of this.#runLists.keys()) {
      if (this.#runLists.size <= MAX_RUN_LISTS) break;
      this.#runLists.delete(oldest);
    }
    return list;
  }

  /** The bytes of a stored body: from memory, else read once from disk (files never change once published). */
  body(stored: StoredBody): Buffer | Promise<Buffer> {
    return this.#bodies.get(stored.file) ?? this.#read(stored);
  }

  /** The bytes of a stored body when they are in memory, else undefined (nothing is read). */
  cachedBody(stored: StoredBody): Buffer | undefined {
    return this.#bodies.get(stored.file);
  }

  /** The bytes of a stored body read from disk, not kept in the body cache (the caller bounds its own). */
  async readWhole(stored: StoredBody): Promise<Buffer> {
    const bytes = await readFile(path.join(this.#distDir, stored.file));
    if (bytes.length !== stored.size) throw new Error(`${stored.file} is ${bytes.length} bytes, the index says ${stored.size}`);
    return bytes;
  }

  async #read(stored: StoredBody): Promise<Buffer> {
    const bytes = await readFile(path.join(this.#distDir, stored.file));
    if (bytes.length !== stored.size) throw new Error(`${stored.file} is ${bytes.length} bytes, the index says ${stored.size}`);
    this.#bodies.set(stored.file, bytes);
    return bytes;
  }

  close(): void {
    this.#watcher?.close();
    if (this.#timer) clearInterval(this.#timer);
  }
}

export function storedBodies(artefact: Artefact): StoredBody[] {
  return [artefact.identity, ...(artefact.gzip ? [artefact.gzip] : []), ...(artefact.br ? [artefact.br] : [])];
}
