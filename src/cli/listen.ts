/**
 * `serve` and `start`: the server's flags checked, then the server started on them. Loaded only by those
 * two commands, so the others never load the server.
 */
import { startServer, type RunningServer } from "../server/serve.ts";
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

export async function listen(distDir: string, flags: ServeFlags, log: (line: string) => void, operator?: { runsDir: string; pipeline: PipelineSettings; jobs: JobExecutor; cachePurges?: () => readonly CachePurge[] }, checkedTraffic?: TrafficSettings): Promise<RunningServer> {
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`"${flags.port}" is not a TCP port`, { where: "--port", fix: "give a number from 0 to 65535" });
  const traffic = checkedTraffic ?? (await loadTraffic(flags.traffic));
  if (flags.trustedProxies !== undefined) {
    const proxies = flags.trustedProxies.split(",").map((entry) => entry.trim()).filter(Boolean);
    for (const entry of proxies) {
      const problem = AddressList.problem(entry);
      if (problem) throw new UserError(problem, { where: "--trusted-proxies", fix: "give addresses or CIDR ranges separated by commas, e.g. 10.0.0.0/8,192.0.2.7" });
    }
    traffic.trustedProxies = proxies;
  }
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new UserError("TLS needs both a certificate and its key", { where: flags.tlsCert === undefined ? "--tls-cert" : "--tls-key", fix: "give both --tls-cert and --tls-key, or neither" });
  let httpPort: number | undefined;
  if (flags.httpPort !== undefined) {
    httpPort = Number(flags.httpPort);
    if (!Number.isInteger(httpPort) || httpPort < 0 || httpPort > 65535) throw new UserError(`"${flags.httpPort}" is not a TCP port`, { where: "--http-port", fix: "give a number from 0 to 65535" });
    if (flags.tlsCert === undefined) throw new UserError("--http-port redirects to HTTPS, which is not configured", { where: "--http-port", fix: "give --tls-cert and --tls-key too, or leave --http-port out" });
  }
  const server = await startServer({
    distDir,
    traffic,
    ...(flags.tlsCert && flags.tlsKey ? { tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey, ...(httpPort !== undefined ? { httpPort } : {}) } } : {}),
    port,
    host: flags.host,
    prefix: flags.prefix,
    removedVersions: flags.removedVersions.split(",").map((v) => v.trim()).filter(Boolean),
    ...(flags.users ? { usersFile: flags.users } : {}),
    ...(flags.accessRules ? { accessRulesFile: flags.accessRules } : {}),
    ...(operator ? { operator } : {}),
    log,
  });
  log(`serving ${server.url}/ from ${distDir} on Node.js ${process.version}${server.httpUrl ? ` (plain HTTP on ${server.httpUrl}/ redirects to it)` : ""}`);
  return server;
}
