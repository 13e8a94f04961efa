/**
 * `/healthz`: plain text a person and a load balancer can both read. 200 while a release is served
 * (status `ok`, or `degraded` when the last build reported errors or the newest release failed to load);
 * 503 when no release can be served at all.
 */
import type { ReleaseView } from "./app.ts";
import { parseInstant } from "../time/instant.ts";

export function healthText(source: Pick<ReleaseView, "current" | "loadError">, nowMs: number): { status: 200 | 503; text: string } {
  const release = source.current;
  if (!release) {
    const why = source.loadError ?? "no build has published a release yet (run: ashcast build)";
    return { status: 503, text: `status: unavailable\nruns: 0\nreason: ${why}\n` };
  }
  const report = release.report;
  const errors = report?.counts.errors ?? 0;
  const failing = report?.runs.filter((run) => run.issues.some((issue) => issue.severity === "error")).map((run) => run.folder) ?? [];
  const ageSeconds = Math.max(0, Math.round((nowMs - (parseInstant(release.index.built) ?? nowMs)) / 1000));
  const lines = [
    `status: ${errors > 0 || source.loadError ? "degraded" : "ok"}`,
    `runs: ${release.index.reftimes.length}`,
    `latest reftime: ${release.latest ?? "none"}`,
    `release: ${release.id}`,
    `last build: ${release.index.built} (${ageSeconds} s ago)`,
    `build errors: ${errors}${failing.length ? ` (in ${failing.slice(0, 10).join(", ")}${failing.length > 10 ? ", ..." : ""})` : ""}`,
    ...(source.loadError ? [`newest release not loaded: ${source.loadError}`] : []),
  ];
  return { status: 200, text: `${lines.join("\n")}\n` };
}
