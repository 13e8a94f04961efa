/**
 * `ashcast check`: validates a runs directory (or one run folder) exactly as a build would, and
 * reports every problem, duplicates and variant conflicts included, without writing anything.
 */
import { createHash } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import type { RunReport } from "../contract/buildReport.ts";
import { UserError } from "../errors.ts";
import { decidePublished } from "./publishDecision.ts";
import type { RunState } from "./buildState.ts";
import { renderRun } from "./renderRun.ts";
import { isRunFolderName } from "../contract/runFolderNames.ts";
import { listRunFolders, scanRun, scanRuns, type ScannedRun } from "./scanRuns.ts";
import { validateRun } from "./validateRun.ts";
import { RUN_FILE } from "./runsDirectory.ts";
import type { PipelineSettings } from "./pipelineSettings.ts";

export interface CheckResult {
  runs: RunReport[];
  errors: number;
  warnings: number;
}

export async function check(dir: string, settings: PipelineSettings = {}): Promise<CheckResult> {
  const dirStat = await stat(dir).catch(() => undefined);
  if (!dirStat) throw new UserError("no such directory", { where: dir, fix: "give a runs directory or one run folder" });
  if (!dirStat.isDirectory()) throw new UserError("a file, not a directory", { where: dir, fix: "give a runs directory or one run folder" });
  const single = await isSingleRunFolder(dir);
  const scanned = single
    ? [(await scanRun(path.dirname(path.resolve(dir)), path.basename(path.resolve(dir)), {})).run]
    : (await scanRuns(dir, listRunFolders(dir), {})).map((entry) => entry.run);
  // Nothing checked is not "all good": a mistyped folder, or files not copied in yet, would read as a pass.
  if (scanned.length === 0) {
    throw new UserError("nothing to check: no run folder here, and no run.json (folders starting with . or _, and editors' temporaries, are skipped)", { where: dir, fix: "give a runs directory holding run folders, or one run folder with its run.json (ashcast new-run makes one)" });
  }

  const states: Record<string, RunState> = {};
  for (const run of scanned) states[run.folder] = await checkRun(run, settings);
  // One run folder under a name the build skips (a `_draft`, an editor's `.tmp`): it would never be published.
  const skipped = single && !isRunFolderName(path.basename(path.resolve(dir))) ? scanned[0] : undefined;
  if (skipped) {
    states[skipped.folder]!.issues.unshift({ severity: "error", file: skipped.folder, message: "the build skips a folder named so (starting with . or _, or an editor's temporary name)", fix: "rename the folder, e.g. 2024-05-01-hekla, to have it published" });
    delete states[skipped.folder]!.current;
  }
  const decision = decidePublished(states);
  const runs = scanned.map((run): RunReport => {
    const state = states[run.folder]!;
    const build = state.current;
    const loser = decision.losers.get(run.folder);
    const base = { folder: run.folder, ...(build ? { reftime: build.reftime, type: build.type } : {}), issues: state.issues };
    if (state.waiting) return { ...base, status: "waiting" };
    if (!build) return { ...base, status: "invalid" };
    if (loser) return { ...base, status: loser.status, note: `same reftime as ${loser.winner}${loser.status === "duplicate" ? " with the same content" : " with other content"}; ${loser.winner} would be published` };
    return { ...base, status: "published" };
  });
  const issues = runs.flatMap((r) => r.issues);
  return { runs, errors: issues.filter((i) => i.severity === "error").length, warnings: issues.filter((i) => i.severity === "warning").length };
}

async function checkRun(run: ScannedRun, settings: PipelineSettings): Promise<RunState> {
  if (run.partial.length) {
    return { inputs: "", waiting: true, issues: [{ severity: "warning", file: `${run.folder}/${run.partial[0]}`, message: `files are still arriving (${run.partial.join(", ")})`, fix: "give each file still arriving (*.part, or rsync's hidden .name.XXXXXX) its final name when it is complete" }] };
  }
  const { issues, assembled } = await validateRun(run, settings);
  if (!assembled) return { inputs: "", waiting: false, issues: issues.list };
  const drafts = await renderRun(assembled); // rendering is part of checking: it must not fail at build time
  const contentSha256 = createHash("sha256");
  for (const draft of [...drafts].sort((a, b) => (a.key < b.key ? -1 : 1))) contentSha256.update(`${draft.key}\0`).update(draft.body);
  const { reftime, type } = assembled.model.meta;
  return {
    inputs: "",
    waiting: false,
    issues: issues.list,
    current: { inputs: "", reftime, type, contentSha256: contentSha256.digest("hex"), dir: "", json: "" },
  };
}

/**
 * A folder holding a run's files (run.json, volcano.xml, model output, KML) is one run, whatever else it holds
 * (a sub-folder in it is then refused as the build refuses it); so is one holding other files and no run folder.
 * Otherwise it is a runs directory.
 */
async function isSingleRunFolder(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.some((e) => e.isFile() && RUN_FILE.test(e.name))) return true;
  const hasRunFolders = entries.some((e) => e.isDirectory() && isRunFolderName(e.name));
  const hasFiles = entries.some((e) => e.isFile() && !e.name.startsWith("."));
  return hasFiles && !hasRunFolders;
}
