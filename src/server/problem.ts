/** Error responses: one RFC 9457 body for every 4xx and 5xx, never cached. */
import { STATUS_CODES } from "node:http";
import { PROBLEM_CONTENT_TYPE, type Problem } from "../contract/problem.ts";

/** `members`: extension members of the problem (RFC 9457 section 3.2), e.g. an upload's validation report. */
export function problemResponse(status: number, detail: string, extraHeaders: Record<string, string> = {}, members: Record<string, unknown> = {}): Response {
  const body: Problem & Record<string, unknown> = { type: "about:blank", title: STATUS_CODES[status] ?? "Error", status, detail, ...members };
  return new Response(JSON.stringify(body), {
    status,
    // CORS on errors too, so a browser client can read why it failed.
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", "access-control-allow-origin": "*", ...extraHeaders },
  });
}
