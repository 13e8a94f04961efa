/**
 * The Hono application: every endpoint of the specification, answered from the published release.
 * At request time it only selects (reftime, encoding, representation) and checks validators; bodies,
 * ETags and dates were all made at build time and are held in memory.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { Hono, type Context } from "hono";
import type { Artefact, ListArtefact, PublishedRun, RunArtefacts, StoredBody } from "../contract/releaseIndex.ts";
import { formatInstant } from "../time/instant.ts";
import { problemResponse } from "./problem.ts";
import { readSmallJson } from "./jsonBody.ts";
import { outOfSpace } from "../errors.ts";
import { healthText } from "./health.ts";
import type { ServedRelease } from "./releaseSource.ts";
import { CORS_HEADERS, Representations } from "./representation.ts";
import { LoginBackoff } from "../auth/loginBackoff.ts";
import { createTokenEndpoint } from "./tokenEndpoint.ts";
import { DEFAULT_ACCESS_RULES } from "../auth/accessRules.ts";
import { createAccessControl, signedInUser, type AccessControl } from "./accessControl.ts";
import type { AuditLog } from "../operator/auditLog.ts";
import { withdrawFolders } from "../operator/withdraw.ts";
import { oneAtATime } from "../flow/oneAtATime.ts";
import { DEFAULT_UPLOAD_LIMITS, formatBytes } from "../operator/upload/receive.ts";
import { RuntimeSettings, settingsProblems, type SettingsStore } from "../operator/settings.ts";
import { uploadRun } from "../operator/upload/uploadRun.ts";
import type { JobBoard } from "../operator/jobs.ts";
import { addJobRoutes } from "./jobRoutes.ts";
import type { CheckResult } from "../build/check.ts";
import { CACHE_SECONDS, locateResource, reftimeParameter, selectModel, selectRun, selectViewerFile, type ModelFormat, type Refusal } from "./select.ts";

export const PRODUCT_PATH = "/volcanicashforecast/0.1";
const ALLOW = "GET, HEAD, OPTIONS";
const LOGIN_ALLOW = "POST, OPTIONS";
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  "access-control-allow-methods": "GET, HEAD",
  "access-control-allow-headers": "Accept, Accept-Encoding, If-None-Match, If-Modified-Since, User-Agent",
  "access-control-max-age": "86400",
} as const;

/** A browser signing in from another origin: a form POST. */
const LOGIN_PREFLIGHT_HEADERS = {
  ...PREFLIGHT_HEADERS,
  "access-control-allow-methods": "POST",
  "access-control-allow-headers": "Content-Type",
} as const;

/** What the app needs of a release source (ReleaseSource, or a fixed release in tests). */
export interface ReleaseView {
  readonly current: ServedRelease | undefined;
  readonly loadError: string | undefined;
  body(stored: StoredBody): Buffer | Promise<Buffer>;
  runArtefacts(run: PublishedRun): RunArtefacts | Promise<RunArtefacts>;
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
}

/** `prefix` checked and without trailing slashes, followed by the product path. */
export function productBase(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/\/+$/, "");
  if (trimmed && !/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) throw new Error(`prefix "${trimmed}" must look like /weatherapi`);
  return `${trimmed}${PRODUCT_PATH}`;
}

export function createApp(options: AppOptions): Hono {
  const base = productBase(options.prefix);
  const prefix = base.slice(0, -PRODUCT_PATH.length);
  for (const version of options.removedVersions ?? []) {
    if (!/^\d+(\.\d+)*$/.test(version) || version === "0.1") throw new Error(`createApp: removed version "${version}" must be a version number other than 0.1`);
  }
  const now = options.now ?? Date.now;
  const representations = options.representations ?? new Representations(now);
  const { source } = options;
  const app = new Hono();
  // Before any route: a protected address is refused before it is even looked up.
  app.use("*", (options.accessControl ?? createAccessControl({ base, rules: DEFAULT_ACCESS_RULES, verifier: undefined })).middleware);

  /** Sends one artefact: encoding by Accept-Encoding, 304 by the validators, headers a CDN can use. */
  async function send(c: Context, artefact: Artefact, modified: string, cacheSeconds: number, how: { varyAccept?: boolean; body?: Buffer } = {}): Promise<Response> {
    const chosen = representations.choose(artefact, modified, cacheSeconds, how.varyAccept ?? false, {
      acceptEncoding: c.req.header("accept-encoding"),
      ifNoneMatch: c.req.header("if-none-match"),
      ifModifiedSince: c.req.header("if-modified-since"),
    });
    const headers = new Headers();
    for (let i = 0; i < chosen.headers.length; i += 2) headers.set(chosen.headers[i]!, chosen.headers[i + 1]!);
    if (chosen.status === 304) return new Response(null, { status: 304, headers });
    const body = how.body ?? (await source.body(chosen.stored));
    return new Response(body, { status: 200, headers });
  }

  const refuse = (refusal: Refusal) => problemResponse(refusal.status, refusal.detail);

  async function model(c: Context, format: ModelFormat): Promise<Response> {
    const selected = selectModel(source.current, c.req.queries("reftime"), format, c.req.header("accept"), base);
    if (selected.kind === "problem") return refuse(selected);
    if (selected.kind === "nothing published") return noContent();
    const list = await source.runArtefacts(selected.run);
    return send(c, list.artefacts[selected.key]!, selected.run.modified, selected.cacheSeconds, { varyAccept: selected.varyAccept });
  }

  const noContent = () =>
    new Response(null, { status: 204, headers: { "cache-control": `public, max-age=${CACHE_SECONDS.latest}`, expires: representations.expiresIn(CACHE_SECONDS.latest), ...CORS_HEADERS } });

  /** 301 to `path` with a trailing slash, query kept. */
  const withSlash = (path: string) => (c: Context) => new Response(null, { status: 301, headers: { location: `${path}/${new URL(c.req.url).search}`, ...CORS_HEADERS } });

  const routes: Array<[string, (c: Context) => Response | Promise<Response>]> = [
    // Without the slash, the relative timestep urls (`./resources?...`) would resolve one level up.
    [`${base}`, withSlash(base)],
    [`${base}/`, (c) => model(c, "negotiate")],
    [`${base}/.json`, (c) => model(c, "json")],
    [`${base}/.png`, (c) => model(c, "png")],
    [`${base}/reftimes`, (c) => {
      const release = source.current;
      return release ? sendList(c, release.index.artefacts[release.index.lists.reftimes]!) : noContent();
    }],
    [`${base}/changelog`, (c) => {
      const release = source.current;
      return release ? sendList(c, release.index.artefacts[release.index.lists.changelog]!) : noContent();
    }],
    [`${base}/resources`, async (c) => {
      const release = source.current;
      if (!release) return noContent();
      const names = c.req.queries("name");
      if (!names) {
        // The shared resources, and those of one run (the latest, or ?reftime=): never all runs at once.
        const run = selectRun(release, c.req.queries("reftime"), base);
        if (run && "kind" in run) return refuse(run);
        const runNames = run ? Object.keys((await source.runArtefacts(run)).resources) : [];
        return new Response(JSON.stringify([...Object.keys(release.index.resources), ...runNames]), {
          headers: { "content-type": "application/json;charset=UTF-8", "cache-control": `public, max-age=${CACHE_SECONDS.lists}`, ...CORS_HEADERS },
        });
      }
      if (names.length > 1) return problemResponse(400, "give the name parameter once");
      const name = names[0]!;
      const missing = () => problemResponse(404, `no resource is named "${name.slice(0, 200)}"; ${base}/resources lists the names`);
      const located = locateResource(release, name);
      if (!located) return missing();
      if (located.kind === "shared") return sendList(c, located.artefact, CACHE_SECONDS.resources);
      const list = await source.runArtefacts(located.run);
      if (!Object.hasOwn(list.resources, name)) return missing();
      return send(c, list.artefacts[list.resources[name]!]!, located.run.modified, CACHE_SECONDS.resources);
    }],
    // Protected by the access rules (operator): the build report, every run folder with its state and problems.
    [`${base}/datasets`, async () => {
      const release = source.current;
      if (!release) return new Response(null, { status: 204, headers: { "cache-control": "no-store", ...CORS_HEADERS } });
      const report = release.index.artefacts[release.index.lists.report]!;
      return new Response(await source.body(report.identity), { headers: { "content-type": report.contentType, "cache-control": "no-store", ...CORS_HEADERS } });
    }],
    [`${base}/config`, (c) => sendDocument(c, configDocument)],
    [`${base}/healthz`, () => {
      const health = healthText(source, now());
      return new Response(health.text, { status: health.status, headers: { "content-type": "text/plain;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
    }],
    [`${base}/doc/TermsOfService`, (c) => sendDocument(c, termsOfService)],
    // The map viewer (issue 7): static files of the release; it reads the data from the endpoints above.
    // Without the slash, its relative urls (`viewer.<hash>.js`, `../.json`) would resolve one level up.
    [`${base}/viewer`, withSlash(`${base}/viewer`)],
    [`${base}/viewer/`, (c) => viewerFile(c, "")],
    [`${base}/viewer/:file`, (c) => viewerFile(c, c.req.param("file") ?? "index.html")],
    [`${base}/openapi.json`, (c) => sendDocument(c, openapi)],
  ];

  const startedAt = formatInstant(now());
  const termsOfService = documentArtefact(options.termsOfService, "text/html;charset=UTF-8");
  const openapi = documentArtefact(options.openapi, "application/json;charset=UTF-8");
  // Made again only when an operator changes a setting.
  const makeConfigDocument = () => {
    const settings = options.operator?.settings;
    const runtime = settings ? { uploadLimits: settings.uploadLimits, changedSettings: settings.stored } : {};
    return documentArtefact(
      Buffer.from(`${JSON.stringify({ base, removedVersions: options.removedVersions ?? [], cacheSeconds: CACHE_SECONDS, ...options.effectiveConfig, ...runtime }, null, 2)}\n`),
      "application/json;charset=UTF-8",
    );
  };
  let configDocument = makeConfigDocument();
  // Documents are not in a release (never compressed: they are small and rarely asked for).
  const sendDocument = (c: Context, document: { artefact: Artefact; body: Buffer }) => send(c, document.artefact, startedAt, CACHE_SECONDS.documents, { body: document.body });
  const sendList = (c: Context, artefact: ListArtefact, cacheSeconds: number = CACHE_SECONDS.lists) => send(c, artefact, artefact.modified, cacheSeconds);
  const viewerFile = (c: Context, file: string) => {
    const release = source.current;
    const selected = release && selectViewerFile(release, file);
    if (!selected) return problemResponse(404, release?.index.viewer ? `the viewer has no file ${file.slice(0, 100)}; it starts at ${base}/viewer/` : "no viewer is published yet: it comes with the first release");
    return sendList(c, selected.artefact, selected.cacheSeconds);
  };

  // Protected by the access rules (operator): a validated change of the allowed settings, persisted; and back to the defaults.
  const changeSettings = async (c: Context, action: "config" | "config-reset") => {
    const who = signedInUser(c.req.raw) ?? "(not signed in)";
    const settings = options.operator?.settings;
    if (!settings) return problemResponse(503, "settings can be changed only where the service runs with ashcast start");
    let patch: RuntimeSettings = {};
    if (action === "config") {
      const body = await readSmallJson(c, `{"uploadMaxBytes": 536870912}`);
      if (body instanceof Response) return body;
      const parsed = RuntimeSettings.safeParse(body.json);
      if (!parsed.success) {
        const detail = settingsProblems(parsed.error).join("; ");
        await options.operator!.audit.record({ who, action, target: "settings", outcome: "refused", detail });
        return problemResponse(400, detail);
      }
      patch = parsed.data;
    }
    const stored = action === "config" ? await settings.change(patch) : await settings.reset();
    configDocument = makeConfigDocument();
    await options.operator!.audit.record({ who, action, target: "settings", outcome: "done", detail: JSON.stringify(stored) });
    return new Response(JSON.stringify({ uploadLimits: settings.uploadLimits, changedSettings: stored }), { headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
  };
  app.post(`${base}/config`, (c) => changeSettings(c, "config"));
  app.post(`${base}/config/reset`, (c) => changeSettings(c, "config-reset"));
  app.all(`${base}/config/reset`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));

  for (const [path, handler] of routes) {
    const allow = path === `${base}/config` ? `${ALLOW}, POST` : ALLOW;
    app.get(path, handler);
    app.options(path, () => new Response(null, { status: 204, headers: { allow, ...PREFLIGHT_HEADERS } }));
    app.all(path, () => problemResponse(405, `only ${allow} are allowed here`, { allow }));
  }
  const tokenEndpoint =
    options.tokenEndpoint ??
    createTokenEndpoint({ users: {}, peppers: [], backoff: new LoginBackoff(), issueToken: () => Promise.reject(new Error("Internal error: a token was issued without users")) });
  for (const path of [`${base}/token`, `${base}/login`]) {
    app.post(path, tokenEndpoint);
    app.options(path, () => new Response(null, { status: 204, headers: { allow: LOGIN_ALLOW, ...LOGIN_PREFLIGHT_HEADERS } }));
    app.all(path, () => problemResponse(405, `only ${LOGIN_ALLOW} are allowed here`, { allow: LOGIN_ALLOW }));
  }
  // Protected by the access rules (operator). The reftime's folders leave runs/ for the archive; the next
  // build withdraws the run and says so in the changelog.
  app.post(`${base}/withdraw`, async (c) => {
    const who = signedInUser(c.req.raw) ?? "(not signed in)";
    const { operator } = options;
    if (!operator) return problemResponse(503, "withdrawing needs the runs directory: use ashcast start, which watches it");
    const reftime = reftimeParameter(c.req.queries("reftime"));
    if (reftime === undefined) return problemResponse(400, "give the reftime of the run to withdraw: ?reftime=YYYY-MM-DDTHH:MM:SSZ");
    if (typeof reftime === "object") return refuse(reftime);
    const folders = (source.current?.report?.runs ?? []).filter((run) => run.reftime === reftime).map((run) => run.folder);
    if (folders.length === 0) {
      await operator.audit.record({ who, action: "withdraw", target: reftime, outcome: "refused", detail: "no run folder has this reftime" });
      return problemResponse(404, `no run folder has reftime ${reftime}; ${base}/datasets lists them`);
    }
    try {
      const result = await withdrawFolders({ runsDir: operator.runsDir, archiveDir: operator.archiveDir, reftime, folders, now: new Date(now()) });
      await operator.audit.record({ who, action: "withdraw", target: reftime, outcome: "done", detail: `moved ${result.moved.map((m) => m.folder).join(", ") || "nothing (already gone)"} to ${operator.archiveDir}` });
      return new Response(JSON.stringify({ reftime, withdrawn: result.moved.map((m) => m.folder), note: "the next build publishes the withdrawal" }), {
        status: 202,
        headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS },
      });
    } catch (error) {
      await operator.audit.record({ who, action: "withdraw", target: reftime, outcome: "failed", detail: (error as Error).message });
      throw error;
    }
  });
  app.all(`${base}/withdraw`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));

  // Protected by the access rules (operator). A run's files (multipart) or one zip archive: validated as a
  // build would, then moved into runs/ whole, where the watcher publishes it.
  // One validation at a time: reading model output takes memory and CPU that uploads must not multiply.
  const validationsInTurn = oneAtATime();
  app.post(`${base}/upload`, async (c) => {
    const who = signedInUser(c.req.raw) ?? "(not signed in)";
    const { operator } = options;
    if (!operator?.validate) return problemResponse(503, "uploading needs the runs directory and the pipeline: use ashcast start, which watches it");
    const uploadLimits = operator.settings?.uploadLimits ?? DEFAULT_UPLOAD_LIMITS;
    const declared = Number(c.req.header("content-length"));
    if (declared > uploadLimits.maxBytes) {
      await operator.audit.record({ who, action: "upload", target: c.req.query("folder") ?? "", outcome: "refused", detail: `${declared} bytes declared` });
      return problemResponse(413, `the upload limit is ${formatBytes(uploadLimits.maxBytes)}; this body declares ${declared} bytes`, { connection: "close" });
    }
    const body = c.req.raw.body;
    if (!body) return problemResponse(400, "the request has no body: send the run's files as multipart/form-data, or one zip archive as application/zip");
    const folder = c.req.query("folder");
    const validate = operator.validate;
    const outcome = await uploadRun({
      body: Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>),
      contentType: c.req.header("content-type") ?? "",
      ...(folder !== undefined ? { folder } : {}),
      runsDir: operator.runsDir,
      limits: uploadLimits,
      validate: (dir) => validationsInTurn(() => validate(dir)),
      now: new Date(now()),
    }).catch(async (error: unknown) => {
      await operator.audit.record({ who, action: "upload", target: folder ?? "", outcome: "failed", detail: (error as Error).message });
      if (outOfSpace(error)) return { kind: "out-of-space" as const };
      throw error;
    });
    if (outcome.kind === "out-of-space") return problemResponse(507, "the server has no space left to store the upload; nothing was kept. Send it again once an operator has freed space in runs/.");
    if (outcome.kind === "refused") {
      await operator.audit.record({ who, action: "upload", target: folder ?? "", outcome: "refused", detail: outcome.detail });
      return problemResponse(outcome.status, outcome.detail);
    }
    if (outcome.kind === "invalid") {
      const errors = outcome.report.issues.filter((issue) => issue.severity === "error").length;
      await operator.audit.record({ who, action: "upload", target: outcome.report.folder, outcome: "refused", detail: `${errors} validation error(s)` });
      return problemResponse(422, `the run is not valid (${errors} error${errors === 1 ? "" : "s"}); nothing was published. The report lists each problem with its file and fix.`, {}, { report: outcome.report });
    }
    await operator.audit.record({ who, action: "upload", target: outcome.folder, outcome: "done", detail: `${outcome.type} run ${outcome.reftime}` });
    const answer = { folder: outcome.folder, reftime: outcome.reftime, type: outcome.type, warnings: outcome.warnings, url: `${base}/?reftime=${outcome.reftime}`, note: "the run is in runs/; the watcher publishes it within seconds" };
    return new Response(JSON.stringify(answer), { status: 202, headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
  });
  app.all(`${base}/upload`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));
  addJobRoutes(app, base, { ...(options.operator?.jobs ? { jobs: options.operator.jobs } : {}), ...(options.operator ? { runsDir: options.operator.runsDir } : {}) });
  addJobRoutes(app, base, { ...(options.operator?.jobs ? { jobs: options.operator.jobs } : {}), ...(options.operator ? { runsDir: options.operator.runsDir } : {}) });
  for (const version of options.removedVersions ?? []) {
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

function documentArtefact(body: Buffer, contentType: string): { artefact: Artefact; body: Buffer } {
  const digest = createHash("sha256").update(body).digest();
  return {
    body,
    artefact: {
      contentType,
      sha256: digest.toString("hex"),
      identity: { file: `memory:${digest.toString("hex")}`, size: body.length, etag: `"${digest.toString("base64url").slice(0, 27)}"` },
    },
  };
}
