/**
 * An uploaded run enters runs/ whole or not at all: received into a hidden staging folder inside runs/
 * (same file system, and ignored by the watcher and the build), validated there exactly as a build would,
 * then renamed into place. An invalid run is answered with its validation report and removed; a failed or
 * aborted upload leaves nothing behind; an existing folder is never replaced.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { CheckResult } from "../../build/check.ts";
import type { RunReport } from "../../contract/buildReport.ts";
import { isProcessAlive } from "../../os/processes.ts";
import { compactInstant } from "../../time/instant.ts";
import { isRunFolderName } from "../../contract/runFolderNames.ts";
import { receiveUpload, UploadRefused, type UploadLimits } from "./receive.ts";

/** Staging folders: `.upload-<pid>-<random>`, hidden from the watcher and the build by the leading dot. */
const STAGING_PREFIX = ".upload-";

/** What the report of an upload that names no folder calls it (a name no upload may ask for: it has parentheses). */
const UNNAMED = "(upload)";

/** Folder names an upload may ask for: what a forecaster would type, nothing a path could hide in. */
const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A name an upload may use: one of FOLDER_NAME that the build does not skip (`.part`, `.tmp`, `.swp` ...). */
const usableName = (name: string): boolean => FOLDER_NAME.test(name) && isRunFolderName(name);

export type UploadOutcome =
  | { kind: "accepted"; folder: string; reftime: string; type: string; warnings: RunReport["issues"] }
  | { kind: "invalid"; report: RunReport }
  | { kind: "refused"; status: 400 | 409 | 413 | 415; detail: string };

export interface UploadRequest {
  body: Readable;
  contentType: string;
  /** The folder name asked for (`?folder=`), if any. */
  folder?: string;
  runsDir: string;
  limits: UploadLimits;
  /** Validates one run folder as a build would (checkInWorker in the service). */
  validate: (dir: string) => Promise<CheckResult>;
  now: Date;
}

export async function uploadRun(request: UploadRequest): Promise<UploadOutcome> {
  const { runsDir } = request;
  if (request.folder !== undefined && !usableName(request.folder)) return refusedName(request.folder);
  // Said before a byte is read: a run of hundreds of MB was received and validated only to be refused.
  if (request.folder !== undefined && (await lstat(path.join(runsDir, request.folder)).then(() => true, () => false))) return folderExists(request.folder);
  const staging = path.join(runsDir, `${STAGING_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}`);
  // Received under a name no upload may ask for; moved to staging/<its name> before it is checked (below).
  const received = path.join(staging, ".incoming");
  await mkdir(received, { recursive: true });
  try {
    let asked: string | undefined;
    try {
      const upload = await receiveUpload(request.body, request.contentType, received, request.limits);
      asked = request.folder ?? upload.folder;
    } catch (error) {
      if (error instanceof UploadRefused) return { kind: "refused", status: error.status, detail: error.message };
      throw error;
    }
    if (asked !== undefined && !usableName(asked)) return refusedName(asked);

    // Checked under the name it will have (the one asked for, or the archive's own folder's), so that the report
    // names each file as the forecaster knows it; without one, as "(upload)" (its name comes from its reftime).
    const named = path.join(staging, asked ?? UNNAMED);
    await rename(received, named);
    const checked = await request.validate(named);
    const report = checked.runs[0];
    if (!report) throw new Error(`Internal error: checking the upload gave no report`);
    if (checked.errors > 0 || !report.reftime || !report.type) return { kind: "invalid", report };

    const folder = asked ?? `${compactInstant(report.reftime)}-upload-${compactInstant(request.now.toISOString().replace(/\.\d{3}Z$/, "Z"))}-${randomBytes(2).toString("hex")}`;
    const target = path.join(runsDir, folder);
    if (await lstat(target).then(() => true, () => false)) return folderExists(folder);
    try {
      await rename(named, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Created meanwhile by another upload: the rename does not replace a folder with files in it.
      if (code === "ENOTEMPTY" || code === "EEXIST") return { kind: "refused", status: 409, detail: `runs/${folder} was created meanwhile; choose another ?folder=` };
      throw error;
    }
    // Checked as "(upload)", named after its reftime since: the warnings name the folder it is in now.
    const warnings = asked !== undefined ? report.issues : report.issues.map((issue) => ({ ...issue, file: inFolder(issue.file, folder), message: inFolder(issue.message, folder), fix: inFolder(issue.fix, folder) }));
    return { kind: "accepted", folder, reftime: report.reftime, type: report.type, warnings };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** A report's text with the unnamed upload's folder replaced by its name ("(upload)" is never a real name: no upload may ask for one with parentheses). */
const inFolder = (text: string, folder: string): string => (text === UNNAMED ? folder : text.replaceAll(`${UNNAMED}/`, `${folder}/`));

function folderExists(folder: string): UploadOutcome {
  return { kind: "refused", status: 409, detail: `runs/${folder} exists already and is never replaced by an upload; choose another ?folder=, or withdraw the run first` };
}

function refusedName(name: string): UploadOutcome {
  return { kind: "refused", status: 400, detail: `folder "${name.slice(0, 120)}" is not a run folder name: use 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit and not ending .part, .tmp, .swp or ~ (names the build skips)` };
}

/**
 * Removes staging folders of uploads that were cut off with their process (killed server). Called at start,
 * before any upload of this process: a folder of a live process is left alone, another server may own it.
 */
export async function sweepStaleUploads(runsDir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(runsDir).catch(() => [] as string[])) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(STAGING_PREFIX.length), 10);
    if (Number.isInteger(pid) && pid !== process.pid && isProcessAlive(pid)) continue;
    await rm(path.join(runsDir, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
