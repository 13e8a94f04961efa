/**
 * The OpenAPI document as the server serves it, through a linter that generated-client users run:
 * `@redocly/cli lint` (pinned in package.json) with its recommended rules must report no error and no
 * warning. The linter runs offline: telemetry and the update check are turned off, and a preload
 * refuses, and reports, any connection it would still try. Then what the linter cannot know: the
 * specification's model names as `$ref`'d components, `date-time` instants, and the class table.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ACCESS_RULES, type AccessRule } from "../../src/auth/accessRules.ts";
import { classTable } from "../../src/contract/ashClasses.ts";
import { openApiDocument } from "../../src/server/openapi.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { http, makeSite, serve, type Site } from "../server/serverFixtures.ts";

const REDOCLY = fileURLToPath(new URL("../../node_modules/@redocly/cli/bin/cli.js", import.meta.url));
const NETWORK_MARK = "ASHCAST-LINT-NETWORK-ATTEMPT";

/** Loaded before the linter: any socket, name lookup or fetch is reported on stderr and refused. */
const OFFLINE_GUARD = `
import net from "node:net";
import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";
const refuse = (what) => { process.stderr.write("${NETWORK_MARK} " + what + "\\n"); throw new Error("no network in the lint test: " + what); };
net.Socket.prototype.connect = function () { refuse("connect"); };
dns.lookup = () => refuse("dns.lookup");
dns.promises.lookup = async () => refuse("dns.promises.lookup");
globalThis.fetch = async (url) => refuse("fetch " + String(url));
syncBuiltinESMExports();
`;

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location?: Array<{ pointer?: string }>;
}
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: LintProblem[];
}

let site: Site;
let server: RunningServer;
let dir: string;
let doc: Record<string, unknown>;

beforeAll(async () => {
  site = await makeSite("ashcast-openapi-lint-");
  server = await serve(site);
  const res = await http(server, "/openapi.json");
  expect(res.status).toBe(200);
  doc = res.json() as Record<string, unknown>;
  dir = await mkdtemp(path.join(tmpdir(), "ashcast-openapi-lint-"));
  await writeFile(path.join(dir, "offline-guard.mjs"), OFFLINE_GUARD);
});

afterAll(async () => {
  await server?.close();
  await site?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Lints a document with the recommended rules, in a directory of its own (no redocly.yaml is picked up). */
async function lint(document: unknown, name: string): Promise<LintReport> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(document, null, 2));
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
  const args = ["--import", path.join(dir, "offline-guard.mjs"), REDOCLY, "lint", file, "--extends=recommended", "--format=json", "--max-problems=1000"];
  // The served document was read before: nothing is left for this process to answer while it waits.
  const { stdout, stderr, status: code, error } = spawnSync(process.execPath, args, { cwd: dir, env, encoding: "utf8" });
  if (error) throw error;
  expect(stderr, "the linter tried the network").not.toContain(NETWORK_MARK);
  try {
    return JSON.parse(stdout) as LintReport;
  } catch {
    throw new Error(`redocly lint (exit ${code}) printed no JSON report:\n${stdout}\n${stderr}`);
  }
}

const describeProblems = (problems: readonly LintProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer ?? "?"}: ${p.message}`).join("\n");

type Operation = { operationId?: string; security?: unknown[]; tags?: string[] };

describe("@redocly/cli lint, recommended rules", () => {
  it("reports no error and no warning on the served document", { timeout: 60_000 }, async () => {
    const report = await lint(doc, "served");
    expect(report.problems, describeProblems(report.problems)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });

  it("sees what it is there to see: the same document without one operationId, or with a public operation's security left out", { timeout: 60_000 }, async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, Operation>> };
    delete broken.paths["/reftimes"]!.get!.operationId;
    delete broken.paths["/healthz"]!.get!.security;
    const report = await lint(broken, "broken");
    const found = report.problems.map((p) => `${p.ruleId} ${p.location?.[0]?.pointer ?? ""}`);
    expect(found, describeProblems(report.problems)).toEqual(expect.arrayContaining(["operation-operationId #/paths/~1reftimes/get/operationId", "security-defined #/paths/~1healthz/get"]));
    expect(report.totals.errors).toBe(1);
    expect(report.totals.warnings).toBe(1);
  });
});

describe("what the linter does not check", () => {
  const schemas = () => (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
  const paths = () => doc.paths as Record<string, Record<string, Operation & { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;

  it("names the specification's models as component schemas, and refers to them with $ref", () => {
    const text = JSON.stringify(doc);
    for (const name of ["AshModel", "AshMetaModel", "AshLayerGroupModel", "AshLayerModel", "AshTimestepModel", "LatLonBoxModel", "RefTimeModel"]) {
      expect(schemas()[name], name).toBeDefined();
      expect(text, `a $ref to ${name}`).toContain(`"$ref":"#/components/schemas/${name}"`);
    }
    const model = schemas().AshModel as { properties: Record<string, unknown> };
    expect(model.properties.meta).toEqual({ $ref: "#/components/schemas/AshMetaModel" });
    expect(model.properties.layergroups).toEqual({ type: "array", items: { $ref: "#/components/schemas/AshLayerGroupModel" } });
    expect(paths()["/"]!.get!.responses["200"]!.content!["application/json;charset=UTF-8"]!.schema).toEqual({ $ref: "#/components/schemas/AshModel" });
    // Generated from zod, not written out: no standalone-schema keys left in a component.
    for (const [name, schema] of Object.entries(schemas())) {
      expect(schema, name).not.toHaveProperty("$schema");
      expect(schema, name).not.toHaveProperty("$id");
    }
  });

  it("gives every instant of the models and answers format date-time", () => {
    const meta = schemas().AshMetaModel as { properties: Record<string, { format?: string }> };
    expect(meta.properties.reftime!.format).toBe("date-time");
    expect((schemas().AshTimestepModel as { properties: Record<string, { format?: string }> }).properties.time!.format).toBe("date-time");
    expect((schemas().RefTimeModel as { properties: { reftimes: { items: { format?: string } } } }).properties.reftimes.items.format).toBe("date-time");
    for (const [name, property] of [["PointAnswer", "reftime"], ["PointStep", "time"], ["RouteAnswer", "reftime"], ["Job", "submitted"], ["CachePurge", "at"]] as const) {
      expect((schemas()[name] as { properties: Record<string, { format?: string }> }).properties[property]!.format, `${name}.${property}`).toBe("date-time");
    }
  });

  it("asks for the bearer token exactly where the default access rules do", () => {
    const protectedOperations: string[] = [];
    for (const [route, operations] of Object.entries(paths())) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.operationId, `${method} ${route}`).toMatch(/^[a-z][A-Za-z]+$/);
        if ((operation.security ?? []).length > 0) protectedOperations.push(`${method.toUpperCase()} ${route}`);
      }
    }
    expect(protectedOperations.sort()).toEqual(["GET /datasets", "GET /jobs", "GET /jobs/{id}", "POST /config", "POST /config/reset", "POST /jobs", "POST /jobs/{id}/cancel", "POST /upload", "POST /withdraw"]);
    expect(paths()["/datasets"]!.get!.security).toEqual([{ bearer: ["operator"] }]);
    expect(paths()["/reftimes"]!.get!.security).toEqual([]);
  });

  it("follows a server's own access rules: a rules file that protects /reftimes makes its operation ask for the token", () => {
    const rules: AccessRule[] = [{ method: "GET", path: "/reftimes", protected: true, role: "operator" }, ...DEFAULT_ACCESS_RULES];
    const own = openApiDocument({ accessRules: rules }) as { paths: Record<string, Record<string, Operation>> };
    expect(own.paths["/reftimes"]!.get!.security).toEqual([{ bearer: ["operator"] }]);
    expect(own.paths["/"]!.get!.security).toEqual([]);
  });

  it("describes the class table: the class of /point and /route answers is its enum, with the table in words and in x-ash-classes", () => {
    const step = schemas().PointStep as { properties: { class: unknown } };
    expect(step.properties.class).toEqual({ $ref: "#/components/schemas/AshClassId" });
    const cls = schemas().AshClassId as { enum: string[]; description: string; "x-ash-classes": unknown };
    expect(cls.enum).toEqual(["very-low", "low", "medium", "high", "very-high", "extreme", "ash", "none", "missing"]);
    expect(cls["x-ash-classes"]).toEqual(JSON.parse(JSON.stringify(classTable())));
    for (const c of classTable().defaultClasses) expect(cls.description).toContain(`| \`${c.id}\` | ${c.name} |`);
    expect(cls.description).toContain("`#d1232a`");
  });
});
