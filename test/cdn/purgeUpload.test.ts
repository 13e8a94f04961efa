/**
 * An upload's publish purges the shared caches: `ashcast start` as README.md deploys it behind a real
 * Varnish, with a second purge address where no cache listens. A run uploaded through Varnish is
 * published by the watcher, the new `/` and `/reftimes` come through the cache long before their
 * s-maxage, and /datasets shows the purge delivered to Varnish and failed, with its error, at the other.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun } from "../../src/cli/newRun.ts";
import { DatasetsBody } from "../../src/contract/cachePurges.ts";
import { freePort } from "../limits/redisFixtures.ts";
import { OPERATOR_ENV, writeOperator } from "../operator/operatorFixtures.ts";
import { addRun, HEKLA, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";
import { ashcast, type Child } from "./originFixtures.ts";
import { latestReftime, startVarnish, through, type Varnish } from "./varnishFixtures.ts";

const OLDER = "2024-05-01T12:00:00Z";
const NEWER = "2024-05-02T12:00:00Z";

let site: Site;
let start: Child;
let varnish: Varnish;
let operator: Record<string, string>;
let varnishPurge: string;
let deadPurge: string;

beforeAll(async () => {
  site = await makeSite("ashcast-purge-upload-");
  await addRun(site, "older", OLDER);
  const usersFile = path.join(site.root, "users.json");
  await writeOperator(usersFile);
  const [originPort, varnishPort, deadPort] = [await freePort(), await freePort(), await freePort()];
  varnishPurge = `http://127.0.0.1:${varnishPort}/`;
  deadPurge = `http://127.0.0.1:${deadPort}/`;
  start = await ashcast(["start", "--runs", site.runsDir, "--out", site.distDir, "--port", String(originPort), "--trusted-proxies", "127.0.0.1", "--purge", varnishPurge, "--purge", deadPurge, "--users", usersFile], {
    env: { ...OPERATOR_ENV, ASHCAST_AUDIT_LOG: path.join(site.root, "audit.log"), ASHCAST_SETTINGS_FILE: path.join(site.root, "settings.json") },
    ready: /serving http/,
  });
  varnish = await startVarnish(originPort, 60, varnishPort);
  const token = await through(varnish, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
  operator = { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
});

afterAll(async () => {
  await varnish?.stop();
  await start?.stop();
  await site?.cleanup();
});

/** A run folder as `ashcast new-run` makes it, outside runs/, sent as the multipart form an operator's client sends. */
async function runForm(reftime: string): Promise<{ body: Buffer; type: string }> {
  const dir = await newRun({ runsDir: path.join(site.root, "elsewhere"), name: "upload", type: "Exercise", reftime, volcano: HEKLA });
  const form = new FormData();
  for (const name of await readdir(dir)) form.append("file", new Blob([await readFile(path.join(dir, name))]), name);
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get("content-type")! };
}

/** The recent purges, as operators see them (operator routes allow 5 requests/s: asked a few times a second). */
const cachePurges = async () => {
  await new Promise((resolve) => setTimeout(resolve, 300));
  const datasets = await through(varnish, "/datasets", { headers: operator });
  expect(datasets.status, datasets.text()).toBe(200);
  return DatasetsBody.parse(datasets.json());
};


describe("an upload behind Varnish, with one cache down", () => {
  it("is published, the new / and /reftimes come through the cache, and /datasets shows each cache's purge", async () => {
    // The first publish's purges (sent while Varnish was starting, retried, then repeated) are over first.
    await waitFor("the first publish's purges to end", async () => (await cachePurges()).cachePurges!.every((purge) => purge.state !== "sending"), 30_000);
    for (const target of ["/", "/reftimes"]) await through(varnish, target);
    expect(latestReftime(await through(varnish, "/"))).toBe(OLDER);

    const { body, type } = await runForm(NEWER);
    const uploaded = await through(varnish, "/upload?folder=newer", { method: "POST", headers: { ...operator, "content-type": type }, body });
    expect(uploaded.status, uploaded.text()).toBe(202);

    // Long before the 600 s s-maxage of these answers.
    await waitFor(`the new latest run through Varnish (${start.output().slice(-2000)})`, async () => latestReftime(await through(varnish, "/")) === NEWER, 30_000);
    await waitFor("the new reftimes through Varnish", async () => (await through(varnish, "/reftimes")).text().includes(NEWER), 30_000);

    const ofTheUpload = (report: DatasetsBody) => (report.cachePurges ?? []).filter((purge) => purge.release === report.release);
    await waitFor("both caches' purges of the upload to end", async () => {
      const purges = ofTheUpload(await cachePurges());
      return purges.length === 2 && purges.every((purge) => purge.state !== "sending");
    }, 30_000);
    const purges = ofTheUpload(await cachePurges());
    for (const purge of purges) expect(purge.tags).toEqual(expect.arrayContaining(["latest", "reftimes", "changelog", `run:${NEWER}`]));
    expect(purges.find((purge) => purge.cache === varnishPurge)).toMatchObject({ state: "done", retriesLeft: 0 });
    expect(purges.find((purge) => purge.cache === deadPurge)).toMatchObject({ state: "failed", attempts: 5, retriesLeft: 0, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(start.output()).toContain(`cache purge failed: ${deadPurge} did not purge`);
  });
});
