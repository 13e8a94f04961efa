/** Reads `run.json`, the forecaster's manifest, against the zod schema of the runs contract. */
import { duplicateKeys, lineAndColumn } from "../../formats/duplicateKeys.ts";
import type { Issues } from "../issues.ts";
import { RunManifest } from "../runManifest.ts";
import type { InputReader, InputReading, RunInputFile } from "./types.ts";

export const MANIFEST_FILE = "run.json";
const MAX_MANIFEST_BYTES = 1024 * 1024;

export const manifestReader: InputReader = {
  kind: "manifest",
  accepts: (file) => file.name === MANIFEST_FILE,
  async read(file: RunInputFile, issues: Issues): Promise<InputReading | undefined> {
    if (file.size > MAX_MANIFEST_BYTES) {
      issues.error(file.displayPath, `the manifest is ${file.size} bytes, more than the ${MAX_MANIFEST_BYTES} accepted`, "keep run.json to the fields of docs/runs.md");
      return undefined;
    }
    let json: unknown;
    const text = decodeManifest(await file.bytes());
    if (text === undefined) {
      issues.error(file.displayPath, "not valid UTF-8 (saved in another encoding, such as Windows-1252 or Latin-1)", "save run.json as UTF-8");
      return undefined;
    }
    try {
      json = JSON.parse(text);
    } catch (error) {
      issues.error(file.displayPath, `not valid JSON: ${withLineAndColumn((error as Error).message, text)}`, "fix the JSON syntax (an editor with templates/run.schema.json points at it)");
      return undefined;
    }
    // JSON.parse keeps the last of a repeated key without a word: a second "type" would change the run's type unseen.
    const repeated = duplicateKeys(text);
    for (const { path, line, column } of repeated) {
      const key = path.slice(path.lastIndexOf(".") + 1);
      issues.error(file.displayPath, `"${key}" is given a second time in the same object (line ${line}, column ${column})`, `keep one "${key}" and remove the other`, path);
    }
    if (repeated.length) return undefined;
    const parsed = RunManifest.safeParse(json);
    if (!parsed.success) {
      for (const problem of parsed.error.issues) {
        // An unknown key is named as the field itself, so the report points at the typo.
        const path = problem.code === "unrecognized_keys" && problem.keys.length === 1 ? [...problem.path, problem.keys[0]!] : problem.path;
        const field = path.length ? formatPath(path) : undefined;
        issues.error(file.displayPath, problem.message, fixFor(problem), field);
      }
      return undefined;
    }
    return { kind: "manifest", file, manifest: parsed.data };
  },
};

/**
 * The text of run.json: UTF-8 (a byte order mark, as some editors save "UTF-8", dropped: invisible, it made the
 * error unreadable), or UTF-16 by its byte order mark (Windows Notepad's "Unicode"); undefined when not valid UTF-8.
 */
export function decodeManifest(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    return undefined;
  }
}

/**
 * V8 says "at position N"; people look for a line and a column, written as the XML readers write them. Node 24
 * adds "(line N column M)" itself: that one is respelled, not added again.
 */
function withLineAndColumn(message: string, text: string): string {
  if (/\(line \d+ column \d+\)/.test(message)) return message.replace(/\(line (\d+) column (\d+)\)/, "(line $1, column $2)");
  const position = /at position (\d+)/.exec(message);
  if (!position) return message;
  const { line, column } = lineAndColumn(text, Number(position[1]));
  return `${message} (line ${line}, column ${column})`;
}

function formatPath(segments: ReadonlyArray<PropertyKey>): string {
  return segments.map((segment, i) => (typeof segment === "number" ? `[${segment}]` : `${i ? "." : ""}${String(segment)}`)).join("");
}

function fixFor(problem: { code: string; path: ReadonlyArray<PropertyKey>; keys?: string[] }): string {
  const field = problem.path.at(-1);
  if (problem.code === "unrecognized_keys") return `remove ${(problem.keys ?? []).join(", ")} (see docs/runs.md for the fields of run.json)`;
  if (field === "type") return 'set "type" to "Exercise", "Rehearsal" or "Real Eruption"';
  if (field === "reftime") return 'write the reference time as "YYYY-MM-DDTHH:MM:SSZ", e.g. "2024-05-01T12:00:00Z"';
  if (field === "base_url" || field === "report_url") return "give an absolute http:// or https:// URL";
  return "correct this field as docs/runs.md describes (templates/run.schema.json checks it in an editor)";
}
