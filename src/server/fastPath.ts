/**
 * The hot GETs answered straight on `node:http`, in front of the Hono app: a run's JSON or PNG (`/`,
 * `/.json`, `/.png`, with or without one plain `reftime`), the reftimes list, the changelog,
 * `/resources?name=` and the viewer's files under `/viewer/`, when what they need is already in
 * memory. Hono's Request/Response round trip costs more than the rest of such an answer (docs/benchmarks.md, "Serving"); everything else, and
 * anything unusual (encoded queries, errors, bodies not yet read), falls through to the app, which
 * answers with the same selection and the same prepared headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Artefact } from "../contract/releaseIndex.ts";
import type { ReleaseSource } from "./releaseSource.ts";
import type { Representations } from "./representation.ts";
import type { CachePolicy } from "./cachePolicy.ts";
import { pointReply, type PointContext } from "./pointReply.ts";
import { answerSent, keepLastAnswer } from "./pointQuery.ts";
import { answerModified, locateResource, selectModel, selectViewerFile, type ModelFormat } from "./select.ts";

type Route = { kind: "model"; format: ModelFormat } | { kind: "list"; list: "reftimes" | "changelog" } | { kind: "resource" };

/** One parameter whose value needs no decoding; anything else is left to the app's full query parsing. */
const PLAIN_QUERY = /^(reftime|name)=([A-Za-z0-9:._\/-]+)$/;

/** A query of `name=value` pairs none of which needs decoding (no `%`, no `+` for a space), as /point's usually are. */
const PLAIN_PAIRS = /^[a-z]+=[A-Za-z0-9.:_-]*(?:&[a-z]+=[A-Za-z0-9.:_-]*)*$/;

/** A parameter's values in a plain query, read without URLSearchParams (its parsing and look-ups showed in profiles at random places); undefined for any other query. */
function plainQuery(query: string): ((name: string) => string[] | undefined) | undefined {
  if (!PLAIN_PAIRS.test(query)) return undefined;
  const pairs = query.split("&");
  return (name) => {
    let values: string[] | undefined;
    for (const pair of pairs) if (pair.charCodeAt(name.length) === 61 /* = */ && pair.startsWith(name)) (values ??= []).push(pair.slice(name.length + 1));
    return values;
  };
}

function searchParams(query: string): (name: string) => string[] | undefined {
  const params = new URLSearchParams(query);
  return (name) => (params.has(name) ? params.getAll(name) : undefined);
}

export type FastPath = ((req: IncomingMessage, res: ServerResponse) => boolean) & { readonly answered: number };

export function createFastPath(options: {
  source: Pick<ReleaseSource, "current" | "cachedRunArtefacts" | "cachedBody">;
  base: string;
  representations: Representations;
  /** Whether the access rules make a GET of this path below the base public: only those are answered here. */
  publicGet: (pathBelowBase: string) => boolean;
  /** GET /point, answered here when the run's grids are in memory (the same reply as the app's). */
  point?: PointContext;
}): FastPath {
  const { source, base, representations } = options;
  const { policies } = representations;
  const pointPath = options.point && options.publicGet("/point") ? `${base}/point` : undefined;
  const routes = new Map<string, Route>([
    [`${base}/`, { kind: "model", format: "negotiate" }],
    [`${base}/.json`, { kind: "model", format: "json" }],
    [`${base}/.png`, { kind: "model", format: "png" }],
    [`${base}/reftimes`, { kind: "list", list: "reftimes" }],
    [`${base}/changelog`, { kind: "list", list: "changelog" }],
    [`${base}/resources`, { kind: "resource" }],
  ]);
  for (const path of [...routes.keys()]) if (!options.publicGet(path.slice(base.length))) routes.delete(path);
  const viewerPrefix = `${base}/viewer/`;
  // Whether the rules make each viewer file public, decided once per name the releases list (a bounded set).
  const viewerPublic = new Map<string, boolean>();
  let answered = 0;

  /** Answers and returns true, or returns false having written nothing. */
  function fastPath(req: IncomingMessage, res: ServerResponse): boolean {
    const method = req.method;
    if (method !== "GET" && method !== "HEAD") return false;
    const url = req.url ?? "";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const route = routes.get(path);
    if (path === pointPath) return point(url.slice(queryAt + 1), method, req, res);
    if (route === undefined) return path.startsWith(viewerPrefix) && viewerFile(path.slice(viewerPrefix.length), method, req, res);
    let parameter: string | undefined;
    if (queryAt !== -1) {
      const match = PLAIN_QUERY.exec(url.slice(queryAt + 1));
      if (match === null || match[1] !== (route.kind === "resource" ? "name" : route.kind === "model" ? "reftime" : undefined)) return false;
      parameter = match[2];
    }
    const release = source.current;
    if (release?.latest === undefined) return false;

    let artefact: Artefact | undefined;
    let modified: string;
    let policy: CachePolicy;
    if (route.kind === "model") {
      const selected = selectModel(release, parameter === undefined ? undefined : [parameter], route.format, req.headers.accept, base);
      if (selected.kind !== "run") return false;
      artefact = source.cachedRunArtefacts(selected.run)?.artefacts[selected.key];
      policy = policies.model(selected.run.reftime, selected.pinned, selected.varyAccept);
      modified = answerModified(release, selected.run, selected.pinned);
    } else if (route.kind === "list") {
      const list = release.index.artefacts[release.index.lists[route.list]]!;
      artefact = list;
      modified = list.modified;
      policy = policies[route.list];
    } else {
      if (parameter === undefined) return false;
      const located = locateResource(release, parameter);
      if (located === undefined) return false;
      if (located.kind === "shared") {
        artefact = located.artefact;
        modified = located.artefact.modified;
        policy = policies.resource(parameter, undefined);
      } else {
        const list = source.cachedRunArtefacts(located.run);
        const key = list !== undefined && Object.hasOwn(list.resources, parameter) ? list.resources[parameter] : undefined;
        artefact = key === undefined ? undefined : list!.artefacts[key];
        modified = located.run.modified;
        policy = policies.resource(parameter, located.run.reftime);
      }
    }
    if (artefact === undefined) return false;
    return answer(artefact, modified, policy, method, req, res);
  }

  /** GET /point when everything it needs is in memory; otherwise the app answers (and waits for the grids this started loading). */
  function point(query: string, method: string, req: IncomingMessage, res: ServerResponse): boolean {
    if (query.length > 300 || !options.point || req.headers["if-match"] !== undefined || req.headers["if-unmodified-since"] !== undefined) return false;
    const reply = pointReply(options.point, {
      query: plainQuery(query) ?? searchParams(query),
      ifNoneMatch: req.headers["if-none-match"],
      ifModifiedSince: req.headers["if-modified-since"],
    });
    if (reply instanceof Promise) {
      reply.catch(() => {}); // the app asks again and answers any failure
      return false;
    }
    const headers = reply.body === undefined || "content-length" in reply.headers ? reply.headers : { ...reply.headers, "content-length": String(Buffer.byteLength(reply.body)) };
    res.writeHead(reply.status, headers);
    if (method === "HEAD" || reply.body === undefined) res.end();
    else {
      res.end(reply.body);
      // Bytes the socket could not take at once (or queued behind an earlier answer; over TLS, every answer
      // until it is encrypted) are still the answer buffer's: the next answer goes elsewhere, and the buffer
      // is written into again once the response is sent.
      if (reply.transient && res.writableLength !== 0) {
        const held = keepLastAnswer();
        res.once("finish", () => answerSent(held));
      }
    }
    answered++;
    return true;
  }

  /** A file of the viewer (the query, the viewer's own state, plays no part); only plain names. */
  function viewerFile(file: string, method: string, req: IncomingMessage, res: ServerResponse): boolean {
    if (!/^[A-Za-z0-9._-]*$/.test(file)) return false;
    const release = source.current;
    const selected = release && selectViewerFile(release, file);
    if (!selected) return false;
    let allowed = viewerPublic.get(file);
    if (allowed === undefined) viewerPublic.set(file, (allowed = options.publicGet(`/viewer/${file}`)));
    if (!allowed) return false;
    return answer(selected.artefact, selected.artefact.modified, selected.page ? policies.viewerPage : policies.viewerAsset, method, req, res);
  }

  function answer(artefact: Artefact, modified: string, policy: CachePolicy, method: string, req: IncomingMessage, res: ServerResponse): boolean {
    // Preconditions (If-Match, If-Unmodified-Since) are rare on GET: the app answers them.
    if (req.headers["if-match"] !== undefined || req.headers["if-unmodified-since"] !== undefined) return false;
    const chosen = representations.choose(artefact, modified, policy, {
      acceptEncoding: req.headers["accept-encoding"],
      ifNoneMatch: req.headers["if-none-match"],
      ifModifiedSince: req.headers["if-modified-since"],
    });
    if (chosen.status === 304) {
      res.writeHead(304, chosen.headers);
      res.end();
    } else {
      const body = source.cachedBody(chosen.stored);
      if (body === undefined) return false;
      res.writeHead(200, chosen.headers);
      res.end(method === "HEAD" ? undefined : body);
    }
    answered++;
    return true;
  }

  return Object.defineProperty(fastPath, "answered", { get: () => answered }) as FastPath;
}
