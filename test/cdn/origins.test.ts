/**
 * Several origins on one published tree, as on a shared volume: one publisher (`ashcast watch`) and three
 * `ashcast serve` processes reading the same dist/. Every server follows each new release, a server
 * restarted under load comes back on the current one, and no server ever answers from a release that is
 * not whole, while clients ask without pause.
 */
import { readlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AshModel } from "../../src/contract/ashModel.ts";
import { freePort } from "../limits/redisFixtures.ts";
import { addRun, http, makeSite, publishBrokenRelease, waitFor, type Site } from "../server/serverFixtures.ts";
import { ashcast, USER_AGENT, type Child } from "./originFixtures.ts";

const PRODUCT = "/volcanicashforecast/0.1";
const REFTIMES = ["2024-05-01T12:00:00Z", "2024-05-02T12:00:00Z", "2024-05-03T12:00:00Z"];

let site: Site;
let publisher: Child;
const servers: Array<{ port: number; child: Child }> = [];

const currentRelease = async () => path.basename(await readlink(path.join(site.distDir, "current")));
const servedRelease = async (port: number) => /release: (\S+)/.exec((await http(`http://127.0.0.1:${port}`, `${PRODUCT}/healthz`, { headers: USER_AGENT })).text())?.[1];
const startServe = async (port: number) => ashcast(["serve", "--out", site.distDir, "--port", String(port)], { ready: /serving http/ });

beforeAll(async () => {
  site = await makeSite("ashcast-origins-");
  await addRun(site, "first", REFTIMES[0]!);
  publisher = await ashcast(["watch", "--runs", site.runsDir, "--out", site.distDir, "--debounce", "100"], { ready: /watching / });
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    servers.push({ port, child: await startServe(port) });
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.child.stop()));
  await publisher?.stop();
  await site?.cleanup();
});

describe("three ashcast serve processes and one publisher on one dist/", () => {
  it("every server switches to each new release, one restarted under load comes back on the current one, and every answer meanwhile is whole", async () => {
    // Clients ask every server without pause; each answer must be a whole run of a published release.
    let stop = false;
    const bad: string[] = [];
    let answered = 0;
    // While a server is down, its port is free: another test running beside this one may listen on it then (one
    // with nothing published answered 204 to 18 polls in CI), so it is not asked until it is back.
    let restarting = -1;
    const load = servers.map(async (_, i) => {
      while (!stop) {
        if (restarting === i) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const { port } = servers[i]!;
        const res = await http(`http://127.0.0.1:${port}`, `${PRODUCT}/`, { headers: { "user-agent": `poller-${i}/1 ops@example.org` } }).catch(() => undefined);
        // A refused connection is the server going down; anything it answers must be whole.
        if (res === undefined) continue;
        answered++;
        const model = res.status === 200 ? AshModel.safeParse(res.json()) : undefined;
        if (!model?.success || !REFTIMES.includes(model.data.meta.reftime)) bad.push(`${port}: ${res.status} ${res.text().slice(0, 200)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

    for (const [n, reftime] of REFTIMES.slice(1).entries()) {
      await addRun(site, `run-${n}`, reftime);
      const release = await waitFor("a release listing the new run", async () => (await http(`http://127.0.0.1:${servers[0]!.port}`, `${PRODUCT}/reftimes`, { headers: USER_AGENT })).text().includes(reftime), 60_000).then(currentRelease);
      for (const { port } of servers) await waitFor(`server ${port} to serve release ${release}`, async () => (await servedRelease(port)) === release, 20_000);

      if (n === 0) {
        // Killed mid-load and started again: it serves the current release from its first answer.
        const victim = servers[1]!;
        restarting = 1;
        victim.child.process.kill("SIGKILL");
        await new Promise((resolve) => victim.child.process.once("exit", resolve));
        victim.child = await startServe(victim.port);
        restarting = -1;
        expect(await servedRelease(victim.port)).toBe(await currentRelease());
      }
    }
    stop = true;
    await Promise.all(load);
    expect(bad).toEqual([]);
    expect(answered).toBeGreaterThan(50);
  });

  it("a release switched in but not readable is served by nobody: every server keeps the last whole one", async () => {
    const whole = await currentRelease();
    await publishBrokenRelease(site.distDir);
    for (const { port } of servers) {
      await waitFor(`server ${port} to notice the broken release`, async () => /newest release not loaded/.test((await http(`http://127.0.0.1:${port}`, `${PRODUCT}/healthz`, { headers: USER_AGENT })).text()), 20_000);
      expect(await servedRelease(port)).toBe(whole);
      const res = await http(`http://127.0.0.1:${port}`, `${PRODUCT}/`, { headers: USER_AGENT });
      expect(res.status).toBe(200);
      expect(AshModel.parse(res.json()).meta.reftime).toBe(REFTIMES[2]);
    }
  });
});
