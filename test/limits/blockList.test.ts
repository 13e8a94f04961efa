/**
 * Blocking (spec, Limits and Errors rule 2; security.md: "A blocked client → 403, nothing else leaked"):
 * by User-Agent pattern, address and CIDR range, reloaded without a restart.
 */
import { writeFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBlockList } from "../../src/server/limits/blockList.ts";
import { backtrackingHazard } from "../../src/server/limits/listSchemas.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, header, http, makeSite, serve, waitFor, type Site } from "../server/serverFixtures.ts";
import { trafficFor, UA } from "./trafficFixtures.ts";

let site: Site;
let server: RunningServer;
let file: string;
const logs: string[] = [];

beforeAll(async () => {
  site = await makeSite("ashcast-blocklist-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
  file = path.join(site.root, "blocklist.json");
  // The server's own address on the test's sockets is 127.0.0.1 (a trusted proxy forwards the others).
  server = await serve(site, { traffic: trafficFor(site, { blockList: file, blockListReloadSeconds: 0.05, trustedProxies: ["127.0.0.1"] }), log: (line) => logs.push(line) });
});
afterAll(async () => {
  await server.close();
  await site.cleanup();
});

const from = (address: string, agent: string = UA["user-agent"]) => ({ "user-agent": agent, "x-forwarded-for": address, "x-forwarded-proto": "https" });

async function writeList(list: unknown): Promise<void> {
  // Written aside and renamed, as an editor or a deploy tool does.
  const aside = `${file}.tmp`;
  await writeFile(aside, JSON.stringify(list));
  await rename(aside, file);
}

describe("the block list", () => {
  it("without a file blocks nobody, and a file that appears later is picked up without a restart", async () => {
    expect((await http(server, "/reftimes", { headers: from("192.0.2.66") })).status).toBe(200);
    await writeList({ format: 1, userAgents: ["^BadBot/"], addresses: ["192.0.2.66", "198.51.100.0/24", "2001:db8:dead::/48"] });
    await waitFor("the block list to be reloaded", async () => (await http(server, "/reftimes", { headers: from("192.0.2.66") })).status === 403);
  });

  it("answers 403 and nothing else to a blocked address, range or agent, on every route", async () => {
    for (const headers of [from("192.0.2.66"), from("198.51.100.200"), from("2001:db8:dead:1::5"), from("203.0.113.1", "BadBot/2.0 (+http://bad.example)")]) {
      for (const target of ["/", "/reftimes", "/healthz", "/token", "/nothing-here"]) {
        const res = await http(server, target, { headers, method: target === "/token" ? "POST" : "GET" });
        expect(res.status).toBe(403);
        expect(res.json()).toEqual({ type: "about:blank", title: "Forbidden", status: 403, detail: "access is refused" });
        expect(header(res, "cache-control")).toBe("no-store");
        // No hint of why, of the list, or of the limits.
        for (const name of ["retry-after", "ratelimit", "ratelimit-policy", "link", "www-authenticate"]) expect(res.headers[name]).toBeUndefined();
      }
    }
    expect((await http(server, "/reftimes", { headers: from("198.51.101.1") })).status).toBe(200);
    expect((await http(server, "/reftimes", { headers: from("203.0.113.1", "GoodBot/1.0 BadBot/") })).status).toBe(200);
  });

  it("keeps the last good list when the file turns broken, and applies the fixed one", async () => {
    await writeFile(file, "{ not json");
    await waitFor("the broken list to be reported", () => logs.some((line) => line.includes("was not reloaded")));
    expect((await http(server, "/reftimes", { headers: from("192.0.2.66") })).status).toBe(403);
    await writeList({ format: 1, addresses: ["203.0.113.0/24"] });
    await waitFor("the fixed list", async () => (await http(server, "/reftimes", { headers: from("192.0.2.66") })).status === 200);
    expect((await http(server, "/reftimes", { headers: from("203.0.113.9") })).status).toBe(403);
    await rm(file);
    await waitFor("the removed list", async () => (await http(server, "/reftimes", { headers: from("203.0.113.9") })).status === 200);
  });

  it("refuses a broken file at start, naming the file and the entry", async () => {
    const broken = path.join(site.root, "broken-blocklist.json");
    await writeFile(broken, JSON.stringify({ format: 1, addresses: ["10.0.0.0/33"] }));
    await expect(openBlockList({ file: broken, reloadSeconds: 1, log: () => {} })).rejects.toThrow(/addresses\.0: .*prefix length/);
    await writeFile(broken, JSON.stringify({ format: 1, userAgents: ["(unclosed"] }));
    await expect(openBlockList({ file: broken, reloadSeconds: 1, log: () => {} })).rejects.toThrow(/userAgents\.0: not a regular expression/);
    // A pattern every request is matched against must not backtrack exponentially on a crafted User-Agent.
    await writeFile(broken, JSON.stringify({ format: 1, userAgents: ["^curl/", "^(a+)+$"] }));
    await expect(openBlockList({ file: broken, reloadSeconds: 1, log: () => {} })).rejects.toThrow(/userAgents\.1: "\^\(a\+\)\+\$" repeats a group that itself repeats: .*write it without the nesting/);
    // Nor hold a backreference (joined into one expression, its number would point at another pattern's group).
    await writeFile(broken, JSON.stringify({ format: 1, userAgents: ["^(x)y$", "^(evil)\\1/"] }));
    await expect(openBlockList({ file: broken, reloadSeconds: 1, log: () => {} })).rejects.toThrow(/userAgents\.1: .* holds a backreference/);
  });

  it("backtrackingHazard: nested repetition and repeated alternatives are refused, plain patterns pass", () => {
    const refused = ["^(a+)+$", "^(a|aa)*$", "(a{2,3})*", "^(a?)+$", "(?:x+y)+", "^(evil)\\1", "^(?<n>x)\\k<n>"];
    const accepted = ["^curl/", "^(?:curl|wget)/", "(ab)+", "^[a-z]+(?:bot|spider)", "^(\\d+)?x", "[(]+", "Mozilla/5\\.0 \\(compatible", "^python-requests/\\d"];
    for (const pattern of refused) expect(backtrackingHazard(pattern), pattern).toBeDefined();
    for (const pattern of accepted) expect(backtrackingHazard(pattern), pattern).toBeUndefined();
  });

  it("templates/blocklist.json is a valid list", async () => {
    const template = fileURLToPath(new URL("../../templates/blocklist.json", import.meta.url));
    const list = await openBlockList({ file: template, reloadSeconds: 60, log: () => {} });
    expect(list.entries).toBe(5);
    expect(list.blocks("198.51.100.4", "x/1")).toBe(true);
    list.close();
  });
});
