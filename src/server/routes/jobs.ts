/**
 * /jobs (protected by the access rules, role operator): submit a rebuild of every run or of one run
 * folder, or a cleanup of old releases and temporaries; list jobs, see one, cancel one.
 *
 *   POST /jobs              {"kind": "rebuild"} | {"kind": "rebuild", "run": "<folder>"} | {"kind": "cleanup"}  → 202
 *   GET  /jobs              newest first
 *   GET  /jobs/{id}
 *   POST /jobs/{id}/cancel  200 cancelled while queued, 202 asked to stop while running, 409 already finished
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { Hono, type Context } from "hono";
import { JobQueueFull } from "../../contract/jobs.ts";
import { isRunFolderName } from "../../contract/runFolderNames.ts";
import type { JobBoard, JobRequest } from "../../operator/jobs.ts";
import { signedInUser } from "../accessControl.ts";
import { readSmallJson } from "../jsonBody.ts";
import { problemResponse } from "../problem.ts";
import { CORS_HEADERS } from "../representation.ts";

const EXAMPLE = `{"kind": "rebuild", "run": "2026-06-01-askja"}`;
const JOB_ID = /^[0-9TZ]{16}-[0-9a-f]{6}$/;

/** Without a job board (`serve` alone, which has no builder) every address answers 503. */
export function jobRoutes(base: string, jobs: JobBoard | undefined, runsDir: string | undefined): Hono {
  const app = new Hono();
  const unavailable = () => problemResponse(503, "jobs run on the builder: use ashcast start, which watches runs/ and serves");
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS, ...headers } });
  const who = (c: Context) => signedInUser(c.req.raw) ?? "(not signed in)";

  app.post(`${base}/jobs`, async (c) => {
    if (!jobs || !runsDir) return unavailable();
    const body = await readSmallJson(c, EXAMPLE);
    if (body instanceof Response) return body;
    const request = parseJobRequest(body.json);
    if (typeof request === "string") return problemResponse(400, request);
    if (request.kind === "rebuild" && request.runs !== "all") {
      const folder = request.runs[0]!;
      const isFolder = await stat(path.join(runsDir, folder)).then((s) => s.isDirectory(), () => false);
      if (!isFolder) return problemResponse(404, `runs/ has no run folder "${folder}"; ${base}/datasets lists them`);
    }
    // A job the audit log cannot record is not queued (JobBoard.submit records first): nothing was done.
    const job = await jobs.submit(request, who(c)).catch((error: unknown) => {
      if (error instanceof JobQueueFull) return error;
      console.error(`the job was not queued: the audit log cannot be written: ${(error as Error).message}`);
      return undefined;
    });
    if (job instanceof JobQueueFull) return problemResponse(429, `${job.message}: ${job.fix}`);
    if (!job) return problemResponse(503, "the audit log cannot be written, so the job was not queued: an operator must make it writable (see the server's log), then send this again");
    return json(job, 202, { location: `${base}/jobs/${job.id}` });
  });
  app.get(`${base}/jobs`, () => (jobs ? json({ jobs: jobs.list() }) : unavailable()));
  app.get(`${base}/jobs/:id`, (c) => {
    if (!jobs) return unavailable();
    const job = jobs.get(c.req.param("id"));
    return job ? json(job) : unknownJob(base);
  });
  app.post(`${base}/jobs/:id/cancel`, async (c) => {
    if (!jobs) return unavailable();
    const id = c.req.param("id");
    const cancelled = JOB_ID.test(id) ? await jobs.cancel(id, who(c)) : undefined;
    if (!cancelled) return unknownJob(base);
    if (cancelled.kind === "finished") return problemResponse(409, `job ${id} has ${cancelled.job.state} already; there is nothing to cancel`, {}, { job: cancelled.job });
    return json(cancelled.job, cancelled.kind === "stopping" ? 202 : 200);
  });
  const refuse = (allow: string) => () => problemResponse(405, `only ${allow} are allowed here`, { allow });
  app.all(`${base}/jobs`, refuse("GET, HEAD, POST"));
  app.all(`${base}/jobs/:id`, refuse("GET, HEAD"));
  app.all(`${base}/jobs/:id/cancel`, refuse("POST"));
  return app;
}

const unknownJob = (base: string) => problemResponse(404, `there is no such job (finished jobs are kept for a while); ${base}/jobs lists them`);

/** The job asked for, or what is wrong with the body, naming the field. */
function parseJobRequest(json: unknown): JobRequest | string {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return `the body must be a JSON object, e.g. ${EXAMPLE}`;
  const { kind, run, ...rest } = json as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `${unknown.map((k) => `"${k.slice(0, 40)}"`).join(", ")}: not a field of a job; give "kind" ("rebuild" or "cleanup") and, for one run, "run"`;
  if (kind === "cleanup") return run === undefined ? { kind } : `"run": a cleanup is of the whole dist directory; leave "run" out`;
  if (kind !== "rebuild") return `"kind" must be "rebuild" or "cleanup"`;
  if (run === undefined) return { kind, runs: "all" };
  if (typeof run !== "string" || !isRunFolderName(run) || run.includes("/") || run.includes("\\") || run.length > 255) return `"run" must be the name of a run folder in runs/, e.g. "2026-06-01-askja"`;
  return { kind, runs: [run] };
}
