/**
 * An upload that meets a full disk: runs/ on a small tmpfs, a real server, real sign-in. The server's own
 * write failing is its problem, not the client's: 507 with the reason, nothing kept in runs/, audited,
 * and the service keeps serving. Needs `mount -t tmpfs` (root, as CI runs); skipped with the reason otherwise.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, expectProblem, http, makeSite, type Site } from "../server/serverFixtures.ts";
import { tryMountTmpfs, unmountTmpfs } from "../tmpfs.ts";
import { zipArchive } from "./zipFixture.ts";
import { OPERATOR_ENV, signInOperator, writeOperator } from "./operatorFixtures.ts";

const mounted = tryMountTmpfs(256 * 1024, "runs/");
if ("reason" in mounted) console.log(`[upload full disk] skipped: ${mounted.reason}`);

describe.skipIf("reason" in mounted)("an upload when runs/ is full", () => {
  const runsDir = "dir" in mounted ? mounted.dir : "";
  let dir: string;
  let site: Site;
  let server: RunningServer;
  let bearer: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-upload-full-"));
    site = await makeSite("ashcast-upload-full-site-");
    await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
    await buildSite(site);
    const usersFile = path.join(dir, "users.json");
    await writeOperator(usersFile);
    server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: OPERATOR_ENV, operator: { runsDir, auditLogFile: path.join(dir, "audit.log"), settingsFile: path.join(dir, "settings.json") } });
    bearer = await signInOperator(server);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await site?.cleanup();
    await rm(dir, { recursive: true, force: true });
    if (runsDir) unmountTmpfs(runsDir);
  });

  // Larger than the 256 KiB file system, far below the upload limit (1 GiB by default).
  const big = Buffer.alloc(1024 * 1024, "x");

  it("a multipart upload: 507 naming the cause, nothing left in runs/, audited as failed, the service still serving", async () => {
    const form = new FormData();
    form.append("file", new Blob([`{"type": "Exercise"}`]), "run.json");
    form.append("file", new Blob([big]), "advisory.kml");
    const encoded = new Response(form);
    const res = await http(server, "/upload?folder=2024-06-01-full", { method: "POST", headers: { ...bearer, "content-type": encoded.headers.get("content-type")! }, body: Buffer.from(await encoded.arrayBuffer()) });
    expect(expectProblem(res, 507).detail).toMatch(/no space left to store the upload; nothing was kept/);
    expect(await readdir(runsDir)).toEqual([]);
    const audit = (await readFile(path.join(dir, "audit.log"), "utf8")).trim().split("\n").map((line) => JSON.parse(line) as Record<string, string>);
    expect(audit.at(-1)).toMatchObject({ who: "alice", action: "upload", outcome: "failed" });
    expect(audit.at(-1)!.detail).toMatch(/ENOSPC/);
    expect((await http(server, "/.json")).status).toBe(200);
  });

  it("a zip upload: 507 too, and nothing left", async () => {
    const zip = zipArchive([{ name: "run.json", data: Buffer.from(`{"type": "Exercise"}`) }, { name: "advisory.kml", data: big, deflate: true }]); // small on the wire, too large unpacked
    const res = await http(server, "/upload?folder=2024-06-02-full", { method: "POST", headers: { ...bearer, "content-type": "application/zip" }, body: zip });
    expectProblem(res, 507);
    expect(await readdir(runsDir)).toEqual([]);
  });
});
