/** The small JSON bodies of operator requests (settings, jobs): type, size and syntax checked alike. */
import type { Context } from "hono";
import { problemResponse } from "./problem.ts";

/** A settings change or a job order is a few dozen bytes. */
export const MAX_JSON_BODY_BYTES = 4096;

/** The parsed body, or the answer refusing it (415, 413, 400). `example` shows what to send. */
export async function readSmallJson(c: Context, example: string): Promise<{ json: unknown } | Response> {
  if ((c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") return problemResponse(415, `send application/json, e.g. ${example}`);
  const text = await c.req.text();
  if (Buffer.byteLength(text) > MAX_JSON_BODY_BYTES) return problemResponse(413, `the body is a small JSON object (${MAX_JSON_BODY_BYTES / 1024} KiB at most), e.g. ${example}`);
  try {
    return { json: JSON.parse(text) };
  } catch {
    return problemResponse(400, `the body is not JSON; send e.g. ${example}`);
  }
}
