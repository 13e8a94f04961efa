/**
 * The operator's addresses, protected by the access rules: the build report (`/datasets`), withdrawing a
 * run (`/withdraw`) and uploading one (`/upload`). Each action is written to the audit log.
 */
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import { Hono, type Context } from "hono";
import { outOfSpace } from "../../errors.ts";
import { oneAtATime } from "../../flow/oneAtATime.ts";
import { DEFAULT_UPLOAD_LIMITS, formatBytes } from "../../operator/upload/receive.ts";
import { uploadRun } from "../../operator/upload/uploadRun.ts";
import { foldersSinceTheBuild, withdrawFolders } from "../../operator/withdraw.ts";
import type { AuditEntry, AuditLog } from "../../operator/auditLog.ts";
import { signedInUser } from "../accessControl.ts";
import { problemResponse } from "../problem.ts";
import { CORS_HEADERS } from "../representation.ts";
import { reftimeParameter } from "../select.ts";
import type { OperatorOptions, ReleaseView } from "../app.ts";
import { refuse } from "./data.ts";
import { readOnlyRoutes } from "./respond.ts";

const noStoreJson = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
const who = (c: Context) => signedInUser(c.req.raw) ?? "(not signed in)";

export function operatorRoutes(base: string, source: ReleaseView, operator: OperatorOptions | undefined, now: () => number): Hono {
  // The build report: every run folder with its state and problems.
  const group = readOnlyRoutes([
    [`${base}/datasets`, async () => {
      const release = source.current;
      if (!release) return new Response(null, { status: 204, headers: { "cache-control": "no-store", ...CORS_HEADERS } });
      const report = release.index.artefacts[release.index.lists.report]!;
      const body = await source.body(report.identity);
      const purges = operator?.cachePurges?.();
      // With --purge, what the caches were told of the recent publishes, and whether they heard it.
      const withPurges = purges === undefined ? body : JSON.stringify({ ...(JSON.parse(body.toString("utf8")) as object), cachePurges: purges });
      return new Response(withPurges, { headers: { "content-type": report.contentType, "cache-control": "no-store", ...CORS_HEADERS } });
    }],
  ]);
  group.post(`${base}/withdraw`, (c) => withdraw(c, base, source, operator, now));
  group.all(`${base}/withdraw`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));
  // One validation at a time: reading model output takes memory and CPU that uploads must not multiply.
  const validationsInTurn = oneAtATime();
  group.post(`${base}/upload`, (c) => upload(c, base, operator, validationsInTurn, now));
  group.all(`${base}/upload`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));
  return group;
}

/** The reftime's folders leave runs/ for the archive; the next build withdraws the run and says so in the changelog. */
async function withdraw(c: Context, base: string, source: ReleaseView, operator: OperatorOptions | undefined, now: () => number): Promise<Response> {
  if (!operator) return problemResponse(503, "withdrawing needs the runs directory: use ashcast start, which watches it");
  const reftime = reftimeParameter(c.req.queries("reftime"));
  if (reftime === undefined) return problemResponse(400, "give the reftime of the run to withdraw: ?reftime=YYYY-MM-DDTHH:MM:SSZ");
  if (typeof reftime === "object") return refuse(reftime);
  const reported = source.current?.report?.runs ?? [];
  const folders = [
    ...reported.filter((run) => run.reftime === reftime).map((run) => run.folder),
    ...(await foldersSinceTheBuild(operator.runsDir, new Set(reported.map((run) => run.folder)), reftime, operator.validate && (async (dir) => (await operator.validate!(dir)).runs[0]?.reftime))),
  ];
  if (folders.length === 0) {
    await operator.audit.record({ who: who(c), action: "withdraw", target: reftime, outcome: "refused", detail: "no run folder has this reftime" });
    return problemResponse(404, `no run folder has reftime ${reftime}; ${base}/datasets lists them`);
  }
  const unrecorded = await recordStart(operator.audit, { who: who(c), action: "withdraw", target: reftime, outcome: "started", detail: folders.join(", ") });
  if (unrecorded) return unrecorded;
  try {
    const result = await withdrawFolders({ runsDir: operator.runsDir, archiveDir: operator.archiveDir, reftime, folders, now: new Date(now()) });
    await recordOutcome(operator.audit, { who: who(c), action: "withdraw", target: reftime, outcome: "done", detail: `moved ${result.moved.map((m) => m.folder).join(", ") || "nothing (already gone)"} to ${operator.archiveDir}` });
    return noStoreJson({ reftime, withdrawn: result.moved.map((m) => m.folder), note: "the next build publishes the withdrawal" }, 202);
  } catch (error) {
    await recordOutcome(operator.audit, { who: who(c), action: "withdraw", target: reftime, outcome: "failed", detail: (error as Error).message });
    throw error;
  }
}

/**
 * The line written before an action that cannot be undone: when the audit log cannot take it, the action is
 * refused (503) before anything is done, rather than done and answered 500 with no line.
 */
async function recordStart(audit: AuditLog, entry: AuditEntry): Promise<Response | undefined> {
  try {
    await audit.record(entry);
    return undefined;
  } catch (error) {
    console.error(`the audit log ${audit.file} cannot be written: ${(error as Error).message}`);
    return problemResponse(503, "the audit log cannot be written, so nothing was done: an operator must make it writable (see the server's log), then send this again");
  }
}

/** The outcome of an action already done (its start is recorded): a failure to write it is logged, not answered as the action's. */
async function recordOutcome(audit: AuditLog, entry: AuditEntry): Promise<void> {
  await audit.record(entry).catch((error: unknown) => console.error(`the audit log ${audit.file} could not record ${entry.action} ${entry.target} ${entry.outcome}: ${(error as Error).message}`));
}

/** A run's files (multipart) or one zip archive: validated as a build would, then moved into runs/ whole, where the watcher publishes it. */
async function upload(c: Context, base: string, operator: OperatorOptions | undefined, inTurn: ReturnType<typeof oneAtATime>, now: () => number): Promise<Response> {
  if (!operator?.validate) return problemResponse(503, "uploading needs the runs directory and the pipeline: use ashcast start, which watches it");
  const { audit, validate } = operator;
  const uploadLimits = operator.settings?.uploadLimits ?? DEFAULT_UPLOAD_LIMITS;
  const declared = Number(c.req.header("content-length"));
  if (declared > uploadLimits.maxBytes) {
    await audit.record({ who: who(c), action: "upload", target: c.req.query("folder") ?? "", outcome: "refused", detail: `${declared} bytes declared` });
    return problemResponse(413, `the upload limit is ${formatBytes(uploadLimits.maxBytes)}; this body declares ${declared} bytes`, { connection: "close" });
  }
  const body = c.req.raw.body;
  if (!body) return problemResponse(400, "the request has no body: send the run's files as multipart/form-data, or one zip archive as application/zip");
  const folder = c.req.query("folder");
  const unrecorded = await recordStart(audit, { who: who(c), action: "upload", target: folder ?? "", outcome: "started" });
  if (unrecorded) return unrecorded;
  const outcome = await uploadRun({
    body: Readable.fromWeb(body as ReadableStream<Uint8Array>),
    contentType: c.req.header("content-type") ?? "",
    ...(folder !== undefined ? { folder } : {}),
    runsDir: operator.runsDir,
    limits: uploadLimits,
    validate: (dir) => inTurn(() => validate(dir)),
    now: new Date(now()),
  }).catch(async (error: unknown) => {
    await recordOutcome(audit, { who: who(c), action: "upload", target: folder ?? "", outcome: "failed", detail: (error as Error).message });
    if (outOfSpace(error)) return { kind: "out-of-space" as const };
    throw error;
  });
  if (outcome.kind === "out-of-space") return problemResponse(507, "the server has no space left to store the upload; nothing was kept. Send it again once an operator has freed space in runs/.");
  if (outcome.kind === "refused") {
    await recordOutcome(audit, { who: who(c), action: "upload", target: folder ?? "", outcome: "refused", detail: outcome.detail });
    // Refused before its body was read to the end (a 409 for ?folder=, a 413 past the limit): the connection is closed
    // after the answer, not kept reading what will never be stored.
    return problemResponse(outcome.status, outcome.detail, { connection: "close" });
  }
  if (outcome.kind === "invalid") {
    const errors = outcome.report.issues.filter((issue) => issue.severity === "error").length;
    await recordOutcome(audit, { who: who(c), action: "upload", target: outcome.report.folder, outcome: "refused", detail: `${errors} validation error(s)` });
    return problemResponse(422, `the run is not valid (${errors} error${errors === 1 ? "" : "s"}); nothing was published. The report lists each problem with its file and fix.`, {}, { report: outcome.report });
  }
  await recordOutcome(audit, { who: who(c), action: "upload", target: outcome.folder, outcome: "done", detail: `${outcome.type} run ${outcome.reftime}` });
  return noStoreJson({ folder: outcome.folder, reftime: outcome.reftime, type: outcome.type, warnings: outcome.warnings, url: `${base}/?reftime=${outcome.reftime}`, note: "the run is in runs/; the watcher publishes it within seconds" }, 202);
}
