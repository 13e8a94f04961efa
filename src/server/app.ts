/**
 * The Hono application: every endpoint of the specification, answered from the published release.
 * At request time it only selects (reftime, encoding, representation) and checks validators; bodies,
 * ETags and dates were all made at build time and are held in memory. Each group of addresses is a
 * Hono app of its own in routes/, mounted here in turn behind the access rules.
 */
import { Hono, type Context } from "hono";
import { DEFAULT_ACCESS_RULES } from "../auth/accessRules.ts";
import type { Artefact, PublishedRun, RunArtefacts, StoredBody } from "../contract/releaseIndex.ts";
import type { CheckResult } from "../build/check.ts";
import type { JobBoard } from "../operator/jobs.ts";
import type { AuditLog } from "../operator/auditLog.ts";
import type { SettingsStore } from "../operator/settings.ts";
import type { CachePurge } from "../contract/cachePurges.ts";
import { formatInstant } from "../time/instant.ts";
import { createAccessControl, type AccessControl } from "./accessControl.ts";
import { problemResponse } from "./problem.ts";
import type { ServedRelease } from "./releaseSource.ts";
import { Representations } from "./representation.ts";
import { configRoutes } from "./routes/config.ts";
import { dataRoutes } from "./routes/data.ts";
import { queryRoutes } from "./routes/query.ts";
import { PointGridStore } from "./pointGrids.ts";
import { documentRoutes } from "./routes/documents.ts";
import { jobRoutes } from "./routes/jobs.ts";
import { operatorRoutes } from "./routes/operator.ts";
import { createResponder } from "./routes/respond.ts";
import { tokenRoutes } from "./routes/token.ts";
import { viewerRoutes } from "./routes/viewer.ts";

export const PRODUCT_PATH = "/volcanicashforecast/0.1";

/** What the app needs of a release source (ReleaseSource, or a fixed release in tests). */
export interface ReleaseView {
  readonly current: ServedRelease | undefined;
  readonly loadError: string | undefined;
  body(stored: StoredBody): Buffer | Promise<Buffer>;
  runArtefacts(run: PublishedRun): RunArtefacts | Promise<RunArtefacts>;
  /** A stored body read whole and not kept in the body cache (point-query grids have their own bound). */
  readWhole(stored: StoredBody): Promise<Buffer>;
  /** The artefacts of a run whose keys start with `prefix`, read and not kept (the point-query grids keep what they need). */
  readRunArtefacts(run: PublishedRun, prefix: string): Promise<Record<string, Artefact>>;
}

export interface AppOptions {
  source: ReleaseView;
  /** Put in front of the product path, e.g. `/weatherapi`; empty by default. */
  prefix?: string;
  /** Earlier product versions that were removed: their addresses answer 404. */
  removedVersions?: readonly string[];
  /** Static documents made once at start: the terms of service page and the OpenAPI document. */
  termsOfService: Buffer;
  openapi: Buffer;
  /** Shared with the fast path in front of the app, so both send the same headers. */
  representations?: Representations;
  /** The access rules and token check in front of every route; the default rules with no sign-in when absent. */
  accessControl?: AccessControl;
  /** GET /config: the effective configuration, secrets left out; made once at start. */
  effectiveConfig?: Record<string, unknown>;
  /** What operator actions need; without it they answer 503 (`serve` alone does not know runs/). */
  operator?: OperatorOptions;
  /** POST /token and /login; without it every login fails as with an unknown user (no users configured). */
  tokenEndpoint?: (c: Context) => Promise<Response>;
  now?: () => number;
  /** The point-query grids, loaded on demand under byte bounds; the default bounds when absent. */
  pointGrids?: PointGridStore;
}

export interface OperatorOptions {
  runsDir: string;
  archiveDir: string;
  audit: AuditLog;
  /** Rebuild and cleanup jobs, run on the watcher (`ashcast start`); /jobs answers 503 without it. */
  jobs?: JobBoard;
  /** Validates an uploaded run folder as a build would (checkInWorker); uploads answer 503 without it. */
  validate?: (dir: string) => Promise<CheckResult>;
  /** What POST /config changes (upload limits); the defaults, unchangeable, without it. */
  settings?: SettingsStore;
  /** The recent purges of shared caches by the process that publishes (`start --purge`), shown by /datasets. */
  cachePurges?: () => readonly CachePurge[];
}

/** `prefix` checked and without trailing slashes, followed by the product path. */
export function productBase(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/\/+$/, "");
  if (trimmed && !/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) throw new Error(`prefix "${trimmed}" must look like /weatherapi`);
  return `${trimmed}${PRODUCT_PATH}`;
}

/** A product version that may be listed as removed: a version number other than the one served. */
export const isRemovableVersion = (version: string): boolean => /^\d+(\.\d+)*$/.test(version) && version !== "0.1";

export function createApp(options: AppOptions): Hono {
  const base = productBase(options.prefix);
  const prefix = base.slice(0, -PRODUCT_PATH.length);
  const removedVersions = options.removedVersions ?? [];
  for (const version of removedVersions) {
    if (!isRemovableVersion(version)) throw new Error(`createApp: removed version "${version}" must be a version number other than 0.1`);
  }
  const now = options.now ?? Date.now;
  const { source, operator } = options;
  const representations = options.representations ?? new Representations(now);
  const respond = createResponder(source, representations);
  const startedAt = formatInstant(now());

  const app = new Hono();
  // Before any route: a protected address is refused before it is even looked up.
  app.use("*", (options.accessControl ?? createAccessControl({ base, rules: DEFAULT_ACCESS_RULES, verifier: undefined })).middleware);
  app.route("/", dataRoutes(base, source, respond));
  app.route("/", queryRoutes(base, { source, representations, grids: options.pointGrids ?? new PointGridStore({ read: (stored) => source.readWhole(stored) }) }));
  app.route("/", documentRoutes(base, { source, respond, startedAt, now, termsOfService: options.termsOfService, openapi: options.openapi }));
  app.route("/", configRoutes(base, { respond, startedAt, removedVersions, effectiveConfig: options.effectiveConfig, operator }));
  app.route("/", viewerRoutes(base, source, respond));
  app.route("/", tokenRoutes(base, options.tokenEndpoint));
  app.route("/", operatorRoutes(base, source, operator, now));
  app.route("/", jobRoutes(base, operator?.jobs, operator?.runsDir));
  for (const version of removedVersions) {
    const removed = `${prefix}/volcanicashforecast/${version}`;
    const gone = () => problemResponse(404, `version ${version} of this product was removed; use ${base}`);
    app.all(removed, gone);
    app.all(`${removed}/*`, gone);
  }
  app.notFound((c) => problemResponse(404, `nothing is served at ${c.req.path.slice(0, 200)}; the product lives under ${base}`));
  app.onError((error) => {
    console.error(`Internal error while answering a request: ${error.stack ?? error.message}`);
    return problemResponse(500, "internal error; it has been logged");
  });
  return app;
}
