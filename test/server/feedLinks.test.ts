/**
 * Feed links that are right where the service runs: listening beyond loopback while the changelog's
 * links point at a loopback address is refused, by `start` before it builds anything and by `serve` for
 * a dist built so, each naming --public-url; a configured public address serves, and so does loopback.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { DEFAULT_PUBLIC_URL } from "../../src/cli/settings.ts";
import { UserError } from "../../src/errors.ts";
import { checkFeedLinks, feedLinksElsewhere } from "../../src/server/transport.ts";
import { addRun, makeSite, serve, type Site } from "./serverFixtures.ts";

const run = promisify(execFile);
const PUBLIC = "https://ash.example.org/volcanicashforecast/0.1";
let site: Site;

beforeAll(async () => {
  site = await makeSite("ashcast-feedlinks-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
});
afterAll(() => site.cleanup());

const refusal = (host: string, feedBase: string | undefined): UserError | undefined => {
  try {
    checkFeedLinks(host, feedBase);
    return undefined;
  } catch (error) {
    return error as UserError;
  }
};

describe("feed links and the listening address", () => {
  it("refuses a public address with loopback links, naming --public-url and the fix", () => {
    for (const host of ["0.0.0.0", "::", "192.0.2.10"]) {
      for (const feedBase of [DEFAULT_PUBLIC_URL, "http://localhost:8080/volcanicashforecast/0.1", "http://[::1]/volcanicashforecast/0.1"]) {
        const error = refusal(host, feedBase);
        expect(error, `${host} with ${feedBase}`).toBeInstanceOf(UserError);
        expect(error!.where).toBe("--public-url");
        expect(error!.fix).toMatch(/--public-url https:\/\/.+ASHCAST_PUBLIC_URL/);
      }
    }
    expect(refusal("0.0.0.0", PUBLIC)).toBeUndefined();
    expect(refusal("127.0.0.1", DEFAULT_PUBLIC_URL)).toBeUndefined();
    expect(refusal("::1", DEFAULT_PUBLIC_URL)).toBeUndefined();
    // A release from before the address was recorded: nothing to judge.
    expect(refusal("0.0.0.0", undefined)).toBeUndefined();
  });

  it("warns, naming --public-url, when the changelog links to another loopback port or prefix than the one served", () => {
    const base = "/volcanicashforecast/0.1";
    expect(feedLinksElsewhere(DEFAULT_PUBLIC_URL, 48080, base)).toMatch(/^warning: the changelog's links point at http:\/\/127\.0\.0\.1:8080\/volcanicashforecast\/0\.1, not at this server \(port 48080, .*--public-url/);
    expect(feedLinksElsewhere(DEFAULT_PUBLIC_URL, 8080, `/weatherapi${base}`)).toMatch(/not at this server \(port 8080, \/weatherapi/);
    expect(feedLinksElsewhere(DEFAULT_PUBLIC_URL, 8080, base)).toBeUndefined();
    expect(feedLinksElsewhere("http://localhost/volcanicashforecast/0.1/", 80, base)).toBeUndefined();
    expect(feedLinksElsewhere(PUBLIC, 48080, base), "a public address is the operator's to set").toBeUndefined();
    expect(feedLinksElsewhere(DEFAULT_PUBLIC_URL, 0, base), "an ephemeral port (tests)").toBeUndefined();
  });

  it("the release records the address its changelog links to", async () => {
    await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC });
    const index = JSON.parse(await readFile(path.join(site.distDir, "current", "index.json"), "utf8")) as { feedBase?: string };
    expect(index.feedBase).toBe(PUBLIC);
    expect(await readFile(path.join(site.distDir, "current", "changelog.rss"), "utf8")).toContain(`<link>${PUBLIC}`);
  });

  it("serve refuses a dist built with loopback links on a public address, and serves one built with the public URL", async () => {
    const serveCli = ["./bin/ashcast", "serve", "--dist", site.distDir, "--host", "0.0.0.0", "--port", "0", "--trusted-proxies", "127.0.0.1"] as const;
    const env = { ...process.env, ASHCAST_TRAFFIC_FILE: "" };
    await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: DEFAULT_PUBLIC_URL });
    const refused = await run(serveCli[0], serveCli.slice(1), { env }).catch((error: { code: number; stderr: string }) => error);
    expect((refused as { code: number }).code).toBe(2);
    expect((refused as { stderr: string }).stderr).toMatch(/--public-url: refusing to serve on 0\.0\.0\.0: the changelog's links point at http:\/\/127\.0\.0\.1:8080/);
    // On loopback the same dist serves.
    await (await serve(site, { host: "127.0.0.1" })).close();
    // Built with the public address, the public listener starts.
    await build({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC });
    const child = spawn(serveCli[0], serveCli.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let seen = "";
        child.stdout.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          const match = /serving http:\/\/\S+/.exec(seen);
          if (match) resolve(match[0]);
        });
        child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${seen}`)));
      });
      expect(line).toMatch(/^serving http:\/\//);
    } finally {
      child.kill();
    }
  });

  it("start refuses before building anything", async () => {
    const dist = path.join(site.root, "dist-start");
    const { ASHCAST_PUBLIC_URL: _unset, ...inherited } = process.env;
    const env = { ...inherited, ASHCAST_TRAFFIC_FILE: "" };
    const cli = await run("./bin/ashcast", ["start", "--runs", site.runsDir, "--out", dist, "--host", "0.0.0.0", "--port", "0"], { env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect((cli as { code: number }).code).toBe(2);
    expect((cli as { stderr: string }).stderr).toMatch(/--public-url: refusing to serve on 0\.0\.0\.0/);
    expect((cli as { stderr: string }).stderr).toMatch(/ASHCAST_PUBLIC_URL/);
    expect(existsSync(dist)).toBe(false);
  });
});
