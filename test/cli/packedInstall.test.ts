/**
 * ashcast as a package (issue 15): `npm pack`, installed into an empty prefix as an operator would
 * (`npm install --global --prefix`), gives a working `ashcast`: on the pinned Node, whose type stripping
 * Node refuses under node_modules unless the launcher's hook hands it ashcast's files. Needs the npm
 * registry (or npm's cache), as `npm ci` does.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PROJECT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";
const manifest = JSON.parse(await readFile(path.join(PROJECT, "package.json"), "utf8")) as { version: string; dependencies: Record<string, string> };

let scratch: string;
let ashcast: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "ashcast-packed-"));
  const { stdout } = await run("npm", ["pack", "--pack-destination", scratch, "--json"], { cwd: PROJECT });
  const { filename } = (JSON.parse(stdout) as Array<{ filename: string }>)[0]!;
  const prefix = path.join(scratch, "prefix");
  await run("npm", ["install", "--global", "--prefix", prefix, path.join(scratch, filename), "--no-audit", "--no-fund"], { cwd: scratch, timeout: 300_000 });
  ashcast = path.join(prefix, "bin/ashcast");
}, 320_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("the packed and installed ashcast", () => {
  it("holds the sources, templates and launcher, and none of the tests, benches or sample runs", async () => {
    const installed = path.join(scratch, "prefix/lib/node_modules/ashcast");
    expect((await readdir(installed)).sort()).toEqual(["README.md", "bin", "docs", "node_modules", "package.json", "src", "templates"]);
  });

  it("answers --help and --version on the pinned Node, with only the system's node on PATH", async () => {
    const env = { ...process.env, PATH: SYSTEM_PATH };
    expect((await run(ashcast, ["--version"], { env })).stdout.trim()).toBe(`ashcast ${manifest.version} (Node.js v${manifest.dependencies.node})`);
    expect((await run(ashcast, ["--help"], { env })).stdout).toContain("Usage: ashcast");
  });

  it("checks and builds a copy of the sample runs, and adds a user (argon2)", async () => {
    const work = path.join(scratch, "work");
    await cp(path.join(PROJECT, "runs"), path.join(work, "runs"), { recursive: true });
    const env = { ...process.env, PATH: SYSTEM_PATH, NO_COLOR: "1", ASHCAST_RUNS: "", ASHCAST_DIST: "" };
    const checked = await run(ashcast, ["check", "runs"], { cwd: work, env, timeout: 120_000 });
    expect(checked.stdout).toContain("3 run folders: 3 valid; 0 error(s), 0 warning(s)");
    const built = await run(ashcast, ["build", "--runs", "runs", "--out", "dist"], { cwd: work, env, timeout: 120_000 });
    expect(built.stdout).toContain("3 run folders: 3 published");
    const index = JSON.parse(await readFile(path.join(work, "dist/current/index.json"), "utf8")) as { reftimes: string[] };
    expect(index.reftimes).toEqual(["2026-05-02T12:00:00Z", "2026-03-14T06:00:00Z", "2010-04-15T06:00:00Z"]);
    const added = run(ashcast, ["user", "add", "alice", "--users", "users.json"], { cwd: work, env: { ...env, AUTH_HASH_SALT: "packed-install-test-secret" } });
    added.child.stdin!.end("a password of the test\n");
    expect((await added).stdout).toContain("added user alice (operator)");
  }, 240_000);
});
