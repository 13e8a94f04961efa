/**
 * GET /point as a plain reply (status, headers, body), shared by the Hono route and the node fast path:
 * parameters checked, the run selected, the place checked against the run's grids, validators compared (the
 * ETag is made of the run's content hash and the query, so a 304 writes no answer), then the answer.
 * Synchronous when the run's artefact list and grids are in memory; a promise otherwise (the fast path then
 * leaves the request to the app, which waits).
 */
import { PROBLEM_CONTENT_TYPE } from "../contract/problem.ts";
import type { Artefact, PublishedRun } from "../contract/releaseIndex.ts";
import { parseInstant } from "../time/instant.ts";
import { conditionsOutcome, formatHttpDate, PRECONDITION_FAILED_DETAIL, type Conditions } from "./http.ts";
import type { PointGridStore, ServedGrid } from "./pointGrids.ts";
import { answerPoint, coordinateParameter, placesIn, pointProblem, timeParameter, withoutGrids } from "./pointQuery.ts";
import { problemJson } from "./problem.ts";
import type { ServedRelease } from "./releaseSource.ts";
import { CORS_HEADERS, TAG_HEADERS, type Representations } from "./representation.ts";
import { answerModified, selectRun } from "./select.ts";
import { cacheControl, type CachePolicy } from "./cachePolicy.ts";


/** Made once per date rather than per request (a published run's dates never change). */
const datesOf = new Map<string, { modifiedMs: number; lastModified: string }>();
function answerDates(modified: string): { modifiedMs: number; lastModified: string } {
  let dates = datesOf.get(modified);
  if (dates === undefined) {
    if (datesOf.size >= 1024) datesOf.clear();
    const modifiedMs = parseInstant(modified)!;
    datesOf.set(modified, (dates = { modifiedMs, lastModified: formatHttpDate(modifiedMs) }));
  }
  return dates;
}
const policyTagHeaders = (tags: string): Record<string, string> => Object.fromEntries(TAG_HEADERS.map((name) => [name, tags]));

const JSON_TYPE = "application/json;charset=UTF-8";

/**
 * The headers every answer of a run with one cache policy shares (all but the ETag and Expires), made once
 * per policy: a request copies them in one go rather than assembling them.
 */
const sharedHeadersOf = new WeakMap<CachePolicy, { lastModified: string; headers: Record<string, string> }>();
function sharedHeaders(policy: CachePolicy, lastModified: string): Record<string, string> {
  let shared = sharedHeadersOf.get(policy);
  // A policy is one run's, latest or pinned: its answers' date changes only with a new release (select.ts, answerModified).
  if (shared === undefined || shared.lastModified !== lastModified) {
    shared = { lastModified, headers: { "last-modified": lastModified, "cache-control": cacheControl(policy), ...policyTagHeaders(policy.tags), ...CORS_HEADERS } };
    sharedHeadersOf.set(policy, shared);
  }
  return shared.headers;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** Undefined for 204 and 304. */
  body: Buffer | string | undefined;
  /**
   * The body is the last answer's bytes, which the next answer overwrites: send it before answering again,
   * and call keepLastAnswer() if the send is not done at once (or copy it).
   */
  transient?: boolean;
}

export interface PointContext {
  base: string;
  current(): ServedRelease | undefined;
  /** The artefacts of a run whose keys start with a prefix (ReleaseSource.readRunArtefacts). */
  runArtefacts(run: PublishedRun, prefix: string): Record<string, Artefact> | Promise<Record<string, Artefact>>;
  grids: PointGridStore;
  representations: Representations;
}

/** If-Match and If-Unmodified-Since are left to the app by the fast path. */
export interface PointRequest extends Conditions {
  /** All values of a query parameter, undefined when absent. */
  query(name: string): string[] | undefined;
}

const problem = (status: number, detail: string): Reply => ({
  status,
  headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", "access-control-allow-origin": "*" },
  body: problemJson(status, detail),
});

export function pointReply(context: PointContext, request: PointRequest): Reply | Promise<Reply> {
  const latitude = coordinateParameter("lat", request.query("lat"), 90);
  if ("kind" in latitude) return problem(latitude.status, latitude.detail);
  const longitude = coordinateParameter("lon", request.query("lon"), 180);
  if ("kind" in longitude) return problem(longitude.status, longitude.detail);
  const lat = latitude.value;
  const lon = longitude.value;
  const time = timeParameter(request.query("time"));
  if (time && "kind" in time) return problem(time.status, time.detail);
  const reftimes = request.query("reftime");
  const release = context.current();
  const run = selectRun(release, reftimes, context.base);
  if (run === undefined) {
    const nothing = context.representations.policies.nothingPublished;
    return { status: 204, headers: { "cache-control": cacheControl(nothing), expires: context.representations.expiresIn(nothing.seconds), ...policyTagHeaders(nothing.tags), ...CORS_HEADERS }, body: undefined };
  }
  if ("kind" in run) return problem(run.status, run.detail);

  // As the run's own JSON: tagged with the run (and latest, when unpinned), so a publish purges it from shared caches.
  const policy = context.representations.policies.model(run.reftime, reftimes !== undefined, false);
  const { modifiedMs, lastModified } = answerDates(answerModified(release!, run, reftimes !== undefined));
  // The run's content and the query itself, as they are (no hashing per request): a run changed gives new tags.
  const etag = `"${run.contentSha256.slice(0, 20)}:${latitude.json}:${longitude.json}${time ? `:${time.ms}` : ""}"`;
  const headers: Record<string, string> = { ...sharedHeaders(policy, lastModified), etag, expires: context.representations.expiresIn(policy.seconds) };
  // Validators are compared once the place is known to have an answer: a place outside every domain (or a
  // time outside the forecast) is a 422 whatever the client holds, never a 304.
  // If-Match, If-Unmodified-Since, then If-None-Match, If-Modified-Since (RFC 9110 §13.2.2).
  const outcome = conditionsOutcome(request, etag, modifiedMs);
  const failed = outcome === "failed";
  const notModified = outcome === "not modified";
  const withoutBody = (): Reply => (failed ? problem(412, PRECONDITION_FAILED_DETAIL) : { status: 304, headers, body: undefined });
  const ok = (answer: Buffer, transient: boolean): Reply =>
    failed || notModified ? withoutBody() : { status: 200, headers: { ...headers, "content-type": JSON_TYPE, "content-length": String(answer.length) }, body: answer, transient };
  const known = context.grids.answer(etag);
  if (known !== undefined) return ok(known, false);
  const finish = (grids: readonly ServedGrid[]): Reply => {
    if (grids.length === 0) {
      const refusal = withoutGrids(run, "query");
      return problem(refusal.status, refusal.detail);
    }
    if (failed || notModified) {
      const refusal = pointProblem(run.reftime, grids, placesIn(grids, lat, lon), lat, lon, time);
      return refusal ? problem(refusal.status, refusal.detail) : withoutBody();
    }
    const answer = answerPoint(run.reftime, grids, lat, lon, time, latitude.json, longitude.json);
    if ("kind" in answer) return problem(answer.status, answer.detail);
    context.grids.rememberAnswer(etag, answer);
    return ok(answer, true);
  };
  const grids = context.grids.gridsOfRun(run, context.runArtefacts);
  // A reply made later (the grids were loading) is sent later still: by then other answers may have been
  // written over its bytes, so it gets its own copy.
  return grids instanceof Promise ? grids.then((loaded) => lasting(finish(loaded))) : finish(grids);
}

/** A reply whose body is its own (a copy of a transient answer), to keep beyond the current turn. */
export function lasting(reply: Reply): Reply {
  return reply.transient && Buffer.isBuffer(reply.body) ? { ...reply, body: Buffer.from(reply.body), transient: false } : reply;
}
