/** Error responses: one RFC 9457 body for every 4xx and 5xx, never cached. */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
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
