/**
 * `ashcast watch --purge` with real processes: the publisher on a runs/ folder whose dist/ is published
 * already, an `ashcast serve` on that dist/ behind a real Varnish deployed as README.md says. A run
 * dropped into runs/ is published by the watcher, which purges its tags: the new `/` and `/reftimes`
 * come through the cache long before their s-maxage, and the older run's pinned answer stays cached.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../limits/redisFixtures.ts";
import { addRun, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";
import { ashcast, type Child } from "./originFixtures.ts";
import { cacheStatus, latestReftime, listedReftimes, REPO, startVarnish, through, type Varnish } from "./varnishFixtures.ts";

const OLDER = "2024-05-01T12:00:00Z";
const NEWER = "2024-05-02T12:00:00Z";

let site: Site;
let serve: Child;
let watch: Child;
let varnish: Varnish;

beforeAll(async () => {
  site = await makeSite("ashcast-watch-purge-");
  await addRun(site, "older", OLDER);
  // Published before the watcher starts, so its first build publishes (and purges) nothing: the only
  // purge the cache gets is the one of the run dropped in below.
  const built = spawnSync("./bin/ashcast", ["build", "--runs", site.runsDir, "--out", site.distDir], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
  expect(built.status, built.stdout + built.stderr).toBe(0);
  const [originPort, varnishPort] = [await freePort(), await freePort()];
  serve = await ashcast(["serve", "--out", site.distDir, "--port", String(originPort), "--trusted-proxies", "127.0.0.1"], { ready: /serving http/ });
  varnish = await startVarnish(originPort, 60, varnishPort);
  watch = await ashcast(["watch", "--runs", site.runsDir, "--out", site.distDir, "--debounce", "100", "--purge", `http://127.0.0.1:${varnishPort}/`], { ready: /watching / });
});

afterAll(async () => {
  await watch?.stop();
  await varnish?.stop();
  await serve?.stop();
  await site?.cleanup();
});


describe("ashcast watch --purge behind Varnish", () => {
  it("a run dropped into runs/: the new / and /reftimes come through the cache, the older run's answer stays cached", async () => {
    await waitFor("the watcher's first build", () => /nothing changed: the current release stays/.test(watch.output()), 60_000);
    for (const target of ["/", "/reftimes", `/?reftime=${OLDER}`]) await through(varnish, target);
    const cached = await through(varnish, "/");
    expect(cacheStatus(cached)).toBe("HIT");
    expect(latestReftime(cached)).toBe(OLDER);
    expect(listedReftimes(await through(varnish, "/reftimes"))).toEqual([OLDER]);

    await addRun(site, "newer", NEWER);
    // Far below the 600 s s-maxage of these answers: without the purge, the cache would answer OLDER till then.
    await waitFor(`the new latest run through Varnish (watch: ${watch.output().slice(-2000)})`, async () => latestReftime(await through(varnish, "/")) === NEWER, 30_000);
    await waitFor("the new reftimes through Varnish", async () => listedReftimes(await through(varnish, "/reftimes")).includes(NEWER), 30_000);
    expect(listedReftimes(await through(varnish, "/reftimes"))).toEqual([NEWER, OLDER]);
    expect(cacheStatus(await through(varnish, `/?reftime=${OLDER}`))).toBe("HIT");
    expect(watch.output()).not.toMatch(/cache purge failed/);
  });
});
