/**
 * Receiving an uploaded run into a fresh staging folder: the files of a multipart form, or the entries of
 * one zip archive. Bodies are streamed to disk (model output can be hundreds of MB), every size is counted
 * as it arrives, and only plain file names are accepted: no path, no `..`, no hidden or temporary names,
 * so nothing can be written outside the staging folder (zip-slip) and nothing the pipeline would skip.
 */
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import Busboy from "busboy";
import yauzl from "yauzl";
import { AshcastError } from "../../errors.ts";
import { isTemporaryName } from "../../contract/runFolderNames.ts";

export interface UploadLimits {
  /** Bytes of the request body, and of all files once unpacked. */
  maxBytes: number;
  /** Files in one run. */
  maxFiles: number;
}

export const DEFAULT_UPLOAD_LIMITS: UploadLimits = { maxBytes: 1024 ** 3, maxFiles: 64 };

/** A refused upload: the HTTP status and a detail that says what to change. */
export class UploadRefused extends AshcastError {
  override name = "UploadRefused";
  readonly status: 400 | 413 | 415;
  constructor(status: 400 | 413 | 415, detail: string) {
    super(detail);
    this.status = status;
  }
}

export interface ReceivedUpload {
  files: string[];
  /** The folder name the client asked for (form field or the zip's single top folder), if any. */
  folder?: string;
}

const MAX_NAME_LENGTH = 100;

/** A file name of a run folder, or why it is refused. */
export function refuseFileName(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return `a file name must have 1 to ${MAX_NAME_LENGTH} characters`;
  if (name.includes("/") || name.includes("\\") || name === "." || name === "..") return `"${name}" is not a plain file name: a run is a flat folder, send its files without paths`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return `"${name}" has control characters`;
  if (isTemporaryName(name)) return `"${name}" is a hidden, partial or temporary file name, which the pipeline never reads: rename it or leave it out`;
  return undefined;
}

/** Streams the body into `dir` (which must exist and be empty). Throws UploadRefused for what the client must fix. */
export async function receiveUpload(body: Readable, contentType: string, dir: string, limits: UploadLimits): Promise<ReceivedUpload> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "multipart/form-data") return receiveMultipart(body, contentType, dir, limits);
  if (type === "application/zip" || type === "application/x-zip-compressed") return receiveZip(body, dir, limits);
  throw new UploadRefused(415, `send the run's files as multipart/form-data, or one zip archive as application/zip (got ${type || "no Content-Type"})`);
}

/** Counts bytes through a stream, shared by all the streams of one upload; fails with 413 once spent. */
class ByteBudget extends Transform {
  private readonly budget: { left: number };
  private readonly limits: UploadLimits;
  constructor(budget: { left: number }, limits: UploadLimits) {
    super();
    this.budget = budget;
    this.limits = limits;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.budget.left -= chunk.length;
    if (this.budget.left < 0) done(tooLarge(this.limits));
    else done(null, chunk);
  }
}

function tooLarge(limits: UploadLimits): UploadRefused {
  return new UploadRefused(413, `the run is larger than the upload limit of ${formatBytes(limits.maxBytes)}; send fewer or smaller files, or ask an operator to raise uploadMaxBytes`);
}

async function receiveMultipart(body: Readable, contentType: string, dir: string, limits: UploadLimits): Promise<ReceivedUpload> {
  let parser: Busboy.Busboy;
  try {
    // preservePath: the file name as sent, so a path in it is refused (refuseFileName) rather than cut to its last part.
    parser = Busboy({ headers: { "content-type": contentType }, preservePath: true, limits: { files: limits.maxFiles + 1, fileSize: limits.maxBytes + 1, fields: 8, fieldSize: 1024, parts: limits.maxFiles + 9 } });
  } catch (error) {
    throw new UploadRefused(400, `the multipart body cannot be read: ${(error as Error).message}`);
  }
  const budget = { left: limits.maxBytes };
  const files: string[] = [];
  const writes: Array<Promise<void>> = [];
  let folder: string | undefined;
  let refusal: UploadRefused | undefined;
  /** A write of ours that failed (a full disk): not the client's fault, so not a refusal. */
  let ourFailure: unknown;
  const refuse = (error: UploadRefused) => {
    refusal ??= error;
  };

  const done = new Promise<void>((resolve, reject) => {
    /** Stops parsing and answers now, the rest of the body read away so that the answer reaches the client. */
    const stopReading = () => {
      body.unpipe(parser);
      body.resume();
      resolve();
    };
    parser.on("file", (field, stream, info) => {
      const name = info.filename ?? "";
      const why = refuseFileName(name);
      if (refusal || why || files.includes(name)) {
        if (!refusal) refuse(new UploadRefused(400, why ?? `"${name}" is sent twice: send each file once`));
        stream.resume();
        return;
      }
      if (files.length >= limits.maxFiles) {
        refuse(new UploadRefused(413, `a run has at most ${limits.maxFiles} files`));
        stream.resume();
        return;
      }
      files.push(name);
      const write = pipeline(stream, new ByteBudget(budget, limits), createWriteStream(path.join(dir, name), { flags: "wx" })).catch((error: unknown) => {
        if (isOurWriteFailure(error)) {
          // Nothing more can be stored.
          ourFailure ??= error;
          stopReading();
        } else if (error instanceof UploadRefused) {
          // Over the byte budget: the upload is refused whatever follows. pipeline destroyed busboy's stream of
          // this part, and busboy would wait for it for ever (a chunked body over the limit got no answer).
          refuse(error);
          stopReading();
        } else refuse(new UploadRefused(400, `file "${name}" (field ${field}) could not be received: ${(error as Error).message}`));
        stream.resume();
      });
      writes.push(write);
    });
    parser.on("field", (name, value) => {
      if (name === "folder") folder = value;
    });
    parser.on("filesLimit", () => refuse(new UploadRefused(413, `a run has at most ${limits.maxFiles} files`)));
    parser.on("partsLimit", () => refuse(new UploadRefused(413, `a run has at most ${limits.maxFiles} files and a few fields`)));
    parser.on("error", (error: Error) => reject(new UploadRefused(400, `the multipart body cannot be read: ${error.message}`)));
    parser.on("close", resolve);
  });
  body.on("error", (error) => parser.destroy(error));
  body.pipe(parser);
  await done;
  await Promise.all(writes);
  if (ourFailure !== undefined) throw ourFailure;
  if (refusal) throw refusal;
  if (!files.length) throw new UploadRefused(400, "the form holds no file: send the run's files (run.json, volcano.xml, NetCDF, KML ...) as file parts");
  return { files: files.sort(), ...(folder !== undefined ? { folder } : {}) };
}

async function receiveZip(body: Readable, dir: string, limits: UploadLimits): Promise<ReceivedUpload> {
  // yauzl reads the central directory at the end of the archive: the archive goes to disk first.
  const archive = path.join(dir, ".upload.zip");
  // A request body that fails is the client's doing (it went away); a failed write here is ours.
  let bodyFailed = false;
  body.once("error", () => (bodyFailed = true));
  try {
    await pipeline(body, new ByteBudget({ left: limits.maxBytes }, limits), createWriteStream(archive, { flags: "wx" }));
  } catch (error) {
    if (error instanceof UploadRefused || !bodyFailed) throw error;
    throw new UploadRefused(400, `the archive was cut off before its end (${(error as Error).message}); send it again`);
  }
  try {
    return await unpackZip(archive, dir, limits);
  } finally {
    await rm(archive, { force: true });
  }
}

async function unpackZip(archive: string, dir: string, limits: UploadLimits): Promise<ReceivedUpload> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(archive, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, opened) => (error ? reject(new UploadRefused(400, `the body is not a zip archive that can be read: ${error.message}`)) : resolve(opened))),
  );
  const budget = { left: limits.maxBytes };
  const files: string[] = [];
  let top: string | undefined;
  /** The first file found at the archive's root, if any. */
  let rootFile: string | undefined;
  try {
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        zip.once("entry", resolve);
        zip.once("end", () => resolve(undefined));
        zip.once("error", (error: Error) => reject(new UploadRefused(400, `the zip archive is damaged or unsafe: ${error.message}`)));
        zip.readEntry();
      });
      zip.removeAllListeners("entry").removeAllListeners("end").removeAllListeners("error");
      if (!entry) break;
      const parts = entry.fileName.split("/");
      const isDirectory = entry.fileName.endsWith("/");
      if (isDirectory) parts.pop();
      // A run is flat: its files at the root of the archive, or all in one top folder (as zipping a folder gives).
      if (parts.length > 2 || (isDirectory && parts.length > 1)) throw new UploadRefused(400, `"${entry.fileName}" is nested: zip the run's files, or the one folder that holds them`);
      if (isDirectory || parts.length === 2) {
        const folder = parts[0]!;
        if (top !== undefined && top !== folder) throw new UploadRefused(400, `the archive holds more than one folder ("${top}", "${folder}"): upload one run at a time`);
        // Files at the root came first: the same mix as a root file after the folder, in the other order.
        if (rootFile !== undefined) throw new UploadRefused(400, `"${rootFile}" lies beside the folder "${folder}": put every file of the run in one place`);
        top = folder;
        if (isDirectory) continue;
      }
      if (parts.length === 1 && top !== undefined) throw new UploadRefused(400, `"${entry.fileName}" lies beside the folder "${top}": put every file of the run in one place`);
      if (parts.length === 1) rootFile ??= entry.fileName;
      const name = parts[parts.length - 1]!;
      if (isSymlink(entry)) throw new UploadRefused(400, `"${entry.fileName}" is a symbolic link; a run holds plain files only`);
      const why = refuseFileName(name);
      if (why) throw new UploadRefused(400, why);
      if (files.includes(name)) throw new UploadRefused(400, `"${name}" appears twice in the archive`);
      if (files.length >= limits.maxFiles) throw new UploadRefused(413, `a run has at most ${limits.maxFiles} files`);
      // The declared size is checked first (cheap); the bytes are counted too, since the header can lie.
      if (entry.uncompressedSize > budget.left) throw tooLarge(limits);
      files.push(name);
      const stream = await new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (error, opened) => (error ? reject(new UploadRefused(400, `"${entry.fileName}" cannot be unpacked: ${error.message}`)) : resolve(opened))));
      try {
        await pipeline(stream, new ByteBudget(budget, limits), createWriteStream(path.join(dir, name), { flags: "wx" }));
      } catch (error) {
        if (error instanceof UploadRefused || isOurWriteFailure(error)) throw error;
        throw new UploadRefused(400, `"${entry.fileName}" cannot be unpacked: ${(error as Error).message}`);
      }
    }
  } finally {
    zip.close();
  }
  if (!files.length) throw new UploadRefused(400, "the archive holds no file: zip the run's files (run.json, volcano.xml, NetCDF, KML ...)");
  return { files: files.sort(), ...(top !== undefined ? { folder: top } : {}) };
}

/** Unix mode bits in the entry's external attributes, as zip tools on Unix write them. */
function isSymlink(entry: yauzl.Entry): boolean {
  return ((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3 && bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GiB`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

/** A failed call on our own file system (it names its syscall: a full disk, a quota): the server's problem, not the client's. */
function isOurWriteFailure(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException | undefined)?.syscall === "string";
}
