/**
 * HTTPS only (spec, Limits and Errors rule 1). Three ways to run:
 * - `tls`: the service terminates TLS itself (certificate and key files); an optional plain-HTTP listener
 *   redirects GET/HEAD to https and refuses everything else;
 * - `proxy`: a TLS-terminating proxy in front, trusted (by address) to say the client's scheme in
 *   X-Forwarded-Proto / Forwarded; what did not come over HTTPS is redirected or refused alike;
 * - `loopback`: neither configured, plain HTTP, on a loopback address only (development, tests).
 * HSTS goes on HTTPS answers only.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { problemJson, writeProblem } from "./problem.ts";
import { REDIRECT_HEADERS } from "./cachePolicy.ts";
import { UserError } from "../errors.ts";

export type TransportMode = "tls" | "proxy" | "loopback";

/** One year, the least security.md accepts; no includeSubDomains: other services may share the domain. */
export const HSTS = "max-age=31536000";

/** The address of a server listening on `host` and `port`, with the path `base` (an IPv6 host in brackets). */
export function serverUrl(scheme: "http" | "https", host: string, port: number, base: string): string {
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}${base}`;
}

/** Whether `host` (a --host value) is a loopback address: nothing else may be bound in clear. */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^::ffff:127\./i.test(bare) || /^0*:0*:0*:0*:0*:0*:0*:0*1$/.test(bare);
  return false;
}

/** Refuses to serve in clear on anything but loopback when neither TLS nor a trusted proxy is configured. */
export function checkClearBinding(host: string, mode: TransportMode): void {
  if (mode !== "loopback" || isLoopback(host)) return;
  throw new UserError(`refusing to serve plain HTTP on ${host}: only HTTPS is served, and neither TLS nor a trusted proxy is configured`, {
    where: "--host",
    fix: "give --tls-cert and --tls-key (the service terminates TLS), or list your TLS-terminating proxies in the traffic file's trustedProxies (or --trusted-proxies), or listen on 127.0.0.1",
  });
}

/**
 * Refuses to listen beyond loopback while the feed's links (the build's public URL) point at a loopback
 * address: every client elsewhere would get links to its own machine. The address cannot be derived
 * safely from requests (Host is the client's to choose), so it must be configured.
 */
export function checkFeedLinks(host: string, feedBase: string | undefined): void {
  if (feedBase === undefined || isLoopback(host)) return;
  let hostname: string;
  try {
    hostname = new URL(feedBase).hostname;
  } catch {
    return;
  }
  if (!isLoopback(hostname)) return;
  throw new UserError(`refusing to serve on ${host}: the changelog's links point at ${feedBase}, which only this machine can reach`, {
    where: "--public-url",
    fix: "give the address clients use, e.g. --public-url https://ash.example.org/volcanicashforecast/0.1 (or ASHCAST_PUBLIC_URL), to start or to the build that publishes the dist directory; or listen on 127.0.0.1",
  });
}

/**
 * A warning when the changelog links to a loopback address that is not this server's (another port or
 * prefix: a dist built with the default address and served elsewhere); feed readers following the links
 * get no answer. Only said: on loopback it may be meant (a test, another server on that port).
 */
export function feedLinksElsewhere(feedBase: string | undefined, port: number, base: string): string | undefined {
  if (feedBase === undefined || port === 0) return undefined;
  let url: URL;
  try {
    url = new URL(feedBase);
  } catch {
    return undefined;
  }
  if (!isLoopback(url.hostname)) return undefined;
  const linkedPort = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  if (linkedPort === port && url.pathname.replace(/\/+$/, "") === base.replace(/\/+$/, "")) return undefined;
  return `warning: the changelog's links point at ${feedBase}, not at this server (port ${port}, ${base}): feed readers following them get no answer; build with --public-url (ASHCAST_PUBLIC_URL) set to the address clients use`;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

/**
 * The answer to a request that did not come over HTTPS: 301 to the same host, path and query over https
 * for GET and HEAD without credentials; 403 for anything that carries credentials (an Authorization
 * header, a POST to /token or /login) or a body: the secret already crossed in clear, and redirecting
 * would only invite the client to send it again.
 */
export function createInsecureAnswer(options: { httpsPort: number | undefined }): (req: IncomingMessage, res: ServerResponse) => void {
  const portSuffix = options.httpsPort === undefined || options.httpsPort === 443 ? "" : `:${options.httpsPort}`;
  const problem = (res: ServerResponse, req: IncomingMessage, status: number, detail: string) => writeProblem(req, res, status, problemJson(status, detail));
  return function insecureAnswer(req, res) {
    const method = req.method ?? "GET";
    const hasBody = (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0") || req.headers["transfer-encoding"] !== undefined;
    if ((method !== "GET" && method !== "HEAD") || req.headers.authorization !== undefined || hasBody) {
      return problem(res, req, 403, "this service answers only over HTTPS; a request that carries credentials or a body is refused over plain HTTP, not redirected: send it again over https:// (and change any password or token it carried)");
    }
    const host = req.headers.host;
    const url = req.url ?? "";
    const match = host === undefined ? null : HOST.exec(host);
    if (match === null || Number(match[1] ?? 0) > 65535 || !url.startsWith("/")) return problem(res, req, 400, "this service answers only over HTTPS; send the request to https:// with a valid Host header");
    const hostname = host!.startsWith("[") ? host!.slice(0, host!.indexOf("]") + 1) : host!.split(":")[0]!;
    res.writeHead(301, { location: `https://${hostname}${portSuffix}${url}`, "content-length": "0", ...REDIRECT_HEADERS });
    res.end();
  };
}
