/** How a build or check report reads on a terminal: problems first, grouped by run, then one summary line. */
import type { RunReport } from "../contract/buildReport.ts";
import { formatIssue } from "../build/issues.ts";

/** `check` publishes nothing: a run its build would publish is "valid" there. */
type Wording = "build" | "check";
const statusWord = (status: RunReport["status"], wording: Wording): string => (wording === "check" && status === "published" ? "valid" : status);

export function formatRunReports(runs: readonly RunReport[], wording: Wording = "build"): string[] {
  const lines: string[] = [];
  for (const run of runs) {
    if (run.issues.length === 0 && (run.status === "published")) continue;
    const what = run.reftime ? ` (${run.type ?? "?"} ${run.reftime})` : "";
    lines.push(`${run.folder}${what}: ${statusWord(run.status, wording)}${run.note ? ` — ${run.note}` : ""}`);
    for (const issue of run.issues) lines.push(`  ${formatIssue(issue)}`);
  }
  return lines;
}

export function summarise(runs: readonly RunReport[], wording: Wording = "build"): string {
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(statusWord(run.status, wording), (counts.get(statusWord(run.status, wording)) ?? 0) + 1);
  const parts = [...counts].map(([status, n]) => `${n} ${status}`);
  return `${runs.length} run folder${runs.length === 1 ? "" : "s"}: ${parts.join(", ") || "none"}`;
}
