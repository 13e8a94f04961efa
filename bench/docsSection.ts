/**
 * Writes one benchmark's section of docs/benchmarks.md: replaces the section under `heading` (up to the
 * next `## ` heading), or appends it. The file is read right before writing, because other benchmarks
 * write their own sections of it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const BENCHMARKS_DOC = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url));

export function writeDocsSection(heading: string, section: string, file: string = BENCHMARKS_DOC): void {
  const current = readFileSync(file, "utf8");
  const start = current.indexOf(heading);
  let next: string;
  if (start < 0) {
    next = `${current.replace(/\n*$/, "\n")}\n${section}`;
  } else {
    const after = current.indexOf("\n## ", start + heading.length);
    next = `${current.slice(0, start)}${section}${after < 0 ? "" : `\n${current.slice(after + 1)}`}`;
  }
  writeFileSync(file, next);
}
