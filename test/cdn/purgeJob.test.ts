/**
 * A job's publish purges the shared caches, and the job's record says how that went. The builder of
 * `ashcast start` (the watcher in its worker thread, with the purger beside it), its own builds held back
 * by a long debounce so that the job is what publishes the new run; the real server; a real Varnish in
 * front, deployed as README.md says; and a second cache that is down. The new `/` comes through Varnish
 * long before its s-maxage, the job succeeds although one cache never heard, and GET /jobs/{id} shows
 * both: delivered, and failed with the error.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWatchWorker, type WatchWorker } from "../../src/build/watchWorker.ts";
import { Job } from "../../src/contract/jobs.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { freePort } from "../limits/redisFixtures.ts";
import { OPERATOR_ENV, writeOperator } from "../operator/operatorFixtures.ts";
import { addRun, makeSite, PUBLIC_URL, waitFor, type Site } from "../server/serverFixtures.ts";
import { cacheStatus, latestReftime, startVarnish, through, type Varnish } from "./varnishFixtures.ts";

const OLDER = "2024-05-01T12:00:00Z";
const NEWER = "2024-05-02T12:00:00Z";

let site: Site;
let builder: WatchWorker;
let server: RunningServer;
let varnish: Varnish;
let operator: Record<string, string>;
let varnishPurge: string;
let deadPurge: string;
let log = "";

beforeAll(async () => {
  site = await makeSite("ashcast-purge-job-");
  await addRun(site, "older", OLDER);
  const usersFile = path.join(site.root, "users.json");
  await writeOperator(usersFile);
  const [varnishPort, deadPort] = [await freePort(), await freePort()];
  varnishPurge = `http://127.0.0.1:${varnishPort}/`;
  deadPurge = `http://127.0.0.1:${deadPort}/`;
  builder = startWatchWorker({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, purgeUrls: [varnishPurge, deadPurge], debounceMs: 3_600_000 }, (line) => (log += `${line}\n`));
  await builder.firstBuild;
  server = await startServer({
    distDir: site.distDir,
    port: 0,
    host: "127.0.0.1",
    usersFile,
    env: OPERATOR_ENV,
    operator: { runsDir: site.runsDir, auditLogFile: path.join(site.root, "audit.log"), settingsFile: path.join(site.root, "settings.json"), jobs: builder, cachePurges: () => builder.cachePurges },
  });
  varnish = await startVarnish(Number(new URL(server.url).port), 60, varnishPort);
  const token = await through(varnish, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
  operator = { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
});

afterAll(async () => {
  await varnish?.stop();
  await server?.close();
  await builder?.close();
  await site?.cleanup();
});

const job = async (id: string) => Job.parse((await through(varnish, `/jobs/${id}`, { headers: operator })).json());

describe("a rebuild job behind Varnish, with one cache down", () => {
  it("publishes, the new / comes through the cache, and the job's record shows each cache's purge", async () => {
    // The first publish's purges (sent while Varnish was starting, retried, then repeated) are over first.
    await waitFor("the first publish's purges to end", () => builder.cachePurges.every((purge) => purge.state !== "sending"), 30_000);
    for (const target of ["/", "/reftimes", `/?reftime=${OLDER}`]) await through(varnish, target);
    expect(cacheStatus(await through(varnish, "/"))).toBe("HIT");
    expect(latestReftime(await through(varnish, "/"))).toBe(OLDER);

    // The watcher sees the new folder but waits an hour: the job is what publishes it.
    await addRun(site, "newer", NEWER);
    const submitted = await through(varnish, "/jobs", { method: "POST", headers: { ...operator, "content-type": "application/json" }, body: JSON.stringify({ kind: "rebuild" }) });
    expect(submitted.status, submitted.text()).toBe(202);
    const { id } = Job.parse(submitted.json());
    await waitFor("the job to end", async () => ["succeeded", "failed"].includes((await job(id)).state), 60_000);
    expect(await job(id)).toMatchObject({ state: "succeeded", outcome: { kind: "rebuild", published: true } });

    // Long before the 600 s s-maxage of these answers.
    await waitFor(`the new latest run through Varnish (${log.slice(-2000)})`, async () => latestReftime(await through(varnish, "/")) === NEWER, 30_000);
    await waitFor("the new reftimes through Varnish", async () => (await through(varnish, "/reftimes")).text().includes(NEWER), 30_000);
    expect(cacheStatus(await through(varnish, `/?reftime=${OLDER}`))).toBe("HIT");

    await waitFor("both caches' purges to end", async () => {
      const purges = (await job(id)).cachePurges ?? [];
      return purges.length === 2 && purges.every((purge) => purge.state !== "sending");
    }, 30_000);
    const record = await job(id);
    expect(record.state).toBe("succeeded");
    const release = record.outcome?.kind === "rebuild" ? record.outcome.release : undefined;
    const delivered = record.cachePurges!.find((purge) => purge.cache === varnishPurge)!;
    const failed = record.cachePurges!.find((purge) => purge.cache === deadPurge)!;
    for (const purge of [delivered, failed]) {
      expect(purge.release).toBe(release);
      expect(purge.tags).toEqual(expect.arrayContaining(["latest", "reftimes", "changelog", `run:${NEWER}`]));
      expect(purge.tags).not.toContain(`run:${OLDER}`);
    }
    expect(delivered).toMatchObject({ state: "done", retriesLeft: 0 });
    expect(delivered.error).toBeUndefined();
    expect(failed).toMatchObject({ state: "failed", attempts: 5, retriesLeft: 0, error: expect.stringMatching(/ECONNREFUSED/) });
    // Logged too, where the publisher logs.
    expect(log).toContain(`cache purge failed: ${deadPurge} did not purge ${failed.tags.length} tag(s) of release ${release} after 5 attempts`);
  });
});
