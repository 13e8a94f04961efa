/**
 * `serve` and `start`: the server's flags checked, then the server started on them. Loaded only by those
 * two commands, so the others never load the server.
 */
import { existsSync } from "node:fs";
import { readTlsFiles, startServer, type RunningServer } from "../server/serve.ts";
import { loadAccessRules } from "../auth/accessRules.ts";
import { checkClearBinding } from "../server/transport.ts";
import { isRemovableVersion, PRODUCT_PATH, productBase } from "../server/app.ts";
import { loadTraffic, type TrafficSettings } from "../server/limits/trafficConfig.ts";
import { AddressList } from "../server/limits/addressList.ts";
import { UserError } from "../errors.ts";
import type { PipelineSettings } from "../build/pipelineSettings.ts";
import type { JobExecutor } from "../contract/jobs.ts";
import type { CachePurge } from "../contract/cachePurges.ts";

export interface ServeFlags {
  port: string;
  host: string;
  prefix: string;
  removedVersions: string;
  users?: string;
  accessRules?: string;
  traffic?: string;
  tlsCert?: string;
  tlsKey?: string;
  httpPort?: string;
  trustedProxies?: string;
}

/** The serve flags checked (each error names the flag and its environment variable), without touching the network. */
export interface CheckedServeFlags {
  port: number;
  httpPort: number | undefined;
  /** The product's path with the prefix in front (productBase: trailing slashes of the prefix trimmed). */
  base: string;
  removedVersions: string[];
  trustedProxies: string[] | undefined;
}

/**
 * Checks what can be checked before a server starts, so that `start` refuses a bad flag before its first
 * build rather than after it. Each error names the flag and the environment variable that can give it.
 */
export function checkServeFlags(flags: ServeFlags): CheckedServeFlags {
  const port = Number(flags.port);
  if (flags.port.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`"${flags.port}" is not a TCP port`, { where: "--port (env PORT)", fix: "give a number from 0 to 65535" });
  let base: string;
  try {
    base = productBase(flags.prefix.trim());
  } catch {
    throw new UserError(`"${flags.prefix}" is not a path prefix`, { where: "--prefix (env ASHCAST_PREFIX)", fix: "give a path of letters, digits, '.', '_', '~' or '-' segments starting with /, e.g. /weatherapi, or leave it out" });
  }
  const removedVersions = flags.removedVersions.split(",").map((v) => v.trim()).filter(Boolean);
  for (const version of removedVersions) {
    if (!isRemovableVersion(version)) {
      throw new UserError(`"${version}" is not a removed product version`, { where: "--removed-versions (env ASHCAST_REMOVED_VERSIONS)", fix: "give version numbers other than 0.1, the version served, e.g. 0.0,0.0.1" });
    }
  }
  let trustedProxies: string[] | undefined;
  if (flags.trustedProxies !== undefined) {
    trustedProxies = flags.trustedProxies.split(",").map((entry) => entry.trim()).filter(Boolean);
    for (const entry of trustedProxies) {
      const problem = AddressList.problem(entry);
      if (problem) throw new UserError(problem, { where: "--trusted-proxies (env ASHCAST_TRUSTED_PROXIES)", fix: "give addresses or CIDR ranges separated by commas, e.g. 10.0.0.0/8,192.0.2.7" });
    }
  }
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
    throw new UserError("TLS needs both a certificate and its key", { where: flags.tlsCert === undefined ? "--tls-cert (env ASHCAST_TLS_CERT)" : "--tls-key (env ASHCAST_TLS_KEY)", fix: "give both --tls-cert and --tls-key, or neither" });
  }
  let httpPort: number | undefined;
  if (flags.httpPort !== undefined) {
    httpPort = Number(flags.httpPort);
    if (flags.httpPort.trim() === "" || !Number.isInteger(httpPort) || httpPort < 0 || httpPort > 65535) throw new UserError(`"${flags.httpPort}" is not a TCP port`, { where: "--http-port (env ASHCAST_HTTP_PORT)", fix: "give a number from 0 to 65535" });
    if (flags.tlsCert === undefined) throw new UserError("--http-port redirects to HTTPS, which is not configured", { where: "--http-port (env ASHCAST_HTTP_PORT)", fix: "give --tls-cert and --tls-key too, or leave --http-port out" });
    if (httpPort === port && port !== 0) throw new UserError(`--http-port is --port (${port}): HTTPS and its plain-HTTP redirect need a port each`, { where: "--http-port (env ASHCAST_HTTP_PORT)", fix: "give another port, e.g. --port 8443 --http-port 8080" });
  }
  return { port, httpPort, base, removedVersions, trustedProxies };
}

/**
 * What the server would refuse once `start`'s first build is done, checked before it: the access rules, the TLS
 * certificate and key, plain HTTP beyond loopback. (`serve` meets the same checks in startServer.)
 */
export async function checkServeFiles(flags: ServeFlags, traffic: TrafficSettings): Promise<void> {
  const { trustedProxies } = checkServeFlags(flags);
  if (flags.accessRules) await loadAccessRules(flags.accessRules);
  if (flags.tlsCert && flags.tlsKey) await readTlsFiles({ certFile: flags.tlsCert, keyFile: flags.tlsKey });
  const proxies = trustedProxies ?? traffic.trustedProxies;
  checkClearBinding(flags.host, flags.tlsCert ? "tls" : proxies.length > 0 ? "proxy" : "loopback");
}

export async function listen(distDir: string, flags: ServeFlags, log: (line: string) => void, operator?: { runsDir: string; pipeline: PipelineSettings; jobs: JobExecutor; cachePurges?: () => readonly CachePurge[] }, checkedTraffic?: TrafficSettings): Promise<RunningServer> {
  const { port, httpPort, base, removedVersions, trustedProxies } = checkServeFlags(flags);
  const traffic = checkedTraffic ?? (await loadTraffic(flags.traffic));
  if (trustedProxies !== undefined) traffic.trustedProxies = trustedProxies;
  const server = await startServer({
    distDir,
    traffic,
    ...(flags.tlsCert && flags.tlsKey ? { tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey, ...(httpPort !== undefined ? { httpPort } : {}) } } : {}),
    port,
    host: flags.host,
    prefix: base.slice(0, -PRODUCT_PATH.length),
    removedVersions,
    ...(flags.users ? { usersFile: flags.users } : {}),
    ...(flags.accessRules ? { accessRulesFile: flags.accessRules } : {}),
    ...(operator ? { operator } : {}),
    log,
  });
  log(`serving ${server.url}/ from ${distDir} on Node.js ${process.version}${server.httpUrl ? ` (plain HTTP on ${server.httpUrl}/ redirects to it)` : ""}`);
  // Followed all the same (a build may create it), but a mistyped --out would otherwise only show as 204s.
  if (!existsSync(distDir)) log(`warning: ${distDir} does not exist: nothing is served (204, /healthz 503) until a build publishes into it; check --out (ASHCAST_DIST)`);
  return server;
}
