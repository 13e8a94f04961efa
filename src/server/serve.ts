/**
 * Starts the HTTP server on the published release: the release source, the app, and the listener.
 * Everything is prepared before the first request (documents rendered, release loaded).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createApp, productBase } from "./app.ts";
import { createFastPath, type FastPath } from "./fastPath.ts";
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
import { checkInWorker } from "../build/checkWorker.ts";
import type { PipelineSettings } from "../build/pipelineSettings.ts";
import { createTokenIssuer, createTokenVerifier, tokenKeyFromEnvironment, TOKEN_AUDIENCE, TOKEN_KEY_VARIABLE, TOKEN_ISSUER, TOKEN_LIFETIME_SECONDS } from "../auth/tokens.ts";
import { loadUsersForServer, resolveUsersFile, updateUsers, type UsersFile } from "../auth/users.ts";
import { hashPassword, parseStoredHash, type Pepper } from "../auth/passwords.ts";
import { formatError, UserError } from "../errors.ts";
import { oneAtATime } from "../flow/oneAtATime.ts";

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
  operator?: { runsDir: string; archiveDir?: string; auditLogFile?: string; pipeline?: PipelineSettings; settingsFile?: string; jobs?: JobExecutor };
  /** The access rules file; the default rules (templates/access-rules.json) when absent. */
  accessRulesFile?: string;
  /** Where AUTH_HASH_SALT and ASHCAST_TOKEN_KEY are read; process.env by default. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  source: ReleaseSource;
  /** Requests answered by the fast path in front of the app. */
  fastPath: FastPath;
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const source = await ReleaseSource.open({ distDir: options.distDir, log });
  const tokenEndpoint = await loginsFor(options, log);
  const env = options.env ?? process.env;
  const base = productBase(options.prefix);
  const key = tokenKeyFromEnvironment(env);
  const accessRules = options.accessRulesFile ? await loadAccessRules(options.accessRulesFile) : DEFAULT_ACCESS_RULES;
  const accessControl = createAccessControl({
    base,
    rules: accessRules,
    verifier: key ? createTokenVerifier({ key, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE }) : undefined,
  });
  const representations = new Representations();
  const pipeline = options.operator?.pipeline ?? {};
  if (options.operator) {
    const swept = await sweepStaleUploads(path.resolve(options.operator.runsDir));
    if (swept) log(`removed ${swept} upload(s) cut off by an earlier stop`);
  }
  const audit = options.operator ? createAuditLog(options.operator.auditLogFile ?? env.ASHCAST_AUDIT_LOG ?? "config/audit.log") : undefined;
  const app = createApp({
    source,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.removedVersions ? { removedVersions: options.removedVersions } : {}),
    termsOfService: await readFile(TERMS_OF_SERVICE),
    openapi: Buffer.from(JSON.stringify(openApiDocument(options.prefix ? { prefix: options.prefix } : {}))),
    representations,
    ...(tokenEndpoint ? { tokenEndpoint } : {}),
    accessControl,
    effectiveConfig: {
      signIn: { configured: tokenEndpoint !== undefined, tokenIssuer: TOKEN_ISSUER, tokenAudience: TOKEN_AUDIENCE, tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS },
      accessRules: { source: options.accessRulesFile ? "file" : "defaults", rules: accessRules },
      operatorActions: { withdraw: options.operator !== undefined, upload: options.operator !== undefined },
    },
    ...(options.operator
      ? {
          operator: {
            runsDir: path.resolve(options.operator.runsDir),
            archiveDir: path.resolve(options.operator.archiveDir ?? path.join(path.dirname(path.resolve(options.operator.runsDir)), "runs-archive")),
            audit: audit!,
            ...(options.operator.jobs ? { jobs: new JobBoard({ executor: options.operator.jobs, audit: audit! }) } : {}),
            validate: (dir: string) => checkInWorker(dir, pipeline),
            settings: await SettingsStore.open(options.operator.settingsFile ?? env.ASHCAST_SETTINGS_FILE ?? "config/settings.json"),
          },
        }
      : {}),
  });
  const fastPath = createFastPath({ source, base, representations, publicGet: accessControl.publicGet });
  const answerWithApp = getRequestListener(app.fetch);
  const server: Server = createServer((req, res) => {
    if (!fastPath(req, res)) void answerWithApp(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}${options.prefix ?? ""}/volcanicashforecast/0.1`;
  return {
    url,
    source,
    fastPath,
    close: () =>
      new Promise<void>((resolve) => {
        source.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
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
