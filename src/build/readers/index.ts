/**
 * The readers of run inputs, one per kind, and the step that offers each file of a run folder to them.
 * Each reader is chosen by file name or magic bytes (model output is recognised by its bytes, whatever its name).
 */
import { open, readFile } from "node:fs/promises";
import type { Issues } from "../issues.ts";
import type { ScannedRun } from "../scanRuns.ts";
import { kmlReader } from "./kml.ts";
import { MANIFEST_FILE, manifestReader } from "./manifest.ts";
import { modelOutputReader } from "./modelOutput.ts";
import type { InputReader, InputReading, ReaderContext, RunInputFile } from "./types.ts";
import { volcanoXmlReader } from "./volcanoXml.ts";
import { wmsCapabilitiesReader } from "./wmsCapabilities.ts";

export const READERS: readonly InputReader[] = [manifestReader, volcanoXmlReader, kmlReader, wmsCapabilitiesReader, modelOutputReader];

const HEAD_BYTES = 512;

/** Reads every file of a run with the reader that accepts it; files no reader takes are reported. */
export async function readRun(run: ScannedRun, issues: Issues, context: ReaderContext, readers: readonly InputReader[] = READERS): Promise<InputReading[]> {
  const readings: InputReading[] = [];
  for (const scanned of run.files) {
    const file: RunInputFile = {
      name: scanned.name,
      displayPath: `${run.folder}/${scanned.name}`,
      absolutePath: scanned.absolutePath,
      size: scanned.size,
      bytes: () => readFile(scanned.absolutePath),
    };
    const head = await readHead(scanned.absolutePath);
    const reader = readers.find((candidate) => candidate.accepts(file, head));
    if (!reader) {
      // A run.json misspelled (RUN.JSON, "run.json ", a Greek ο, run (1).json) would leave the run without its
      // manifest: with --default-type it would publish as another run type. Said as an error, not a stray file.
      if (!run.files.some((f) => f.name === MANIFEST_FILE) && looksLikeJson(file.name)) {
        issues.error(file.displayPath, `the run has no ${MANIFEST_FILE}, and this file looks like it (a name of ${JSON.stringify(file.name)})`, `rename it to ${MANIFEST_FILE} exactly (lower case, no spaces, Latin letters)`);
        continue;
      }
      issues.warning(file.displayPath, "no reader takes this file, so it is not published", "remove it, or see docs/runs.md for the files a run may hold");
      continue;
    }
    const reading = await reader.read(file, issues, context);
    if (reading) readings.push(reading);
  }
  return readings;
}

/** Letters of other scripts drawn like Latin ones in a file name (the confusables a keyboard layout slips in). */
const LOOK_ALIKES: Readonly<Record<string, string>> = { "ο": "o", "о": "o", "ѕ": "s", "ј": "j", "υ": "u", "ν": "v", "п": "n", "і": "i", "ı": "i", "ɴ": "n" };

/** Whether a name reads as a .json file once case, spaces, accents and look-alike letters are set aside. */
function looksLikeJson(name: string): boolean {
  const skeleton = [...name.normalize("NFKD").replace(/[\u0300-\u036f\u200b-\u200d\ufeff\s]/g, "").toLowerCase()].map((c) => LOOK_ALIKES[c] ?? c).join("");
  return skeleton.endsWith(".json");
}

async function readHead(filePath: string): Promise<Buffer> {
  const handle = await open(filePath, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
