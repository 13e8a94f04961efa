/**
 * Model output files a one-off build has a worker open rather than its own thread. Opening a NetCDF-4 file
 * loads h5wasm (compiling its WebAssembly and starting the HDF5 library) and walks the file's structure:
 * ~0.2 s on the build's thread, which held back every worker's first step by as much while the workers
 * waited. The build asks for it as it starts (earlyWorkers.ts), while its thread loads its code and hashes
 * the runs; the worker hands back the file's description (ModelOutput.description), with which the build's
 * thread opens the file again without h5wasm, checking everything as before.
 */
import { statSync } from "node:fs";
import type { SourceDescription } from "../model/source.ts";
import { runStepTask, stepWorkers } from "./stepPool.ts";

export interface WorkerDescription {
  description: SourceDescription;
  /** The file as it was while described (fileIdentity): a file changed since is opened by the build's thread. */
  identity: string;
}

/** A file's inode, size and times: another file, or the file rewritten, has another. */
export function fileIdentity(filePath: string): string | undefined {
  const stats = statSync(filePath, { throwIfNoEntry: false, bigint: true });
  return stats && `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

const asked = new Map<string, Promise<WorkerDescription | undefined>>();

/** Asks a worker to open and describe a file, for describedByWorker (once a file); nothing without worker threads. */
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
 * The description a worker was asked for (askForDescription), if the file is still as it was then; undefined when
 * none was asked for, without worker threads, or when the worker could not open the file: this thread opens it
 * then (and says why it cannot). Only a one-off build asks ahead: a service's build thread keeps h5wasm loaded
 * from build to build, where a worker stopped while idle would load it again for every run that arrives.
 */
export async function describedByWorker(filePath: string): Promise<SourceDescription | undefined> {
  const pending = asked.get(filePath);
  if (!pending) return undefined;
  asked.delete(filePath);
  const described = await pending;
  return described && described.identity === fileIdentity(filePath) ? described.description : undefined;
}
