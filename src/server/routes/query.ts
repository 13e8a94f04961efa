/**
 * The point-query endpoints (issue 16): `GET /point` (the ash at a place) and `POST /route` (what a flight
 * meets along its path), answered from the published runs' point-query grids, never from NetCDF.
 * `/point` is cached and validated like the other data routes: its ETag is made from the run's content
 * hash and the query, so a 304 costs no look-up.
 */
import type { Context, Hono } from "hono";
import type { ReleaseView } from "../app.ts";
import { PointGridStore } from "../pointGrids.ts";
import { withoutGrids, type QueryProblem } from "../pointQuery.ts";
import { lasting, pointReply, type PointContext } from "../pointReply.ts";
import { problemResponse } from "../problem.ts";
import { CORS_HEADERS, type Representations } from "../representation.ts";
import { MAX_ROUTE_BODY_BYTES, parseRoute } from "../routeInput.ts";
import { answerRoute } from "../routeQuery.ts";
import { selectRun } from "../select.ts";
import { readOnlyRoutes } from "./respond.ts";
import { readLimited } from "../readLimited.ts";

const JSON_TYPE = "application/json;charset=UTF-8";
const ROUTE_ALLOW = "POST, OPTIONS";
const ROUTE_MEDIA = new Set(["application/geo+json", "application/json"]);

export interface QueryRouteOptions {
  source: ReleaseView;
  representations: Representations;
  grids: PointGridStore;
}

const refuse = (problem: QueryProblem | { status: number; detail: string }): Response => problemResponse(problem.status, problem.detail);

export function queryRoutes(base: string, options: QueryRouteOptions): Hono {
  const { source, representations, grids } = options;
  if (!(grids instanceof PointGridStore)) throw new Error("queryRoutes: grids must be a PointGridStore");

  const pointContext: PointContext = { base, current: () => source.current, runArtefacts: (run, prefix) => source.readRunArtefacts(run, prefix), grids, representations };

  async function point(c: Context): Promise<Response> {
    const made = pointReply(pointContext, { query: (name) => c.req.queries(name), ifNoneMatch: c.req.header("if-none-match"), ifModifiedSince: c.req.header("if-modified-since"), ifMatch: c.req.header("if-match"), ifUnmodifiedSince: c.req.header("if-unmodified-since") });
    // The app sends a body later than it is made: a transient answer is copied now, before any await lets
    // another request write over it (a reply made asynchronously is copied already).
    const reply = made instanceof Promise ? await made : lasting(made);
    return new Response(reply.body ?? null, { status: reply.status, headers: reply.headers });
  }

  async function route(c: Context): Promise<Response> {
    const media = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!ROUTE_MEDIA.has(media)) return problemResponse(415, "send the route as application/geo+json (a GeoJSON Feature with a LineString)");
    const bytes = await readLimited(c.req.raw, MAX_ROUTE_BODY_BYTES);
    const text = bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    if (text === undefined) return problemResponse(413, `the body is larger than ${MAX_ROUTE_BODY_BYTES / 1024 / 1024} MiB: simplify or split the route`);
    let json: unknown;
    try {
      // A byte order mark, as some editors save "UTF-8" files, is ignored (RFC 8259 allows it).
      json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (error) {
      return problemResponse(400, `the body is not JSON (${(error as Error).message.slice(0, 120)}); send a GeoJSON Feature`);
    }
    const parsed = parseRoute(json);
    if ("kind" in parsed) return refuse(parsed);
    const run = selectRun(source.current, c.req.queries("reftime"), base);
    // Nothing published: 204 like the GET routes, but as every POST answer here, for no cache to keep.
    if (run === undefined) return new Response(null, { status: 204, headers: { "cache-control": "no-store", ...CORS_HEADERS } });
    if ("kind" in run) return refuse(run);
    const runGrids = await grids.gridsOfRun(run, (r, prefix) => source.readRunArtefacts(r, prefix));
    if (runGrids.length === 0) return refuse(withoutGrids(run, "follow a route through"));
    const answer = answerRoute(run.reftime, runGrids, parsed);
    if ("kind" in answer) return refuse(answer);
    // A POST answer: not reusable by caches (RFC 9110 §9.3.3 allows it only with explicit freshness; none is given).
    return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": JSON_TYPE, "cache-control": "no-store", ...CORS_HEADERS } });
  }

  const group = readOnlyRoutes([[`${base}/point`, point]]);
  group.post(`${base}/route`, route);
  group.options(`${base}/route`, () =>
    new Response(null, {
      status: 204,
      headers: { allow: ROUTE_ALLOW, ...CORS_HEADERS, "access-control-allow-methods": "POST", "access-control-allow-headers": "Content-Type, User-Agent", "access-control-max-age": "86400" },
    }),
  );
  group.all(`${base}/route`, () => problemResponse(405, `only ${ROUTE_ALLOW} are allowed here`, { allow: ROUTE_ALLOW }));
  return group;
}

