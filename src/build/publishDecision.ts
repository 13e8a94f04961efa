/**
 * Which folder is served for each reftime, and what the report says of every folder: published, kept at
 * its last good version, a duplicate, a variant conflict, waiting or invalid.
 */
import { RUN_TYPES, type RunType } from "../contract/runTypes.ts";
import type { RunReport } from "../contract/buildReport.ts";
import type { RunBuild, RunState } from "./buildState.ts";

export interface PublishDecision {
  byReftime: Map<string, RunBuild>;
  folderOf: Map<string, string>;
  /** Folder to the build of it that is served. */
  servedBuild: Map<string, RunBuild>;
  /** Folder to why it is not served although valid. */
  losers: Map<string, { status: "duplicate" | "variant-conflict"; winner: string }>;
}

const TYPE_RANK: Record<RunType, number> = Object.fromEntries(RUN_TYPES.map((t, i) => [t, i])) as Record<RunType, number>;

/**
 * One folder per reftime. Identical content is a duplicate (the first folder by name is served).
 * Different content is a variant conflict, settled by a fixed rule: a Real Eruption beats a
 * Rehearsal beats an Exercise (an exercise must never hide a real eruption), then the folder whose
 * name sorts last wins (a corrected copy is named after the original, e.g. `..._v2`), numbers in names
 * compared as numbers (`_v10` after `_v9`).
 */
export function decidePublished(runs: Readonly<Record<string, RunState>>): PublishDecision {
  const candidates = new Map<string, Array<{ folder: string; build: RunBuild }>>();
  // A build lists its folders in name order already: sorting 1,000 names again cost a millisecond.
  let folders = Object.keys(runs);
  if (!folders.every((folder, i) => i === 0 || folders[i - 1]! < folder)) folders = folders.sort();
  for (const folder of folders) {
    const state = runs[folder]!;
    const build = state.current ?? state.lastGood;
    if (!build) continue;
    const list = candidates.get(build.reftime);
    if (list) list.push({ folder, build });
    else candidates.set(build.reftime, [{ folder, build }]);
  }
  const decision: PublishDecision = { byReftime: new Map(), folderOf: new Map(), servedBuild: new Map(), losers: new Map() };
  for (const [reftime, list] of candidates) {
    if (list.length === 1) {
      const only = list[0]!;
      decision.byReftime.set(reftime, only.build);
      decision.folderOf.set(reftime, only.folder);
      decision.servedBuild.set(only.folder, only.build);
      continue;
    }
    const winner = [...list].sort((a, b) => TYPE_RANK[b.build.type] - TYPE_RANK[a.build.type] || compareFolderNames(b.folder, a.folder))[0]!;
    // Among identical copies, the first folder by name is the one served.
    const served = list.find((c) => c.build.contentSha256 === winner.build.contentSha256)!;
    decision.byReftime.set(reftime, served.build);
    decision.folderOf.set(reftime, served.folder);
    decision.servedBuild.set(served.folder, served.build);
    for (const other of list) {
      if (other === served) continue;
      decision.losers.set(other.folder, { status: other.build.contentSha256 === served.build.contentSha256 ? "duplicate" : "variant-conflict", winner: served.folder });
    }
  }
  return decision;
}

const DIGITS_OR_NOT = /\d+|\D+/g;

/**
 * Folder names in the order a forecaster reads them: runs of digits compared as numbers (`hekla_v9` before
 * `hekla_v10`), the rest by code unit; names equal so (`v02`, `v2`) by code unit, so the order is total.
 */
export function compareFolderNames(a: string, b: string): number {
  const left = a.match(DIGITS_OR_NOT) ?? [];
  const right = b.match(DIGITS_OR_NOT) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const x = left[i]!;
    const y = right[i]!;
    if (x === y) continue;
    const numeric = x.charCodeAt(0) <= 57 && x.charCodeAt(0) >= 48 && y.charCodeAt(0) <= 57 && y.charCodeAt(0) >= 48;
    if (numeric) {
      // Compared as numbers of any length: without leading zeros, the longer is larger.
      const p = x.replace(/^0+(?=\d)/, "");
      const q = y.replace(/^0+(?=\d)/, "");
      if (p.length !== q.length) return p.length - q.length;
      if (p !== q) return p < q ? -1 : 1;
      continue;
    }
    return x < y ? -1 : 1;
  }
  if (left.length !== right.length) return left.length - right.length;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** The report entry last made for each run state, reused while it says the same (its JSON text with it). */
const reportOf = new WeakMap<RunState, RunReport>();

export function reportRun(folder: string, state: RunState, decision: PublishDecision, rebuilt: string | undefined): RunReport {
  const { status, note } = runStatus(folder, state, decision);
  const cached = reportOf.get(state);
  if (cached && cached.folder === folder && cached.status === status && cached.note === note && cached.rebuilt === rebuilt) return cached;
  const build = state.current ?? state.lastGood;
  const report: RunReport = {
    folder,
    ...(build ? { reftime: build.reftime, type: build.type } : {}),
    ...(rebuilt ? { rebuilt } : {}),
    issues: state.issues,
    status,
    ...(note ? { note } : {}),
  };
  reportOf.set(state, report);
  return report;
}

function runStatus(folder: string, state: RunState, decision: PublishDecision): Pick<RunReport, "status" | "note"> {
  const served = decision.servedBuild.get(folder);
  const loser = decision.losers.get(folder);
  if (served && state.current === served) return { status: "published" };
  if (served) {
    return {
      status: "kept-last-good",
      note: state.waiting ? "files are still arriving; the last good version stays published" : "its files are invalid now; the last good version stays published until they are fixed or the folder is removed",
    };
  }
  if (loser?.status === "duplicate") return { status: "duplicate", note: `same content as ${loser.winner}, which is published` };
  if (loser) return { status: "variant-conflict", note: `same reftime as ${loser.winner} with other content; ${loser.winner} is published (a higher run type wins, then the folder name that sorts last, numbers in it compared as numbers)` };
  return { status: state.waiting ? "waiting" : "invalid" };
}
