/** Error responses: one RFC 9457 body for every 4xx and 5xx, never cached. */
import { STATUS_CODES } from "node:http";
import { PROBLEM_CONTENT_TYPE, type Problem } from "../contract/problem.ts";

export function problemResponse(status: number, detail: string, extraHeaders: Record<string, string> = {}): Response {
  const body: Problem = { type: "about:blank", title: STATUS_CODES[status] ?? "Error", status, detail };
  return new Response(JSON.stringify(body), {
    status,
    // CORS on errors too, so a browser client can read why it failed.
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", "access-control-allow-origin": "*", ...extraHeaders },
  });
}
