/** Writes templates/run.schema.json from the zod schema of run.json (a test fails when it is stale). */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { runManifestJsonSchema } from "../src/build/runManifest.ts";

export const RUN_SCHEMA_PATH = fileURLToPath(new URL("../templates/run.schema.json", import.meta.url));
export const runSchemaText = (): string => `${JSON.stringify(runManifestJsonSchema(), null, 2)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(RUN_SCHEMA_PATH, runSchemaText());
  process.stdout.write(`wrote ${RUN_SCHEMA_PATH}\n`);
}
