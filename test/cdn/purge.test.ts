/**
 * Purge on publish, end to end with real processes: `ashcast start --purge` behind a real Varnish (as
 * README.md deploys it) publishes a new run and a withdrawal, and the new `/` and `/reftimes` come through
 * the cache long before their s-maxage; `ashcast build --purge` at a cache that is down still publishes.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { once } from "node:events";
import { createPurger, resolvePurgeUrls, tagBatches } from "../../src/build/cachePurger.ts";
import { DatasetsBody } from "../../src/contract/cachePurges.ts";
import { freePort, stopChild } from "../limits/redisFixtures.ts";
import { OPERATOR_ENV, writeOperator } from "../operator/operatorFixtures.ts";
import { addRun, makeSite, waitFor, type RawResponse, type Site } from "../server/serverFixtures.ts";
import { cacheStatus, latestReftime, listedReftimes, REPO, startVarnish, through, type Varnish } from "./varnishFixtures.ts";

const OLDER = "2024-05-01T12:00:00Z";
const NEWER = "2024-05-02T12:00:00Z";

describe("purge addresses", () => {
  it("come from --purge and ASHCAST_PURGE_URLS; a bad one names where it came from", () => {
    expect(resolvePurgeUrls(["http://127.0.0.1:6081/"], { ASHCAST_PURGE_URLS: "http://a:1/ http://b:2/,http://127.0.0.1:6081/" })).toEqual(["http://127.0.0.1:6081/", "http://a:1/", "http://b:2/"]);
    expect(() => resolvePurgeUrls(["varnish:6081"], {})).toThrow(expect.objectContaining({ where: "--purge" }));
    expect(() => resolvePurgeUrls([], { ASHCAST_PURGE_URLS: "ftp://x/" })).toThrow(expect.objectContaining({ where: "ASHCAST_PURGE_URLS" }));
  });

  it("many tags go in several purges, each header small enough for Varnish", () => {
    const tags = Array.from({ length: 1000 }, (_, i) => `run:2024-05-01T12:00:${String(i % 60).padStart(2, "0")}Z-${i}`);
    const batches = tagBatches(tags);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(4000);
    expect(batches.join(" ").split(" ")).toEqual(tags);
  });
});

describe("the purger", () => {
  it("retries a cache that fails, with growing waits, sends the purge again later, and keeps what happened", async () => {
    // A cache that refuses twice (as Varnish answers while its origin list is being reloaded), then purges.
    const seen: Array<{ method: string; xkey: string | undefined }> = [];
    const cache = createServer((req, res) => {
      seen.push({ method: req.method ?? "", xkey: req.headers.xkey as string | undefined });
      res.statusCode = seen.length <= 2 ? 503 : 200;
      res.end();
    }).listen(0, "127.0.0.1");
    await once(cache, "listening");
    const url = `http://127.0.0.1:${(cache.address() as { port: number }).port}/`;
    const lines: string[] = [];
    try {
      const retriesLeft: number[] = [];
      const purger = createPurger({ urls: [url], backoffMs: 50, repeatsAfterMs: [50, 100], log: (line) => lines.push(line), onChange: (records) => retriesLeft.push(records[0]!.retriesLeft) });
      purger.purge("r1", ["latest", `run:${NEWER}`]);
      expect(purger.records()[0]).toMatchObject({ release: "r1", state: "sending" });
      await purger.settled();
      expect(seen.map((s) => [s.method, s.xkey])).toEqual(Array(5).fill(["PURGE", `latest run:${NEWER}`]));
      // Two refusals, the success, and the two repeats (the waits between them are not asserted: no timing in tests).
      expect(purger.records()[0]).toMatchObject({ release: "r1", cache: url, state: "done", attempts: 5, retriesLeft: 0 });
      // Queued (4 after the first attempt), after each refusal, after the delivery and each repeat (a repeat has its own), done.
      expect(retriesLeft).toEqual([4, 4, 3, 4, 4, 4, 0]);
      expect(purger.records()[0]!.error).toBeUndefined();
      expect(lines).toEqual([]);
    } finally {
      cache.close();
    }
  });
});

describe("ashcast start --purge behind Varnish", () => {
  let site: Site;
  let start: ChildProcess;
  let varnish: Varnish;
  let log = "";
  let operator: Record<string, string>;

  beforeAll(async () => {
    site = await makeSite("ashcast-purge-");
    await addRun(site, "older", OLDER);
    const usersFile = path.join(site.root, "users.json");
    await writeOperator(usersFile);
    const [originPort, varnishPort] = [await freePort(), await freePort()];
    // README.md, "Deploying behind a CDN": Varnish is the trusted proxy and the cache to purge.
    start = spawn("./bin/ashcast", ["start", "--runs", site.runsDir, "--out", site.distDir, "--port", String(originPort), "--trusted-proxies", "127.0.0.1", "--purge", `http://127.0.0.1:${varnishPort}/`, "--users", usersFile], {
      cwd: REPO,
      env: { ...process.env, ...OPERATOR_ENV, ASHCAST_AUDIT_LOG: path.join(site.root, "audit.log"), ASHCAST_SETTINGS_FILE: path.join(site.root, "settings.json") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    start.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    start.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    await waitFor(`ashcast start to serve (${log})`, () => /serving http/.test(log), 60_000);
    varnish = await startVarnish(originPort, 60, varnishPort);
    const token = await through(varnish, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
    operator = { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
  });

  afterAll(async () => {
    if (process.env.DEBUG_PURGE) console.log(log);
    await varnish?.stop();
    if (start) await stopChild(start);
    await site?.cleanup();
  });


  /** Polls through the cache until `check` holds; the bound is far below the s-maxage (600 s) of these answers. */
  const untilThrough = (what: string, target: string, check: (res: RawResponse) => boolean) =>
    waitFor(`${what} through Varnish (log: ${log.slice(-2000)})`, async () => {
      const res = await through(varnish, target);
      return res.status === 200 && check(res);
    }, 30_000);

  /** The recent purges, as operators see them (operator routes allow 5 requests/s: asked a few times a second). */
  const cachePurges = async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const datasets = await through(varnish, "/datasets", { headers: operator });
    expect(datasets.status, datasets.text()).toBe(200);
    return DatasetsBody.parse(datasets.json()).cachePurges ?? [];
  };

  it("a new run: / and /reftimes change through the cache, an unchanged pinned run stays cached", async () => {
    // The first publish's purge (sent while Varnish was starting, retried, then repeated) is over first.
    await waitFor("the first publish's purges to end", async () => (await cachePurges()).every((p) => p.state !== "sending"));
    for (const target of ["/", "/reftimes", `/?reftime=${OLDER}`]) await through(varnish, target);
    expect(cacheStatus(await through(varnish, "/"))).toBe("HIT");
    expect(latestReftime(await through(varnish, "/"))).toBe(OLDER);

    await addRun(site, "newer", NEWER);
    await untilThrough("the new latest run", "/", (res) => latestReftime(res) === NEWER);
    await untilThrough("the new reftimes", "/reftimes", (res) => listedReftimes(res).includes(NEWER));
    // Only the changed tags were purged: the pinned older run was not.
    expect(cacheStatus(await through(varnish, `/?reftime=${OLDER}`))).toBe("HIT");

    // Operators see what the caches were told, and that they heard it.
    await waitFor("the purge to be acknowledged", async () => (await cachePurges()).some((p) => p.state === "done" && p.tags.includes(`run:${NEWER}`)));
    const report = DatasetsBody.parse((await through(varnish, "/datasets", { headers: operator })).json());
    const purge = report.cachePurges!.find((p) => p.tags.includes(`run:${NEWER}`))!;
    expect(purge.release).toBe(report.release);
    expect(purge.tags).toEqual(expect.arrayContaining(["latest", "reftimes", "changelog"]));
    expect(purge.tags).not.toContain(`run:${OLDER}`);
  });

  it("a withdrawal: the older run is the latest again through the cache", async () => {
    const withdrawn = await through(varnish, `/withdraw?reftime=${NEWER}`, { method: "POST", headers: operator });
    expect(withdrawn.status).toBe(202);
    await untilThrough("the older run as latest again", "/", (res) => latestReftime(res) === OLDER);
    await untilThrough("the withdrawn reftime gone from the list", "/reftimes", (res) => !listedReftimes(res).includes(NEWER));
  });
});

describe("ashcast build --purge with the cache down", () => {
  it("publishes, says the purge failed, and exits as without it", async () => {
    const site = await makeSite("ashcast-purge-down-");
    try {
      await addRun(site, "older", OLDER);
      const deadPort = await freePort();
      const built = spawnSync("./bin/ashcast", ["build", "--runs", site.runsDir, "--out", site.distDir, "--purge", `http://127.0.0.1:${deadPort}/`], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
      expect(built.status, built.stderr).toBe(0);
      expect(built.stdout).toMatch(/published release/);
      expect(built.stderr).toMatch(new RegExp(`cache purge failed: http://127\\.0\\.0\\.1:${deadPort}/ did not purge \\d+ tag\\(s\\) of release \\S+ after 5 attempts`));
    } finally {
      await rm(site.root, { recursive: true, force: true });
    }
  });
});
