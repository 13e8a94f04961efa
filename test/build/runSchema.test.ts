import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { RunManifest } from "../../src/build/runManifest.ts";
import { RUN_SCHEMA_PATH, runSchemaText } from "../../scripts/export-run-schema.ts";

describe("templates/run.schema.json", () => {
  it("is the JSON Schema of the run.json zod schema (run `npm run schema` after changing it)", async () => {
    expect(await readFile(RUN_SCHEMA_PATH, "utf8")).toBe(runSchemaText());
  });

  it("names every field of the manifest and forbids unknown ones, as the zod schema does", async () => {
    const schema = JSON.parse(await readFile(RUN_SCHEMA_PATH, "utf8")) as { properties: Record<string, unknown>; additionalProperties: boolean };
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(RunManifest.shape).sort());
    expect(schema.additionalProperties).toBe(false);
  });

  it("validates the bundled sample manifests", async () => {
    for (const folder of ["2010-04-15-eyjafjallajokull", "2026-03-14-hekla-exercise", "2026-05-02-katla-rehearsal"]) {
      const manifest = JSON.parse(await readFile(new URL(`../../runs/${folder}/run.json`, import.meta.url), "utf8"));
      expect(RunManifest.safeParse(manifest).success, folder).toBe(true);
    }
  });
});
