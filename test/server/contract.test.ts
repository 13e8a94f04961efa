/**
 * The OpenAPI contract check: the document the server publishes at /openapi.json against the
 * specification's paths, then a broad set of real requests (every path × the typical statuses 200,
 * 204, 304, 400, 404, 405, 503) whose status, Content-Type and JSON body must be what the document
 * declares for that path, validated with a real JSON Schema 2020-12 validator (ajv).
 */
import type { ValidateFunction } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRODUCT_PATH } from "../../src/server/app.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { startServer } from "../../src/server/serve.ts";
import { watchRuns, type Watcher } from "../../src/build/watch.ts";
import { runJob } from "../../src/build/runJob.ts";
import { addRun, buildSite, editRunJson, header, http, makeSite, serve, waitFor, type RawResponse, type Site } from "./serverFixtures.ts";
import { OPERATOR_ENV, signInOperator, writeOperator } from "../operator/operatorFixtures.ts";
import { documentAjv, type DocumentAjv } from "./documentAjv.ts";

const PINNED = "2024-05-01T12:00:00Z";
const LATEST = "2024-05-02T00:00:00Z";
const KML_NAME = `${LATEST}/advisory.kml`;
/** Its GeoJSON twin (issue 16): a resource of its own content type. */
const GEOJSON_NAME = `${LATEST}/advisory.geojson`;
const DOC_ID = "https://ashcast.test/openapi.json";

interface MediaObject {
  schema?: unknown;
}
interface ResponseObject {
  description: string;
  content?: Record<string, MediaObject>;
}
interface Operation {
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: unknown }>;
  responses: Record<string, ResponseObject>;
}
interface OpenApi {
  openapi: string;
  info: { title: string; version: string; license?: { name: string } };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const sites: Site[] = [];
let server: RunningServer;
let empty: RunningServer;
let doc: OpenApi;
let ajv: DocumentAjv;

beforeAll(async () => {
  const [site, emptySite] = await Promise.all([makeSite(), makeSite()]);
  sites.push(site, emptySite);
  await addRun(site, "2024-05-01-hekla", PINNED);
  await addRun(site, "2024-05-02-katla", LATEST, "Rehearsal");
  await buildSite(site);
  server = await serve(site);
  empty = await serve(emptySite);
  const res = await http(server, "/openapi.json");
  expect(res.status).toBe(200);
  doc = res.json() as OpenApi;
  // The document's components as one schema resource. Response schemas are compiled with their
  // document-relative refs (`#/components/schemas/...`) made absolute against that resource.
  ajv = documentAjv(doc, DOC_ID);
});

afterAll(async () => {
  await Promise.all([server?.close(), empty?.close()]);
  await Promise.all(sites.map((site) => site.cleanup()));
});

// ---------------------------------------------------------------------------------------------
// Looking things up in the document

/** The document's path for a request path (relative to the base): exact, or through a `{param}` template. */
function docPath(requestPath: string): string | undefined {
  if (doc.paths[requestPath]) return requestPath;
  return Object.keys(doc.paths).find((template) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`).test(requestPath));
}

/** A copy of a schema whose document-relative `$ref`s (`#/...`) point into the components resource. */
function absoluteRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(absoluteRefs);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === "$ref" && typeof value === "string" && value.startsWith("#/") ? `${DOC_ID}${value}` : absoluteRefs(value)]),
  );
}

/**
 * The operation that describes answers to `method` on a path: its own (HEAD is GET's), else, for a method
 * the path does not take (405, or 401 first), its POST where it has one (/token, /login), else its GET.
 */
function operationOf(path: string, method = "GET"): Operation | undefined {
  const item = doc.paths[path];
  const own = item?.[method === "HEAD" ? "get" : method.toLowerCase()];
  return own ?? item?.post ?? item?.get;
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(path: string, status: string, mediaType: string, method = "GET"): ValidateFunction {
  const id = `${method} ${path} ${status} ${mediaType}`;
  let validate = validators.get(id);
  if (!validate) {
    const schema = operationOf(path, method)?.responses[status]?.content?.[mediaType]?.schema;
    if (schema === undefined) throw new Error(`the document has no schema for ${id}`);
    validate = ajv.compile(absoluteRefs(schema) as Record<string, unknown>);
    validators.set(id, validate);
  }
  return validate;
}

/** `type/subtype` lower-cased and the charset (lower-cased, or undefined). */
function parseMediaType(text: string): { type: string; charset: string | undefined } {
  const [type = "", ...params] = text.split(";").map((part) => part.trim());
  const charset = params.map((p) => /^charset\s*=\s*"?([^"]*)"?$/i.exec(p)?.[1]).find((c) => c !== undefined);
  return { type: type.toLowerCase(), charset: charset?.toLowerCase() };
}

/** The declared media type a response Content-Type matches: same type/subtype, and the same charset when either names one. */
function declaredMediaType(content: Record<string, MediaObject> | undefined, contentType: string): string | undefined {
  const got = parseMediaType(contentType);
  return Object.keys(content ?? {}).find((declared) => {
    const want = parseMediaType(declared);
    return want.type === got.type && want.charset === got.charset;
  });
}

interface Case {
  name: string;
  on: RunningServer;
  method: string;
  /** Path relative to the base path, with its query. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  status: number;
}

/** Sends one request and checks its answer against the document; returns the answer. */
async function checkAgainstDocument(c: Case): Promise<RawResponse> {
  const res = await http(c.on, c.target, { method: c.method, headers: c.headers ?? {}, ...(c.body === undefined ? {} : { body: c.body }) });
  const label = `${c.method} ${c.target} (${c.name})`;
  expect(res.status, `${label}: status`).toBe(c.status);
  const path = docPath(c.target.split("?")[0]!);
  expect(path, `${label}: path in the document`).toBeDefined();
  const operation = operationOf(path!, c.method);
  expect(operation, `${label}: operation`).toBeDefined();
  const declared = operation!.responses[String(res.status)];
  expect(declared, `${label}: status ${res.status} declared for ${path}`).toBeDefined();

  const contentType = res.headers["content-type"];
  if (res.status === 204 || res.status === 304) {
    expect(res.body.length, `${label}: no body`).toBe(0);
    return res;
  }
  expect(typeof contentType, `${label}: Content-Type`).toBe("string");
  const mediaType = declaredMediaType(declared!.content, contentType as string);
  expect(mediaType, `${label}: Content-Type ${contentType} is one of ${Object.keys(declared!.content ?? {}).join(", ")}`).toBeDefined();
  if (c.method === "HEAD") {
    expect(res.body.length, `${label}: HEAD has no body`).toBe(0);
    return res;
  }
  if (/[/+]json$/.test(parseMediaType(mediaType!).type)) {
    const validate = validatorFor(path!, String(res.status), mediaType!, c.method);
    const valid = validate(res.json());
    expect(valid, `${label}: body against the schema: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  return res;
}

// ---------------------------------------------------------------------------------------------

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1.0 with the product's title, version, licence and base path", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("0.1");
    expect(doc.info.license?.name).toBe("CC BY 4.0");
    expect(doc.servers).toEqual([{ url: PRODUCT_PATH }]);
  });

  it("has every path of the specification, each with a GET of the spec's tag", () => {
    // The spec's `/.{format}` (format: json | png) may be written as a template or as its two expansions.
    const specPaths: Array<[string, "data" | "metadata"]> = [
      ["/", "data"],
      ["/.json", "data"],
      ["/.png", "data"],
      ["/reftimes", "data"],
      ["/resources", "data"],
      ["/changelog", "metadata"],
      ["/healthz", "metadata"],
    ];
    for (const [path, tag] of specPaths) {
      const found = docPath(path);
      expect(found, path).toBeDefined();
      expect(doc.paths[found!]!.get?.tags, path).toContain(tag);
    }
    expect(docPath("/.xml")).toBeUndefined();
  });

  it("declares the reftime and name query parameters as the spec does: optional strings", () => {
    for (const path of ["/", "/.json", "/.png"]) {
      const reftime = doc.paths[docPath(path)!]!.get!.parameters?.find((p) => p.name === "reftime");
      expect(reftime, path).toMatchObject({ in: "query", required: false, schema: { type: "string", format: "date-time" } });
    }
    const name = doc.paths[docPath("/resources")!]!.get!.parameters?.find((p) => p.name === "name");
    expect(name).toMatchObject({ in: "query", required: false, schema: { type: "string" } });
  });

  it("declares 204 on every data endpoint and the spec's content types for the model", () => {
    for (const path of ["/", "/.json", "/.png", "/reftimes", "/resources"]) {
      expect(doc.paths[docPath(path)!]!.get!.responses["204"], path).toBeDefined();
    }
    expect(Object.keys(doc.paths[docPath("/")!]!.get!.responses["200"]!.content!)).toEqual(expect.arrayContaining(["application/json;charset=UTF-8", "image/png"]));
    expect(Object.keys(doc.paths[docPath("/changelog")!]!.get!.responses["200"]!.content!).map((t) => parseMediaType(t).type)).toEqual(["application/rss+xml"]);
    expect(Object.keys(doc.paths[docPath("/healthz")!]!.get!.responses["200"]!.content!).map((t) => parseMediaType(t).type)).toEqual(["text/plain"]);
  });

  it("every response schema compiles with a JSON Schema 2020-12 validator, its refs resolved", () => {
    let compiled = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const mediaType of Object.keys(response.content ?? {})) {
            expect(() => validatorFor(path, status, mediaType, method.toUpperCase()), `${method} ${path} ${status} ${mediaType}`).not.toThrow();
            compiled++;
          }
        }
      }
    }
    expect(compiled).toBeGreaterThan(10);
    for (const name of ["AshModel", "RefTimeModel", "Problem"]) expect(doc.components.schemas[name], name).toBeDefined();
  });

  it("the validator is wired to the real schemas: it rejects bodies that break them", () => {
    const model = validatorFor(docPath("/")!, "200", "application/json;charset=UTF-8");
    expect(model({ meta: { type: "Volcano", description: "x", reftime: PINNED, timesteps: [] }, layergroups: [] })).toBe(false);
    expect(model({ meta: { type: "Exercise", description: "x", reftime: "2024-05-01 12:00", timesteps: [] }, layergroups: [] })).toBe(false);
    expect(model({ meta: { type: "Exercise", description: "x", reftime: PINNED, timesteps: [] }, layergroups: [] })).toBe(true);
    const reftimes = validatorFor(docPath("/reftimes")!, "200", "application/json;charset=UTF-8");
    expect(reftimes({ reftimes: [PINNED] })).toBe(false); // an array of RefTimeModel, not one
    expect(reftimes([{ reftimes: [PINNED] }])).toBe(true);
    const problem = validatorFor(docPath("/")!, "404", "application/problem+json");
    expect(problem({ type: "about:blank", title: "Not Found", status: 200, detail: "x" })).toBe(false);
    expect(problem({ type: "about:blank", title: "Not Found", status: 404, detail: "x" })).toBe(true);
  });

  // BUG (src/server/openapi.ts, dataErrors): the spec's Errors section says the data endpoints declare
  // 204, 400, 401, 403, 404, 422, 429, 500, 502, 503 and 504. The document declares only 204, 400, 404
  // (and 405) — not even 500, which app.onError does answer (see reload.test.ts for a real 500).
  it("declares on the data endpoints every error status the specification lists", () => {
    for (const path of ["/", "/.json", "/.png", "/reftimes", "/resources"]) {
      const declared = Object.keys(doc.paths[docPath(path)!]!.get!.responses);
      expect(declared, path).toEqual(expect.arrayContaining(["204", "400", "401", "403", "404", "422", "429", "500", "502", "503", "504"]));
    }
  });

  // BUG (src/contract/ashModel.ts strictObject + src/server/openapi.ts schemaOf): the spec says of every
  // model "No field is marked required. All fields are optional", and product.md that adding fields to
  // JSON is not a breaking change; the published schemas mark fields required and set
  // additionalProperties: false, so a client validating with this document rejects the first added field.
  it("publishes models without required fields and open to added fields, as the specification's models are", () => {
    const { AshModel, RefTimeModel, Problem } = doc.components.schemas;
    const text = JSON.stringify({ AshModel, RefTimeModel, Problem });
    expect(text).not.toContain('"additionalProperties":false');
    expect(text).not.toMatch(/"required":\[/);
  });
});

describe("real answers against the document", () => {
  const etags = new Map<string, string>();

  it("200: every GET and HEAD route answers a declared content type and a body that validates", async () => {
    const routes = [
      "/",
      "/.json",
      `/?reftime=${PINNED}`,
      `/.json?reftime=2024-05-01T14:00:00%2B02:00`,
      "/reftimes",
      "/resources",
      "/resources?name=volcanoes.json",
      `/resources?name=${encodeURIComponent(KML_NAME)}`,
      `/resources?name=${encodeURIComponent(GEOJSON_NAME)}`,
      "/changelog",
      "/healthz",
      "/doc/TermsOfService",
      "/openapi.json",
      // The page as the document names it; `/viewer/` answers it alike (below).
      "/viewer/index.html",
    ];
    for (const target of routes) {
      for (const method of ["GET", "HEAD"]) {
        for (const headers of [{}, { "accept-encoding": "br, gzip" }, { accept: "image/png" }] as Array<Record<string, string>>) {
          if ("accept-encoding" in headers && method === "GET") continue; // compressed bodies are checked in conditional.test.ts
          const res = await checkAgainstDocument({ name: "200", on: server, method, target, headers, status: 200 });
          if (typeof res.headers.etag === "string" && method === "GET") etags.set(target, res.headers.etag);
        }
      }
    }
    expect(etags.size).toBeGreaterThanOrEqual(10);
  });

  it("the viewer's page, which the document names /viewer/{file} with index.html, is what /viewer/ answers", async () => {
    expect(doc.paths["/viewer/{file}"]?.get?.parameters?.[0]).toMatchObject({ name: "file", in: "path", required: true });
    const named = await http(server, "/viewer/index.html");
    const opened = await http(server, "/viewer/");
    expect(named.status).toBe(200);
    expect(opened.status).toBe(200);
    expect(header(opened, "content-type")).toBe(header(named, "content-type"));
    expect(header(opened, "etag")).toBe(header(named, "etag"));
    expect(opened.body.equals(named.body)).toBe(true);
  });

  it("204: the data and list endpoints while no release is published", async () => {
    for (const target of ["/", "/.json", "/.png", "/reftimes", "/resources", "/resources?name=volcanoes.json", "/changelog"]) {
      for (const method of ["GET", "HEAD"]) await checkAgainstDocument({ name: "204", on: empty, method, target, status: 204 });
    }
  });

  it("304: revalidation with the ETag of the 200 on every route that has one", async () => {
    expect(etags.size).toBeGreaterThan(0);
    for (const [target, etag] of etags) {
      for (const method of ["GET", "HEAD"]) await checkAgainstDocument({ name: "304", on: server, method, target, headers: { "if-none-match": etag }, status: 304 });
    }
  });

  it("400: malformed or repeated parameters", async () => {
    const targets = ["/?reftime=yesterday", "/.json?reftime=2024-02-30T00:00:00Z", "/.png?reftime=nope", `/?reftime=${PINNED}&reftime=${LATEST}`, "/resources?name=a&name=b"];
    for (const target of targets) {
      for (const method of ["GET", "HEAD"]) await checkAgainstDocument({ name: "400", on: server, method, target, status: 400 });
    }
  });

  it("404: unpublished reftime, no PNG map, unknown resource", async () => {
    const targets = ["/?reftime=1999-01-01T00:00:00Z", "/.json?reftime=2024-05-01T12:00:01Z", "/.png", `/.png?reftime=${PINNED}`, "/resources?name=../index.json", "/resources?name=__proto__"];
    for (const target of targets) {
      for (const method of ["GET", "HEAD"]) await checkAgainstDocument({ name: "404", on: server, method, target, status: 404 });
    }
  });

  it("401: every mutating method on every path, nobody signed in (deny by default)", async () => {
    for (const path of Object.keys(doc.paths).filter((p) => doc.paths[p]!.get)) {
      const target = path.replace(/\{[^}]+\}/g, "json");
      for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
        const res = await checkAgainstDocument({ name: "401", on: server, method, target, status: 401 });
        expect(header(res, "www-authenticate")).toBe('Bearer realm="ashcast"');
      }
    }
  });

  it("/token and /login: errors in the RFC 6749 form, 405 for other methods", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    for (const target of ["/token", "/login"]) {
      await checkAgainstDocument({ name: "not a form", on: server, method: "POST", target, headers: { "content-type": "application/json" }, body: "{}", status: 415 });
      await checkAgainstDocument({ name: "no password", on: server, method: "POST", target, headers: form, body: "username=alice", status: 400 });
      await checkAgainstDocument({ name: "no such user", on: server, method: "POST", target, headers: form, body: "username=alice&password=x", status: 400 });
      await checkAgainstDocument({ name: "other grant", on: server, method: "POST", target, headers: form, body: "grant_type=client_credentials&username=a&password=b", status: 400 });
      const res = await checkAgainstDocument({ name: "405", on: server, method: "GET", target, status: 405 });
      expect(header(res, "allow")).toBe("POST, OPTIONS");
      for (const method of ["PUT", "DELETE"]) await checkAgainstDocument({ name: "401", on: server, method, target, status: 401 });
    }
  });

  it("503: /healthz while no release can be served", async () => {
    for (const method of ["GET", "HEAD"]) await checkAgainstDocument({ name: "503", on: empty, method, target: "/healthz", status: 503 });
  });
});

describe("operator answers against the document", () => {
  let site: Site;
  let operatorServer: RunningServer;
  let watcher: Watcher;
  let bearer: Record<string, string>;

  beforeAll(async () => {
    site = await makeSite("ashcast-contract-operator-");
    await addRun(site, "2024-05-01-hekla", PINNED);
    watcher = await watchRuns({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: "https://ash.example.org/volcanicashforecast/0.1" });
    await watcher.idle();
    const usersFile = path.join(site.root, "users.json");
    await writeOperator(usersFile);
    operatorServer = await startServer({
      distDir: site.distDir,
      port: 0,
      host: "127.0.0.1",
      usersFile,
      env: OPERATOR_ENV,
      operator: { runsDir: site.runsDir, auditLogFile: path.join(site.root, "audit.log"), settingsFile: path.join(site.root, "settings.json"), jobs: { run: (order, signal) => runJob(watcher, order, signal) } },
    });
    bearer = await signInOperator(operatorServer);
  }, 60_000);

  afterAll(async () => {
    await operatorServer?.close();
    await watcher?.close();
    await site?.cleanup();
  });

  const call = (name: string, method: string, target: string, status: number, body?: string | { type: string; body: Buffer | string }) =>
    checkAgainstDocument({
      name,
      on: operatorServer,
      method,
      target,
      status,
      headers: { ...bearer, ...(body === undefined ? {} : { "content-type": typeof body === "string" ? "application/json" : body.type }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : body.body }),
    });

  /** A run folder's files as a multipart form; `edit` changes its run.json first. */
  async function runForm(name: string, reftime: string, edit: (manifest: Record<string, unknown>) => void = () => {}): Promise<{ type: string; body: Buffer }> {
    const scratch = await makeSite("ashcast-contract-upload-");
    try {
      const dir = await addRun(scratch, name, reftime);
      await editRunJson(dir, edit);
      const form = new FormData();
      for (const file of await readdir(dir)) form.append("file", new Blob([await readFile(path.join(dir, file))]), file);
      const encoded = new Response(form);
      return { type: encoded.headers.get("content-type")!, body: Buffer.from(await encoded.arrayBuffer()) };
    } finally {
      await scratch.cleanup();
    }
  }

  it("/config and /config/reset: 200, 304, 400, 413, 415", async () => {
    const got = await checkAgainstDocument({ name: "200", on: operatorServer, method: "GET", target: "/config", status: 200 });
    await checkAgainstDocument({ name: "304", on: operatorServer, method: "GET", target: "/config", headers: { "if-none-match": header(got, "etag") }, status: 304 });
    await call("200", "POST", "/config", 200, JSON.stringify({ uploadMaxFiles: 32 }));
    await call("unknown key", "POST", "/config", 400, JSON.stringify({ uploadMaxFilez: 32 }));
    await call("too large", "POST", "/config", 413, JSON.stringify({ pad: "x".repeat(5000) }));
    await call("not JSON", "POST", "/config", 415, { type: "text/plain", body: "uploadMaxFiles=3" });
    await call("200", "POST", "/config/reset", 200);
    await call("405", "GET", "/config/reset", 405);
  });

  it("/datasets: the build report", async () => {
    await call("200", "GET", "/datasets", 200);
  });

  it("/upload: 202, 409, 422 with the run's report, 400, 415", async () => {
    const valid = await runForm("2024-06-01-upload", "2024-06-01T00:00:00Z");
    await call("202", "POST", "/upload?folder=2024-06-01-upload", 202, valid);
    await call("409", "POST", "/upload?folder=2024-06-01-upload", 409, valid);
    const untyped = await runForm("2024-06-02-upload", "2024-06-02T00:00:00Z", (manifest) => delete manifest.type);
    const invalid = await call("422", "POST", "/upload?folder=2024-06-02-upload", 422, untyped);
    expect(invalid.json()).toMatchObject({ status: 422, report: { folder: expect.any(String), issues: expect.arrayContaining([expect.objectContaining({ severity: "error" })]) } });
    await call("bad folder", "POST", "/upload?folder=../x", 400, valid);
    await call("415", "POST", "/upload", 415, JSON.stringify({}));
  });

  it("/jobs, /jobs/{id}, /jobs/{id}/cancel: 200, 202, 400, 404, 409, 415", async () => {
    const submitted = await call("202", "POST", "/jobs", 202, JSON.stringify({ kind: "rebuild", run: "2024-05-01-hekla" }));
    const id = (submitted.json() as { id: string }).id;
    await waitFor("the job to finish", async () => ((await http(operatorServer, `/jobs/${id}`, { headers: bearer })).json() as { state: string }).state === "succeeded");
    await call("200", "GET", `/jobs/${id}`, 200);
    await call("200", "GET", "/jobs", 200);
    await call("409", "POST", `/jobs/${id}/cancel`, 409);
    await call("404", "POST", "/jobs/20240101T000000Z-abcdef/cancel", 404);
    await call("404", "GET", "/jobs/20240101T000000Z-abcdef", 404);
    await call("404", "POST", "/jobs", 404, JSON.stringify({ kind: "rebuild", run: "2099-01-01-none" }));
    await call("400", "POST", "/jobs", 400, JSON.stringify({ kind: "reboot" }));
    await call("415", "POST", "/jobs", 415, { type: "text/plain", body: "rebuild" });
    await call("405", "DELETE", `/jobs/${id}`, 405);
  });

  it("/withdraw: 400, 404, 202", async () => {
    await call("no reftime", "POST", "/withdraw", 400);
    await call("404", "POST", "/withdraw?reftime=1999-01-01T00:00:00Z", 404);
    await call("202", "POST", `/withdraw?reftime=${PINNED}`, 202);
  });
});
