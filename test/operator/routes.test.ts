/**
 * The operator routes as an operator uses them. POST /upload: a real server on a socket, real sign-in, the bundled sample runs
 * (real NetCDF) sent as a multipart form or a zip archive, validated in a real worker thread, and the
 * build that follows. Unsafe archives are made byte by byte (zipFixture.ts).
 */
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, expectProblem, http, makeSite, type RawResponse, type Site } from "../server/serverFixtures.ts";
import { InvalidUploadProblem } from "../../src/contract/problem.ts";
import { zipArchive, type ZipEntry } from "./zipFixture.ts";
import { OPERATOR_ENV, signInOperator, writeOperator } from "./operatorFixtures.ts";

const SAMPLES = path.resolve(import.meta.dirname, "../../runs");
const KATLA = "2026-05-02-katla-rehearsal"; // SNAP NetCDF, a KML advisory, volcano.xml
const HEKLA = "2026-03-14-hekla-exercise"; // EEMEP NetCDF, capabilities, KML, volcano.xml
const LIMITS = { maxBytes: 1024 * 1024, maxFiles: 6 };

let dir: string;
let site: Site;
let audit: string;
let settingsFile: string;
let server: RunningServer;
let bearer: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-upload-"));
  site = await makeSite("ashcast-upload-site-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site, "2026-11-23T12:00:00Z");
  const usersFile = path.join(dir, "users.json");
  await writeOperator(usersFile);
  audit = path.join(dir, "audit.log");
  settingsFile = path.join(dir, "settings.json");
  // Small limits, so the limit tests send little; set as an operator would, through the settings file.
  await writeFile(settingsFile, JSON.stringify({ uploadMaxBytes: LIMITS.maxBytes, uploadMaxFiles: LIMITS.maxFiles }));
  server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: audit, settingsFile } });
  bearer = await signInOperator(server);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await site?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

async function sampleFiles(folder: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {};
  for (const name of (await readdir(path.join(SAMPLES, folder))).sort()) files[name] = await readFile(path.join(SAMPLES, folder, name));
  return files;
}

async function multipart(files: Record<string, Buffer | string>, fields: Record<string, string> = {}): Promise<{ body: Buffer; type: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, data] of Object.entries(files)) form.append("file", new Blob([data]), name);
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get("content-type")! };
}

function upload(body: Buffer, type: string, query = ""): Promise<RawResponse> {
  return http(server, `/upload${query}`, { method: "POST", headers: { ...bearer, "content-type": type }, body });
}

/** What runs/ holds, staging folders included: an upload leaves either its whole folder or nothing. */
const runsEntries = async () => (await readdir(site.runsDir)).sort();

const auditLines = async () => (await readFile(audit, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { who: string; action: string; target: string; outcome: string; detail?: string });

describe("POST /upload", () => {
  it("takes a run's files as a multipart form: validated, moved into runs/ whole, published by the next build, audited", async () => {
    const before = await runsEntries();
    const { body, type } = await multipart(await sampleFiles(KATLA));
    const res = await upload(body, type);
    expect(res.status, res.text()).toBe(202);
    const answer = res.json() as { folder: string; reftime: string; type: string; warnings: unknown[]; url: string };
    expect(answer).toMatchObject({ reftime: "2026-05-02T12:00:00Z", type: "Rehearsal", warnings: [], url: "/volcanicashforecast/0.1/?reftime=2026-05-02T12:00:00Z" });
    expect(answer.folder).toMatch(/^20260502T120000Z-upload-\d{8}T\d{6}Z-[0-9a-f]{4}$/);
    expect(await runsEntries()).toEqual([...before, answer.folder].sort());
    expect((await readdir(path.join(site.runsDir, answer.folder))).sort()).toEqual(Object.keys(await sampleFiles(KATLA)).sort());

    const built = await buildSite(site, "2026-11-23T12:01:00Z");
    expect(built.report.runs.find((run) => run.folder === answer.folder)?.status).toBe("published");
    expect(built.events.map((event) => [event.kind, event.reftime])).toEqual([["published", "2026-05-02T12:00:00Z"]]);
    expect((await auditLines()).at(-1)).toMatchObject({ who: "alice", action: "upload", target: answer.folder, outcome: "done" });
  }, 60_000);

  it("takes one zip archive of a run folder, and uses the folder's name", async () => {
    const files = await sampleFiles(HEKLA);
    const zip = zipArchive([{ name: "hekla-from-zip/" }, ...Object.entries(files).map(([name, data]): ZipEntry => ({ name: `hekla-from-zip/${name}`, data, deflate: true }))]);
    const res = await upload(zip, "application/zip");
    expect(res.status, res.text()).toBe(202);
    expect(res.json()).toMatchObject({ folder: "hekla-from-zip", reftime: "2026-03-14T06:00:00Z", type: "Exercise" });
    expect((await readdir(path.join(site.runsDir, "hekla-from-zip"))).sort()).toEqual(Object.keys(files).sort());
    // The same name again is never replaced: 409, and the folder keeps its files.
    const again = await upload(zip, "application/zip");
    expectProblem(again, 409);
    expect((await readdir(path.join(site.runsDir, "hekla-from-zip"))).sort()).toEqual(Object.keys(files).sort());
    // Asked by ?folder=, it is said before the body is read: here a body that is still being sent.
    const before = await runsEntries();
    const early = await new Promise<number>((resolve, reject) => {
      const req = request({ host: new URL(server.url).hostname, port: new URL(server.url).port, method: "POST", path: `${new URL(server.url).pathname}/upload?folder=hekla-from-zip`, headers: { ...bearer, "content-type": "application/zip", "transfer-encoding": "chunked" } }, (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      });
      req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
      req.write(zip.subarray(0, 100));
    });
    expect(early).toBe(409);
    expect(await runsEntries()).toEqual(before);
  }, 60_000);

  it("answers an invalid run with 422 and its validation report (file, message, fix); nothing enters runs/", async () => {
    const before = await runsEntries();
    const files = await sampleFiles(KATLA);
    const manifest = JSON.parse(files["run.json"]!.toString()) as Record<string, unknown>;
    delete manifest.type;
    const { body, type } = await multipart({ ...files, "run.json": JSON.stringify(manifest) });
    const res = await upload(body, type, "?folder=katla-without-type");
    expect(res.status).toBe(422);
    expect(res.headers["content-type"]).toBe("application/problem+json");
    const problem = InvalidUploadProblem.parse(res.json());
    expect(problem.detail).toMatch(/not valid \(\d+ errors?\); nothing was published/);
    expect(problem.report.folder).toBe("katla-without-type");
    expect(problem.report.status).toBe("invalid");
    const typeIssue = problem.report.issues.find((issue) => issue.severity === "error" && /type/.test(issue.message));
    expect(typeIssue, JSON.stringify(problem.report.issues)).toMatchObject({ file: "katla-without-type/run.json", fix: expect.stringMatching(/type/) });
    expect(await runsEntries()).toEqual(before);
    expect((await auditLines()).at(-1)).toMatchObject({ action: "upload", target: "katla-without-type", outcome: "refused" });
    // Without a folder name (none asked, none in the archive) the report calls it "(upload)".
    const unnamed = InvalidUploadProblem.parse((await upload(body, type)).json());
    expect(unnamed.report.folder).toBe("(upload)");
    expect(unnamed.report.issues.find((issue) => issue.severity === "error" && /type/.test(issue.message))).toMatchObject({ file: "(upload)/run.json" });
    expect(await runsEntries()).toEqual(before);
    // A layer whose file is missing: its fix names the folder asked for, not the staging folder the check ran in.
    const withType = JSON.parse(files["run.json"]!.toString()) as Record<string, unknown>;
    withType.layergroups = [{ name: "Forecaster", layers: [{ type: "KML", name: "Ash", file: "missing.kml" }] }];
    const second = await multipart({ ...files, "run.json": JSON.stringify(withType) });
    const missing = InvalidUploadProblem.parse((await upload(second.body, second.type, "?folder=katla-missing-layer")).json());
    expect(missing.report.issues.find((issue) => /missing\.kml/.test(issue.message))?.fix, JSON.stringify(missing.report.issues)).toMatch(/^copy missing\.kml into katla-missing-layer\//);
    // No report names the folder the upload was received or checked in.
    for (const issue of [...problem.report.issues, ...missing.report.issues, ...unnamed.report.issues]) {
      for (const text of [issue.file, issue.message, issue.fix]) expect(text).not.toMatch(/incoming|\.upload-/);
    }
  }, 60_000);

  it("names an accepted upload's warnings after the folder it was given, when it asked for none", async () => {
    const files = await sampleFiles(KATLA);
    // The volcano moved to the Pacific: outside the model's domain and far from the drawn areas, which is said, not refused.
    const moved = files["volcano.xml"]!.toString().replace('lon="-19.05"', 'lon="150.0"');
    const { body, type } = await multipart({ ...files, "volcano.xml": moved });
    const res = await upload(body, type);
    expect(res.status, res.text()).toBe(202);
    const answer = res.json() as { folder: string; warnings: Array<{ file: string; message: string; fix: string }> };
    try {
      expect(answer.warnings.map((warning) => warning.file).sort()).toEqual([`${answer.folder}/advisory.kml`, `${answer.folder}/volcano.xml`]);
      for (const warning of answer.warnings) expect(`${warning.file} ${warning.message} ${warning.fix}`).not.toMatch(/\(upload\)|incoming|\.upload-/);
    } finally {
      await rm(path.join(site.runsDir, answer.folder), { recursive: true, force: true });
    }
  }, 60_000);

  it("refuses unsafe archives with 400 and writes nothing, inside runs/ or outside it", async () => {
    const before = await runsEntries();
    const outside = await readdir(path.dirname(site.runsDir));
    const cases: Array<[string, ZipEntry[], RegExp]> = [
      ["zip-slip with ..", [{ name: "run.json", data: "{}" }, { name: "../evil.kml", data: "x" }], /invalid relative path|not a plain file name|nested/],
      ["absolute path", [{ name: "/tmp/evil.kml", data: "x" }], /absolute path|not a plain file name/],
      ["backslash", [{ name: "..\\evil.kml", data: "x" }], /invalid characters|not a plain file name/],
      ["nested folders", [{ name: "a/b/run.json", data: "{}" }], /nested/],
      ["two folders", [{ name: "a/run.json", data: "{}" }, { name: "b/run.json", data: "{}" }], /more than one folder/],
      ["a file beside the folder, after it", [{ name: "a/run.json", data: "{}" }, { name: "advisory.kml", data: "x" }], /lies beside the folder/],
      ["a file beside the folder, before it", [{ name: "advisory.kml", data: "x" }, { name: "a/run.json", data: "{}" }], /lies beside the folder/],
      ["symbolic link", [{ name: "advisory.kml", data: "/etc/passwd", mode: 0o120777 }], /symbolic link/],
      ["hidden file", [{ name: ".env", data: "x" }], /hidden, partial or temporary/],
      ["a partial file", [{ name: "model.nc.part", data: "x" }], /hidden, partial or temporary/],
      ["the same name twice", [{ name: "run.json", data: "{}" }, { name: "run.json", data: "{}" }], /twice/],
      ["no file", [], /holds no file/],
      ["size that lies", [{ name: "run.json", data: "{".repeat(5000), deflate: true, declaredSize: 10 }], /cannot be unpacked|damaged|size/],
    ];
    for (const [what, entries, detail] of cases) {
      const res = await upload(zipArchive(entries), "application/zip");
      expect(res.status, `${what}: ${res.text()}`).toBe(400);
      expect(expectProblem(res, 400).detail, what).toMatch(detail);
    }
    expectProblem(await upload(Buffer.from("not a zip at all"), "application/zip"), 400);
    expect(await runsEntries()).toEqual(before);
    expect(await readdir(path.dirname(site.runsDir))).toEqual(outside);
  });

  it("enforces the size and file limits with 413, however the size is hidden", async () => {
    const before = await runsEntries();
    const big = Buffer.alloc(LIMITS.maxBytes + 1, 0x20);
    // Declared too large: refused before reading.
    expectProblem(await upload(big, "application/zip"), 413);
    // A multipart file beyond the limit.
    const form = await multipart({ "run.json": big });
    expectProblem(await upload(form.body, form.type), 413);
    // The same without a declared length (chunked): refused as it crosses the limit, not left unanswered, and
    // its staging folder removed (checked below).
    const overflowing = await multipart({ "run.json": "{}", "advisory.kml": "<kml/>", "model.nc": randomBytes(LIMITS.maxBytes * 5) });
    const chunked = await http(server, "/upload", { method: "POST", headers: { ...bearer, "content-type": overflowing.type, "transfer-encoding": "chunked" }, body: overflowing.body });
    expect(expectProblem(chunked, 413).detail).toMatch(/larger than the upload limit/);
    // A zip bomb: small archive, an entry that inflates beyond the limit (its declared size is honest).
    const bomb = zipArchive([{ name: "run.json", data: Buffer.alloc(LIMITS.maxBytes * 2, 0x20), deflate: true }]);
    expect(bomb.length).toBeLessThan(LIMITS.maxBytes / 100);
    expectProblem(await upload(bomb, "application/zip"), 413);
    // Too many files.
    const many = await multipart(Object.fromEntries(Array.from({ length: LIMITS.maxFiles + 1 }, (_, i) => [`layer${i}.kml`, "x"])));
    expect(expectProblem(await upload(many.body, many.type), 413).detail).toMatch(/at most 6 files/);
    expect(await runsEntries()).toEqual(before);
  });

  it("refuses what is not an upload: 415 for other bodies, 400 for a bad folder name, 401 without sign-in, 405 for GET", async () => {
    expectProblem(await upload(Buffer.from("{}"), "application/json"), 415);
    const { body, type } = await multipart({ "run.json": "{}" });
    // Names the build skips too: a run uploaded under one would never be published.
    for (const name of ["../x", ".hidden", "a/b", "x".repeat(101), "katla.part", "katla.tmp", "katla.swp", "katla~"]) expectProblem(await upload(body, type, `?folder=${encodeURIComponent(name)}`), 400);
    // A multipart file name with a path in it is refused, not cut to its last part.
    const before = await runsEntries();
    for (const name of ["../../evil/run.json", "/etc/run.json", "..\\..\\run.json", "sub/run.json"]) {
      const pathed = await multipart({ [name]: "{}" });
      expect(expectProblem(await upload(pathed.body, pathed.type, "?folder=pathed"), 400).detail, name).toMatch(/not a plain file name/);
    }
    expect(await runsEntries()).toEqual(before);
    const anonymous = await http(server, "/upload", { method: "POST", headers: { "content-type": type }, body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toBe('Bearer realm="ashcast"');
    const get = await http(server, "/upload", { headers: bearer });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
  });

  it("takes concurrent uploads of the same reftime as two whole folders; the build settles them by its rule", async () => {
    const files = await sampleFiles(KATLA);
    const manifest = JSON.parse(files["run.json"]!.toString()) as { description: string };
    const variant = (description: string) => multipart({ ...files, "run.json": JSON.stringify({ ...manifest, description }) });
    const [first, second] = await Promise.all([variant("First copy."), variant("Second copy.")]);
    const [a, b] = await Promise.all([upload(first.body, first.type, "?folder=katla-concurrent-a"), upload(second.body, second.type, "?folder=katla-concurrent-b")]);
    expect([a.status, b.status], `${a.text()} ${b.text()}`).toEqual([202, 202]);
    const built = await buildSite(site, "2026-11-23T12:02:00Z");
    const statuses = Object.fromEntries(built.report.runs.filter((run) => run.folder.startsWith("katla-concurrent-")).map((run) => [run.folder, run.status]));
    // Same type, different content: the folder name that sorts last is published (docs/decisions.md).
    expect(statuses).toEqual({ "katla-concurrent-a": "variant-conflict", "katla-concurrent-b": "published" });
  }, 90_000);

  it("leaves nothing behind when the client is cut off half-way, form or zip, audits it as refused, and keeps serving", async () => {
    const before = await runsEntries();
    const files = await sampleFiles(KATLA);
    const form = await multipart(files);
    const zip = zipArchive(Object.entries(files).map(([name, data]) => ({ name, data })));
    const url = new URL(server.url);
    for (const [folder, body, type] of [["cut-off-form", form.body, form.type], ["cut-off-zip", zip, "application/zip"]] as const) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(`POST ${url.pathname}/upload?folder=${folder} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${bearer.authorization}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`);
          socket.write(body.subarray(0, body.length >> 1), () => setTimeout(() => (socket.destroy(), resolve()), 200));
        });
        socket.on("error", reject);
      });
      // The staging folder goes once the server notices the closed connection.
      for (let i = 0; i < 100 && ((await runsEntries()).length !== before.length || !(await auditLines()).some((line) => line.target === folder && line.outcome !== "started")); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await runsEntries()).toEqual(before);
      // A client that went away is the client's doing, not an internal error.
      expect((await auditLines()).filter((line) => line.target === folder).map((line) => line.outcome), folder).toEqual(["started", "refused"]);
    }
    expect((await http(server, "/reftimes")).status).toBe(200);
  });

  it("when the audit log cannot be written, an upload and a withdrawal are refused with 503 before anything is done", async () => {
    const before = await runsEntries();
    await rename(audit, `${audit}.aside`);
    await mkdir(audit); // appending to it fails (EISDIR), as on a full or read-only disk
    try {
      const { body, type } = await multipart(await sampleFiles(HEKLA));
      expect(expectProblem(await upload(body, type, "?folder=unaudited"), 503).detail).toMatch(/audit log cannot be written, so nothing was done/);
      const withdrawal = await http(server, "/withdraw?reftime=2024-05-01T12:00:00Z", { method: "POST", headers: bearer });
      expect(expectProblem(withdrawal, 503).detail).toMatch(/audit log cannot be written/);
      expect(await runsEntries()).toEqual(before);
    } finally {
      await rm(audit, { recursive: true });
      await rename(`${audit}.aside`, audit);
    }
  }, 60_000);

  it("sweeps staging folders left by a server that was killed, at the next start", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 10)"]);
    await new Promise((resolve) => child.on("exit", resolve));
    const stale = path.join(site.runsDir, `.upload-${child.pid}-deadbeef0000`);
    await mkdir(path.join(stale, "run"), { recursive: true });
    const second = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: audit } });
    try {
      expect(await runsEntries()).not.toContain(path.basename(stale));
    } finally {
      await second.close();
    }
  });
});

describe("GET and POST /config", () => {
  const config = async () => (await http(server, "/config")).json() as { uploadLimits: { maxBytes: number; maxFiles: number }; changedSettings: Record<string, number> };
  const post = (target: string, body: string, type = "application/json", headers = bearer) => http(server, target, { method: "POST", headers: { ...headers, "content-type": type }, body });

  it("shows the effective settings to anyone, and lets an operator change the allowed keys, persisted and in effect at once", async () => {
    expect((await config()).uploadLimits).toEqual(LIMITS);
    const before = await http(server, "/config");
    const changed = await post("/config", JSON.stringify({ uploadMaxFiles: 2 }));
    // Its date moves on with the change: a client revalidating with the date it holds gets the new settings.
    const revalidated = await http(server, "/config", { headers: { "if-modified-since": before.headers["last-modified"]! } });
    expect(revalidated.status).toBe(200);
    expect(Date.parse(revalidated.headers["last-modified"]!)).toBeGreaterThan(Date.parse(before.headers["last-modified"]!));
    expect(changed.status, changed.text()).toBe(200);
    expect(changed.json()).toEqual({ uploadLimits: { ...LIMITS, maxFiles: 2 }, changedSettings: { uploadMaxBytes: LIMITS.maxBytes, uploadMaxFiles: 2 } });
    expect((await config()).uploadLimits.maxFiles).toBe(2);
    expect(JSON.parse(await readFile(settingsFile, "utf8"))).toEqual({ uploadMaxBytes: LIMITS.maxBytes, uploadMaxFiles: 2 });
    // In effect: a third file is now refused.
    const three = await multipart({ "a.kml": "x", "b.kml": "x", "c.kml": "x" });
    expect(expectProblem(await upload(three.body, three.type), 413).detail).toMatch(/at most 2 files/);
    // Back as it was, for the other tests.
    expect((await post("/config", JSON.stringify({ uploadMaxFiles: LIMITS.maxFiles }))).status).toBe(200);
  });

  it("refuses unknown keys, values out of range and bodies that are not a JSON object, naming the key and range; nothing changes", async () => {
    const before = await readFile(settingsFile, "utf8");
    const cases: Array<[string, string, number, RegExp]> = [
      ["unknown key", JSON.stringify({ uploadMaxBites: 5 }), 400, /uploadMaxBites is not a setting; the settings are uploadMaxBytes, uploadMaxFiles/],
      ["too small", JSON.stringify({ uploadMaxFiles: 0 }), 400, /uploadMaxFiles must be a whole number from 1 to 1000/],
      ["not whole", JSON.stringify({ uploadMaxBytes: 2048.5 }), 400, /uploadMaxBytes must be a whole number from 1024 to/],
      ["a string", JSON.stringify({ uploadMaxFiles: "10" }), 400, /uploadMaxFiles must be a whole number/],
      ["an array", "[1]", 400, /must be a JSON object/],
      ["not JSON", "{uploadMaxFiles: 3", 400, /not JSON/],
      ["too large", JSON.stringify({ uploadMaxFiles: 3, pad: "x".repeat(5000) }), 413, /4 KiB/],
      ["a key twice", '{"uploadMaxBytes": 99999999999999, "uploadMaxBytes": 2048}', 400, /uploadMaxBytes is given twice in the body/],
    ];
    for (const [what, body, status, detail] of cases) expect(expectProblem(await post("/config", body), status).detail, what).toMatch(detail);
    expectProblem(await post("/config", "uploadMaxFiles=3", "application/x-www-form-urlencoded"), 415);
    expect(await readFile(settingsFile, "utf8")).toBe(before);
  });

  it("answers 413 to a body past 4 KiB as soon as it is past, without waiting for the rest (a chunked body left open)", async () => {
    const url = new URL(server.url);
    const answered = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, method: "POST", path: `${url.pathname}/config`, headers: { ...bearer, "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on("error", reject);
      req.write(`{"pad":"${"x".repeat(6000)}`); // never ended: a server reading the whole body would wait for ever
    });
    expect(answered).toBe(413);
  });

  it("is protected: 401 without sign-in for POST /config and /config/reset, 405 with Allow for other methods", async () => {
    for (const target of ["/config", "/config/reset"]) {
      const res = await post(target, "{}", "application/json", {});
      expect(res.status, target).toBe(401);
    }
    const put = await http(server, "/config", { method: "PUT", headers: bearer });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe("GET, HEAD, OPTIONS, POST");
    const getReset = await http(server, "/config/reset", { headers: bearer });
    expect(getReset.status).toBe(405);
  });

  it("POST /config/reset returns to the defaults and removes the file; a restart keeps what was set; every change is audited", async () => {
    const saved = await readFile(settingsFile, "utf8");
    const reset = await post("/config/reset", "");
    expect(reset.status).toBe(200);
    expect(reset.json()).toEqual({ uploadLimits: { maxBytes: 1024 ** 3, maxFiles: 64 }, changedSettings: {} });
    await expect(readFile(settingsFile)).rejects.toMatchObject({ code: "ENOENT" });
    // A server started on a settings file applies it; a broken one stops the start, naming the file.
    await writeFile(settingsFile, saved);
    const again = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: audit, settingsFile } });
    try {
      expect(((await http(again, "/config")).json() as { uploadLimits: unknown }).uploadLimits).toEqual(LIMITS);
    } finally {
      await again.close();
    }
    const broken = path.join(dir, "broken-settings.json");
    await writeFile(broken, JSON.stringify({ uploadMaxFiles: -1 }));
    await expect(startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: audit, settingsFile: broken } })).rejects.toMatchObject({ where: broken, message: expect.stringMatching(/uploadMaxFiles must be a whole number from 1 to 1000/) });
    // The live server still has its reset defaults until told otherwise; put the test limits back.
    expect((await post("/config", saved)).status).toBe(200);
    const actions = (await auditLines()).filter((line) => line.action.startsWith("config")).map(({ action, outcome }) => `${action} ${outcome}`);
    expect(actions).toEqual(expect.arrayContaining(["config done", "config refused", "config-reset done"]));
  });
});
