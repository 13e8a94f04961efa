/** The small JSON bodies of operator requests (settings, jobs): type, size and syntax checked alike. */
import type { Context } from "hono";
import { duplicateKeys } from "../formats/duplicateKeys.ts";
import { problemResponse } from "./problem.ts";
import { readLimited } from "./readLimited.ts";

/** A settings change or a job order is a few dozen bytes. */
export const MAX_JSON_BODY_BYTES = 4096;

/** The parsed body, or the answer refusing it (415, 413, 400). `example` shows what to send. */
export async function readSmallJson(c: Context, example: string): Promise<{ json: unknown } | Response> {
  if ((c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") return problemResponse(415, `send application/json, e.g. ${example}`);
  // Read no further than the bound: a 30 MB body was read whole before it was refused.
  const bytes = await readLimited(c.req.raw, MAX_JSON_BODY_BYTES);
  if (bytes === undefined) return problemResponse(413, `the body is a small JSON object (${MAX_JSON_BODY_BYTES / 1024} KiB at most), e.g. ${example}`);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return problemResponse(400, `the body is not JSON; send e.g. ${example}`);
  }
  // JSON.parse keeps the last of a repeated key silently: a setting given twice is said, as in operators' files.
  const repeated = duplicateKeys(text)[0];
  if (repeated) return problemResponse(400, `${repeated.path} is given twice in the body; give each member once, e.g. ${example}`);
  return { json };
}
