/**
 * Starts the HTTP server on the published release: the release source, the app, and the listener.
 * Everything is prepared before the first request (documents rendered, release loaded).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { getRequestListener } from "@hono/node-server";
import { createApp, PRODUCT_PATH, productBase } from "./app.ts";
import { createFastPath, type FastPath } from "./fastPath.ts";
import { PointGridStore } from "./pointGrids.ts";
import { answerClientError, badTarget, problemJson, requestProblem, writeProblem } from "./problem.ts";
import { openApiDocument } from "./openapi.ts";
import { ReleaseSource } from "./releaseSource.ts";
import { Representations } from "./representation.ts";
import { createTokenEndpoint } from "./tokenEndpoint.ts";
import type { Context } from "hono";
import { LoginBackoff } from "../auth/loginBackoff.ts";
import { DEFAULT_ACCESS_RULES, loadAccessRules } from "../auth/accessRules.ts";
import { createAccessControl } from "./accessControl.ts";
import { createAuditLog } from "../operator/auditLog.ts";
import { SettingsStore } from "../operator/settings.ts";
import { sweepStaleUploads } from "../operator/upload/uploadRun.ts";
import { JobBoard } from "../operator/jobs.ts";
import type { JobExecutor } from "../contract/jobs.ts";
import type { CachePurge } from "../contract/cachePurges.ts";
import { checkInWorker } from "../build/checkWorker.ts";
import type { PipelineSettings } from "../build/pipelineSettings.ts";
import { createTokenIssuer, createTokenVerifier, tokenKeyFromEnvironment, TOKEN_AUDIENCE, TOKEN_KEY_VARIABLE, TOKEN_ISSUER, TOKEN_LIFETIME_SECONDS } from "../auth/tokens.ts";
import { loadUsersForServer, resolveUsersFile, updateUsers, type UsersFile } from "../auth/users.ts";
import { hashPassword, parseStoredHash, type Pepper } from "../auth/passwords.ts";
import { formatError, UserError } from "../errors.ts";
import { oneAtATime } from "../flow/oneAtATime.ts";
import { AddressList } from "./limits/addressList.ts";
import { openBlockList, type BlockList } from "./limits/blockList.ts";
import { createClientResolver, type ClientResolver } from "./limits/clientAddress.ts";
import { MemoryStore, type ThrottleStore } from "./limits/gcra.ts";
import { createTrafficGuard, type TrafficGuard } from "./limits/guard.ts";
import type { TrafficSettings } from "./limits/trafficConfig.ts";
import { checkClearBinding, checkFeedLinks, createInsecureAnswer, feedLinksElsewhere, HSTS, serverUrl, type TransportMode } from "./transport.ts";

const TERMS_OF_SERVICE = fileURLToPath(new URL("../../templates/TermsOfService.html", import.meta.url));

export interface ServeOptions {
  distDir: string;
  port: number;
  host: string;
  prefix?: string;
  removedVersions?: readonly string[];
  /** The users who may sign in (POST /token); none when the file does not exist. */
  usersFile?: string;
  /** Operator actions on runs/ (`start`): its runs directory, where withdrawn runs go (default: runs-archive beside it), and the audit log (env ASHCAST_AUDIT_LOG, default config/audit.log). */
  operator?: { runsDir: string; archiveDir?: string; auditLogFile?: string; pipeline?: PipelineSettings; settingsFile?: string; jobs?: JobExecutor; cachePurges?: () => readonly CachePurge[] };
  /** The access rules file; the default rules (templates/access-rules.json) when absent. */
  accessRulesFile?: string;
  /**
   * Throttling, identification, the block list and the trusted proxies (loadTraffic reads them); without it
   * none of them apply (the CLI always gives it; tests of other things leave it out).
   */
  traffic?: TrafficSettings;
  /** The service terminates TLS: PEM certificate and key files; `httpPort` opens a plain listener that redirects to HTTPS. */
  tls?: { certFile: string; keyFile: string; httpPort?: number };
  /** Redis for throttle state shared by every instance; env REDIS_URL by default; in memory per instance without it. */
  redisUrl?: string;
  /** Where AUTH_HASH_SALT, ASHCAST_TOKEN_KEY and REDIS_URL are read; process.env by default. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  source: ReleaseSource;
  /** Requests answered by the fast path in front of the app. */
  fastPath: FastPath;
  /** The plain-HTTP listener that redirects to HTTPS, when one was asked for. */
  httpUrl?: string;
  /** The throttle's store and the block list, when traffic settings were given. */
  traffic?: { store: ThrottleStore; blockList: BlockList; guard: TrafficGuard };
  close(): Promise<void>;
}

/** The path and query of an absolute-form request target (`/` when it has no path); any other target as it is. */
export function originForm(target: string): string {
  const scheme = /^https?:\/\//i.exec(target);
  if (!scheme) return target;
  const rest = target.slice(scheme[0].length);
  const at = rest.search(/[/?#]/);
  if (at === -1) return "/";
  return rest[at] === "/" ? rest.slice(at) : `/${rest.slice(at)}`;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const source = await ReleaseSource.open({ distDir: options.distDir, log });
  const tokenEndpoint = await loginsFor(options, log);
  const env = options.env ?? process.env;
  const base = productBase(options.prefix);
  // The prefix as the routes use it (trailing slashes trimmed): the addresses logged and documented must answer.
  const prefix = base.slice(0, -PRODUCT_PATH.length);
  const key = tokenKeyFromEnvironment(env);
  const accessRules = options.accessRulesFile ? await loadAccessRules(options.accessRulesFile) : DEFAULT_ACCESS_RULES;
  const accessControl = createAccessControl({
    base,
    rules: accessRules,
    verifier: key ? createTokenVerifier({ key, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE }) : undefined,
  });
  const mode: TransportMode = options.tls ? "tls" : (options.traffic?.trustedProxies.length ?? 0) > 0 ? "proxy" : "loopback";
  checkClearBinding(options.host, mode);
  checkFeedLinks(options.host, source.current?.index.feedBase);
  const elsewhere = feedLinksElsewhere(source.current?.index.feedBase, options.port, base);
  if (elsewhere) log(elsewhere);
  const tlsFiles = options.tls ? await readTlsFiles(options.tls) : undefined;
  const redisUrl = options.traffic ? (options.redisUrl ?? env.REDIS_URL) || undefined : undefined;
  if (redisUrl !== undefined) checkRedisUrl(redisUrl);
  const representations = new Representations();
  // One store of point-query grids for the app and the fast path, so a grid is loaded once.
  const pointGrids = new PointGridStore({ read: (stored) => source.readWhole(stored) });
  const pipeline = options.operator?.pipeline ?? {};
  if (options.operator) {
    const swept = await sweepStaleUploads(path.resolve(options.operator.runsDir));
    if (swept) log(`removed ${swept} upload(s) cut off by an earlier stop`);
  }
  const audit = options.operator ? createAuditLog(options.operator.auditLogFile ?? env.ASHCAST_AUDIT_LOG ?? "config/audit.log") : undefined;
  const app = createApp({
    source,
    ...(prefix ? { prefix } : {}),
    ...(options.removedVersions ? { removedVersions: options.removedVersions } : {}),
    termsOfService: await readFile(TERMS_OF_SERVICE),
    // Which operations need a token is what this server's access rules decide.
    openapi: Buffer.from(JSON.stringify(openApiDocument({ ...(prefix ? { prefix } : {}), accessRules }))),
    representations,
    pointGrids,
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
    accessControl,
    effectiveConfig: {
      signIn: { configured: tokenEndpoint !== undefined, tokenIssuer: TOKEN_ISSUER, tokenAudience: TOKEN_AUDIENCE, tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS },
      accessRules: { source: options.accessRulesFile ? "file" : "defaults", rules: accessRules },
      operatorActions: { withdraw: options.operator !== undefined, upload: options.operator !== undefined },
      transport: { mode, hsts: mode === "loopback" ? null : HSTS, plainHttpListener: options.tls?.httpPort !== undefined },
      traffic: options.traffic
        ? {
            limits: options.traffic.limits,
            key: "User-Agent (or a browser's Origin / Referer) and client address, per route class",
            sharedState: redisUrl ? "redis (each instance on its own while Redis is unreachable)" : "memory (this instance)",
            maxTrackedClients: options.traffic.maxTrackedClients,
            genericUserAgents: options.traffic.genericUserAgents,
            trustedProxies: options.traffic.trustedProxies.length,
            proxyHops: options.traffic.proxyHops,
            forwardedHeader: options.traffic.forwardedHeader,
            blockListReloadSeconds: options.traffic.blockListReloadSeconds,
            holdRefusalsMs: options.traffic.holdRefusalsMs,
          }
        : null,
    },
    ...(options.operator
      ? {
          operator: {
            runsDir: path.resolve(options.operator.runsDir),
            archiveDir: path.resolve(options.operator.archiveDir ?? path.join(path.dirname(path.resolve(options.operator.runsDir)), "runs-archive")),
            audit: audit!,
            ...(options.operator.jobs ? { jobs: new JobBoard({ executor: options.operator.jobs, audit: audit!, ...(options.operator.cachePurges ? { cachePurges: options.operator.cachePurges } : {}) }) } : {}),
            validate: (dir: string) => checkInWorker(dir, pipeline),
            settings: await SettingsStore.open(options.operator.settingsFile ?? env.ASHCAST_SETTINGS_FILE ?? "config/settings.json"),
            ...(options.operator.cachePurges ? { cachePurges: options.operator.cachePurges } : {}),
          },
        }
      : {}),
  });
  const fastPath = createFastPath({ source, base, representations, publicGet: accessControl.publicGet, point: { base, current: () => source.current, runArtefacts: (run, prefix) => source.readRunArtefacts(run, prefix), grids: pointGrids, representations } });
  // Opened last before listening: the Redis client and the block list's timer are closed again if listening fails.
  const traffic = options.traffic ? await openTraffic(options.traffic, base, accessControl.policy, redisUrl, log) : undefined;
  const answerWithApp = getRequestListener(app.fetch, { errorHandler: requestProblem });
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    if (!fastPath(req, res) && !badTarget(req, res)) void answerWithApp(req, res);
  };
  // Behind a proxy, https is on its default port; with TLS here, on ours (known once listening, for port 0).
  let insecure = createInsecureAnswer({ httpsPort: undefined });
  const resolver = traffic?.client;
  const guard = traffic?.guard;
  /** After the guard: HTTPS (or loopback) is answered, anything else redirected or refused. */
  function pass(req: IncomingMessage, res: ServerResponse, secure: boolean): void {
    if (secure || mode === "loopback") answer(req, res);
    else insecure(req, res);
  }
  /**
   * The listener of one socket kind, HTTPS or clear: everything goes through here, refusals first. No
   * closure is made per request.
   */
  const listenerFor = (tlsSocket: boolean) =>
    function listener(req: IncomingMessage, res: ServerResponse): void {
      // An absolute-form target (`GET http://host/path`, RFC 9112 §3.2.2) is read as its path from here on:
      // the guard's route classes, the access rules and the routers all see one form.
      if (req.url !== undefined && req.url.charCodeAt(0) !== 47) req.url = originForm(req.url);
      // A trusted proxy says how the client came, also over TLS (a proxy that re-encrypts may take plain HTTP);
      // without its word, the socket does.
      const forwarded = resolver?.forwardedProto(req);
      const secure = forwarded === undefined ? tlsSocket : forwarded === "https";
      if (secure) res.setHeader("strict-transport-security", HSTS);
      // HTTP/1.1 requires Host (node's own check answers a bare 400): a problem like every other refusal. One
      // Host, of a host's form (RFC 9112 §3.2), checked here for every route: the fast path makes no URL of it.
      const host = req.headers.host;
      const badHost = host === undefined ? (req.httpVersion === "1.1" ? "the request has no Host header: HTTP/1.1 requires one, e.g. Host: example.org" : undefined) : hostProblem(host, req.rawHeaders);
      if (badHost !== undefined) {
        writeProblem(req, res, 400, problemJson(400, badHost), { connection: "close" });
        return;
      }
      if (guard !== undefined) {
        const verdict = guard(req, res);
        if (verdict === true) return;
        if (verdict !== false) {
          // Only with Redis; the store never rejects (it falls back to memory), so the second branch is for bugs.
          verdict.then(
            (answered) => answered || pass(req, res, secure),
            (error: unknown) => {
              console.error(`Internal error in the traffic guard: ${(error as Error).stack ?? String(error)}`);
              pass(req, res, secure);
            },
          );
          return;
        }
      }
      pass(req, res, secure);
    };
  const server: Server = tlsFiles ? createTlsServer({ ...tlsFiles, requireHostHeader: false }, listenerFor(true)) : createServer({ requireHostHeader: false }, listenerFor(false));
  server.on("clientError", answerClientError);
  let plain: Server | undefined;
  let port: number;
  let plainPort: number | undefined;
  try {
    port = await listenOn(server, options.port, options.host, "--port");
    if (mode === "tls") insecure = createInsecureAnswer({ httpsPort: port });
    if (options.tls?.httpPort !== undefined) {
      plain = createServer({ requireHostHeader: false }, listenerFor(false));
      plain.on("clientError", answerClientError);
      plainPort = await listenOn(plain, options.tls.httpPort, options.host, "--http-port");
    }
  } catch (error) {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    traffic?.blockList.close();
    await traffic?.store.close();
    source.close();
    throw error;
  }
  const url = serverUrl(tlsFiles ? "https" : "http", options.host, port, base);
  const httpUrl = plainPort === undefined ? undefined : serverUrl("http", options.host, plainPort, base);
  if (mode === "loopback") log(`plain HTTP on ${options.host} only: no TLS (--tls-cert, --tls-key) and no trusted proxy configured, so no public address may be served`);
  else if (mode === "proxy") log(`HTTPS through ${options.traffic!.trustedProxies.length} trusted prox${options.traffic!.trustedProxies.length === 1 ? "y" : "ies"}: what they did not receive over HTTPS is redirected or refused`);
  const closeServer = (s: Server) =>
    new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  return {
    url,
    source,
    fastPath,
    ...(httpUrl ? { httpUrl } : {}),
    ...(traffic ? { traffic: { store: traffic.store, blockList: traffic.blockList, guard: traffic.guard } } : {}),
    close: async () => {
      source.close();
      traffic?.blockList.close();
      await Promise.all([closeServer(server), ...(plain ? [closeServer(plain)] : [])]);
      await traffic?.store.close();
    },
  };
}

/** A REDIS_URL the client could not use stops the start, naming the variable (its password never shown). */
function checkRedisUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (parsed === undefined || !["redis:", "rediss:"].includes(parsed.protocol) || parsed.hostname === "") {
    throw new UserError("REDIS_URL is not a Redis address", { where: "REDIS_URL", fix: "set it to redis://[:password@]host[:port][/db] (rediss:// for TLS), or unset it to keep the throttle state in memory" });
  }
}

/** Listens; a port in use or not allowed is the operator's to fix, so it is a UserError naming the option. */
/** A host name or address literal, and a port: what a Host header holds (RFC 9112 §3.2, RFC 3986 §3.2.2). */
const HOST_FORM = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(?::[0-9]*)?$/;

/** Why a request's Host header is refused, or undefined: not a host's form, or given twice (node keeps the first). */
function hostProblem(host: string, rawHeaders: readonly string[]): string | undefined {
  if (!HOST_FORM.test(host)) return "the Host header is not a host name (and port): send the server's name, e.g. Host: example.org";
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === "host" && ++seen > 1) return "the request has two Host headers: send one (RFC 9112 §3.2)";
  }
  return undefined;
}

function listenOn(server: Server, port: number, host: string, option: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new UserError(`port ${port} on ${host} is in use`, { where: option, fix: "stop what listens there, or choose another port", cause: error }));
      else if (error.code === "EACCES") reject(new UserError(`not allowed to listen on port ${port}`, { where: option, fix: "use a port above 1023, or give node the right to bind low ports (CAP_NET_BIND_SERVICE)", cause: error }));
      else if (error.code === "EADDRNOTAVAIL") reject(new UserError(`${host} is not an address of this machine`, { where: "--host", fix: "give an address of one of its interfaces, e.g. 127.0.0.1", cause: error }));
      else if (error.code === "ENOTFOUND" || error.code === "EAI_AGAIN" || error.code === "EAI_NONAME") {
        reject(new UserError(`${host} is not an address, and no name server knows it as a name`, { where: "--host", fix: "give an address of one of this machine's interfaces, e.g. 127.0.0.1 or 0.0.0.0, or a name that resolves to one", cause: error }));
      } else reject(error);
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

export async function readTlsFiles(tls: { certFile: string; keyFile: string }): Promise<{ cert: Buffer; key: Buffer }> {
  const read = (file: string, option: string) =>
    readFile(file).catch((error: Error) => {
      throw new UserError(`cannot read the TLS ${option === "--tls-cert" ? "certificate" : "key"}: ${error.message}`, { where: option, fix: "give the path of a PEM file the service's account may read", cause: error });
    });
  const files = { cert: await read(tls.certFile, "--tls-cert"), key: await read(tls.keyFile, "--tls-key") };
  try {
    // Checked now, so a wrong pair stops the start instead of failing every handshake.
    (await import("node:tls")).createSecureContext(files);
  } catch (error) {
    throw new UserError(`the TLS certificate and key cannot be used: ${(error as Error).message}`, { where: `${tls.certFile}, ${tls.keyFile}`, fix: "give a PEM certificate and its own private key (unencrypted)", cause: error });
  }
  // An expired certificate, or one not valid yet, fails every handshake as a wrong pair does: said now.
  const { X509Certificate } = await import("node:crypto");
  const certificate = new X509Certificate(files.cert);
  const now = Date.now();
  if (Date.parse(certificate.validTo) < now) {
    throw new UserError(`the TLS certificate expired on ${new Date(certificate.validTo).toISOString()}: every client would refuse it`, { where: "--tls-cert", fix: "renew the certificate (e.g. certbot renew) and give the new file" });
  }
  if (Date.parse(certificate.validFrom) > now) {
    throw new UserError(`the TLS certificate is valid only from ${new Date(certificate.validFrom).toISOString()}: every client would refuse it until then`, { where: "--tls-cert", fix: "check this machine's clock, or give a certificate valid now" });
  }
  return files;
}

/** The throttle store (Redis or memory), the block list, the client resolver and the guard, made once. */
async function openTraffic(
  settings: TrafficSettings,
  base: string,
  policy: import("../auth/accessRules.ts").AccessPolicy,
  redisUrl: string | undefined,
  log: (line: string) => void,
): Promise<{ guard: TrafficGuard; client: ClientResolver; store: ThrottleStore; blockList: BlockList }> {
  const blockList = await openBlockList({ file: settings.blockList, reloadSeconds: settings.blockListReloadSeconds, log });
  const memory = new MemoryStore({ maxKeys: settings.maxTrackedClients });
  // The Redis client is loaded only where it is used: a single instance neither parses nor holds it.
  const store: ThrottleStore = redisUrl ? (await import("./limits/redisStore.ts")).createRedisStore({ url: redisUrl, timeoutMs: settings.redisTimeoutMs, fallback: memory, log }) : memory;
  const client = createClientResolver({ proxies: new AddressList(settings.trustedProxies), hops: settings.proxyHops, header: settings.forwardedHeader });
  const guard = createTrafficGuard({ base, settings, policy, store, blockList, client });
  return { guard, client, store, blockList };
}

/**
 * Who may sign in, and the secrets that needs, checked at start: users without AUTH_HASH_SALT or without
 * ASHCAST_TOKEN_KEY could never sign in, so the service refuses to start. Undefined when there are no users.
 */
export async function signInSettings(
  usersFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ file: string; users: UsersFile["users"]; pepper: Pepper; previous: Pepper[]; key: Uint8Array } | undefined> {
  const file = resolveUsersFile(usersFile, env);
  const { users, pepper, previous } = await loadUsersForServer(file, env);
  if (Object.keys(users).length === 0) return undefined;
  const key = tokenKeyFromEnvironment(env);
  if (!key) {
    throw new UserError(`the service refuses to start: ${Object.keys(users).length} user(s) may sign in, but no key is set to sign their tokens`, {
      where: TOKEN_KEY_VARIABLE,
      fix: "set it to 32 or more random bytes in base64, e.g. the output of `openssl rand -base64 32`",
    });
  }
  return { file, users, pepper: pepper!, previous, key };
}

/** POST /token for the configured users, or undefined when there are none (every login then fails alike). */
async function loginsFor(options: ServeOptions, log: (line: string) => void): Promise<((c: Context) => Promise<Response>) | undefined> {
  const settings = await signInSettings(options.usersFile, options.env);
  if (!settings) return undefined;
  const issuer = createTokenIssuer({ key: settings.key, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, lifetimeSeconds: TOKEN_LIFETIME_SECONDS });
  return createTokenEndpoint({
    users: settings.users,
    peppers: [settings.pepper, ...settings.previous],
    backoff: new LoginBackoff(),
    issueToken: (subject, roles) => issuer.issue(subject, roles),
    ...(settings.previous.length ? { signedIn: hashUpgrader(settings, log) } : {}),
  });
}

/**
 * During a secret rotation: a user who signs in with a hash made with an earlier secret gets it made
 * again with the current one, in the users file (under its lock, so nothing else is lost) and in memory.
 * One at a time, after the answer; a failure is logged and the old hash keeps working.
 */
function hashUpgrader(settings: { file: string; users: UsersFile["users"]; pepper: Pepper }, log: (line: string) => void) {
  const inTurn = oneAtATime();
  return (username: string, password: string, storedHash: string): void => {
    if (parseStoredHash(storedHash)?.version === settings.pepper.version) return;
    void inTurn(async () => {
      const upgraded = await hashPassword(password, settings.pepper);
      await updateUsers(settings.file, (current) => {
        // Only the hash that was verified: a password set meanwhile with ashcast user add stays.
        if (current.users[username]?.hash !== storedHash) return false;
        current.users[username] = { ...current.users[username], hash: upgraded };
        return true;
      });
      if (settings.users[username]?.hash === storedHash) settings.users[username] = { ...settings.users[username], hash: upgraded };
      log(`user ${username}: password hash made again with secret version ${settings.pepper.version}`);
    }).catch((error: unknown) => log(`could not upgrade the password hash of ${username}; the old one still works: ${formatError(error)}`));
  };
}
