/**
 * Model output files opened by a build worker rather than the build's own thread. Opening a NetCDF-4 file
 * loads h5wasm (compiling its WebAssembly and starting the HDF5 library) and walks the file's structure:
 * ~0.2 s on the build's thread, which held back every worker's first step by as much while the workers
 * waited. A worker opens the file instead and hands back its description (ModelOutput.description), with
 * which this thread opens it again without h5wasm, checking everything as before; a one-off build asks for
 * it as it starts (earlyWorkers.ts), while this thread loads its code and hashes the runs.
 */
import { statSync } from "node:fs";
import type { SourceDescription } from "../model/source.ts";
import { runStepTask, stepWorkers } from "./stepPool.ts";

export interface WorkerDescription {
  description: SourceDescription;
  /** The file as it was while described (fileIdentity): a file replaced since is described again. */
  identity: string;
}

/** A file's inode, size and times: another file, or the file rewritten, has another. */
export function fileIdentity(filePath: string): string | undefined {
  const stats = statSync(filePath, { throwIfNoEntry: false, bigint: true });
  return stats && `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

const asked = new Map<string, Promise<WorkerDescription | undefined>>();

/** Asks a worker to open and describe a file, ahead of describedByWorker (once a file); nothing without worker threads. */
export function askForDescription(filePath: string, displayPath: string): Promise<WorkerDescription | undefined> {
  if (stepWorkers() === 0) return Promise.resolve(undefined);
  let described = asked.get(filePath);
  if (!described) {
    // A file the worker cannot open is opened here, which says why in the build's own words.
    described = runStepTask("describeModelOutput", { path: filePath, where: displayPath }, displayPath, () => Promise.resolve(undefined)).catch(() => undefined);
    asked.set(filePath, described);
  }
  return described;
}

/**
 * The file's description by a worker, asked for now or earlier; undefined without worker threads, or when the
 * worker could not open the file (this thread opens it then, and says why), or the file changed since.
 */
export async function describedByWorker(filePath: string, displayPath: string): Promise<SourceDescription | undefined> {
  const described = await askForDescription(filePath, displayPath);
  asked.delete(filePath);
  return described && described.identity === fileIdentity(filePath) ? described.description : undefined;
}
