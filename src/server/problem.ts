/** Error responses: one RFC 9457 body for every 4xx and 5xx, never cached. */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { PROBLEM_CONTENT_TYPE, type Problem } from "../contract/problem.ts";

/** The JSON text of a problem; also what answers written straight on node:http send (the traffic guard, plain HTTP). */
export function problemJson(status: number, detail: string, members: Record<string, unknown> = {}): string {
  const body: Problem & Record<string, unknown> = { type: "about:blank", title: STATUS_CODES[status] ?? "Error", status, detail, ...members };
  return JSON.stringify(body);
}

/** `members`: extension members of the problem (RFC 9457 section 3.2), e.g. an upload's validation report. */
export function problemResponse(status: number, detail: string, extraHeaders: Record<string, string> = {}, members: Record<string, unknown> = {}): Response {
  return new Response(problemJson(status, detail, members), {
    status,
    // CORS on errors too, so a browser client can read why it failed.
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", "access-control-allow-origin": "*", ...extraHeaders },
  });
}

/** Writes a problem answer straight on node:http (never cached; no body to HEAD). */
export function writeProblem(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(req.method === "HEAD" ? undefined : body);
}

/**
 * A request node:http could not parse (a header block over its limit, a malformed request line, a request that
 * timed out): answered as a problem like every other error, then closed, instead of node's bare status line.
 */
export function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  // As node's own handler: an answer only where no response has begun on the connection (it looks at the same
  // socket field), written, then the connection destroyed (not ended: the rest of a bad request is not read).
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (error.code !== "ECONNRESET" && socket.writable && response?.headersSent !== true) {
    const [status, detail] =
      error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "the request's target and headers are larger than this server reads: send a shorter request"]
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "the request was not received in time: send it again"]
          : [400, "the request is not well-formed HTTP/1.1: check the request line and headers"];
    // The problem as the body, unless the bytes that failed may belong to a HEAD request (whose answer has none):
    // only where they are a request line of another method.
    const packet = error.rawPacket?.subarray(0, 8).toString("latin1") ?? "";
    const body = /^[A-Z]+ /.test(packet) && !packet.startsWith("HEAD ") ? problemJson(status, detail) : "";
    const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, `content-type: ${PROBLEM_CONTENT_TYPE}`, "cache-control: no-store", `content-length: ${Buffer.byteLength(body)}`, "connection: close"];
    socket.write(`${head.join("\r\n")}\r\n\r\n${body}`);
  }
  socket.destroy();
}

/**
 * A request target that is not a path (`*`, an authority): a problem, before any router sees it. An absolute URL
 * is its path by then (originForm, at the start of every request).
 */
export function badTarget(req: IncomingMessage, res: ServerResponse): boolean {
  if ((req.url ?? "").startsWith("/")) return false;
  writeProblem(req, res, 400, problemJson(400, "the request target must be a path such as /volcanicashforecast/0.1/"));
  return true;
}

/**
 * What @hono/node-server could not turn into a Request (a Host header that is not a host, none at all, a
 * backslash in the path): a 400 problem that says which, as every other error is, instead of its bare 400.
 * Anything else thrown before the app answers is a bug: a 500 problem.
 */
export function requestProblem(error: unknown): Response {
  if (!(error instanceof Error) || error.name !== "RequestError") return problemResponse(500, "Internal error: the request could not be answered");
  const detail =
    error.message === "Invalid host header"
      ? "the Host header is not a host name (and port): send the server's name, e.g. Host: example.org"
      : error.message === "Missing host header"
        ? "the request has no Host header: HTTP/1.1 requires one, e.g. Host: example.org"
        : error.message === "Backslash in request path"
          ? "the path holds a backslash: use / between its parts"
          : "the request's target and Host header do not make a URL: send a path such as /volcanicashforecast/0.1/ and the server's name as Host";
  return problemResponse(400, detail);
}
