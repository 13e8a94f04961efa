/**
 * A full disk during a build: dist/ lives on a small tmpfs made for the test, a release is published,
 * then the file system is filled to within a few bytes of full (several levels, so the build runs out
 * of space at different points) and the CLI builds again with new runs. Every failed build must leave
 * the last release served (dist/current unchanged, the release whole, the server still answering with
 * it) and say that there is no space; once space is freed the next build publishes and leaves no
 * temporaries. Real CLI child processes, a real server, a real ENOSPC; no mocks.
 *
 * Needs `mount -t tmpfs` (root, as CI runs). Where mounting is not allowed, the builds that must fail
 * run under `prlimit --fsize` instead (Node ignores SIGXFSZ, so a write past the limit fails with
 * EFBIG through the same code path); ASHCAST_FULL_DISK=fsize forces that variant. Without either the
 * suite is skipped and says why. ASHCAST_LONG_TESTS=1 tries more levels.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readlink, rm, statfs, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { http, untilServing } from "../server/serverFixtures.ts";
import { findTemporaries, inspectServedTree, PUBLIC_URL, REPO_ROOT, reftimeAt, seededRandom, spawnBuild, writeRun, type RunSpec, type SpawnedBuild } from "./crashFixtures.ts";
import { LONG_TESTS } from "../stress.ts";
import { tryMountTmpfs, unmountTmpfs } from "../tmpfs.ts";

const FS_BYTES = 24 * 1024 * 1024;
const LAYERS = ["advisory.kml"] as const;

function hasPrlimit(): boolean {
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

type Mode = { kind: "tmpfs"; dir: string } | { kind: "fsize" } | { kind: "skip"; reason: string };

function chooseMode(): Mode {
  if (process.env.ASHCAST_FULL_DISK !== "fsize") {
    const mounted = tryMountTmpfs(FS_BYTES, "dist/");
    if ("dir" in mounted) return { kind: "tmpfs", dir: mounted.dir };
    console.log(`[full disk] ${mounted.reason}: trying prlimit --fsize instead`);
  }
  return hasPrlimit() ? { kind: "fsize" } : { kind: "skip", reason: "neither mount -t tmpfs nor prlimit is available" };
}

const mode = chooseMode();
console.log(mode.kind === "skip" ? `[full disk] skipped: ${mode.reason}` : `[full disk] variant: ${mode.kind}`);

/** The CLI build, under a file size limit when `fsizeLimit` is given. */
function spawnLimitedBuild(runsDir: string, distDir: string, fsizeLimit?: number): SpawnedBuild {
  if (fsizeLimit === undefined) return spawnBuild(runsDir, distDir);
  const child = spawn("prlimit", [`--fsize=${fsizeLimit}`, "./bin/ashcast", "build", "--runs", runsDir, "--out", distDir, "--public-url", PUBLIC_URL], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited };
}

async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}

describe.skipIf(mode.kind === "skip")(`a full disk during a build (${mode.kind === "fsize" ? "writes limited by prlimit --fsize" : "dist/ on a small tmpfs"})`, () => {
  const fsDir = mode.kind === "tmpfs" ? mode.dir : "";
  let distDir: string;
  let filler: string;
  let work: string;
  let runsDir: string;
  let server: RunningServer | undefined;
  let next = 0;
  const addRun = async (description: string) => {
    const spec: RunSpec = { reftime: reftimeAt(6 * next), description, steps: 3, layers: LAYERS };
    await writeRun(runsDir, `run-${String(next++).padStart(3, "0")}`, spec);
    return spec;
  };

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "ashcast-fulldisk-runs-"));
    runsDir = path.join(work, "runs");
    distDir = path.join(fsDir || work, "dist");
    filler = path.join(fsDir, "filler");
    for (let i = 0; i < 3; i++) await addRun(`Run ${i}.`);
  });

  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
    if (fsDir) unmountTmpfs(fsDir);
  });

  it("leaves the last release served and says there is no space, at every level; the next build after space is freed publishes", { timeout: 300_000 }, async () => {
    const first = await spawnBuild(runsDir, distDir).exited;
    expect(first.code, first.stderr).toBe(0);
    let published = await readlink(path.join(distDir, "current"));
    server = await startServer({ distDir, port: 0, host: "127.0.0.1" });
    let reftimesBefore = (await http(server, "/reftimes", { headers: { "user-agent": "test/1.0" } })).text();
    expect(JSON.parse(reftimesBefore)).toHaveLength(1);

    // Free space left for the build (or, under prlimit, the largest file it may write): none, a few pages,
    // a little more; seeded extra levels in the long run.
    const seed = Number(process.env.ASHCAST_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const random = seededRandom(seed);
    const levels = [0, 4096, 16 * 1024, 48 * 1024, ...(LONG_TESTS ? Array.from({ length: 12 }, () => Math.floor(random() * 256) * 1024) : [])];
    console.log(`[full disk] seed ${seed}, bytes free (or per file) per attempt: ${levels.join(", ")}`);
    let failures = 0;
    for (const level of levels) {
      await addRun(`Added while the disk was full (${level} bytes free).`);
      if (mode.kind === "tmpfs") {
        await unlink(filler).catch(() => {});
        await writeFile(filler, Buffer.alloc(Math.max(0, (await freeBytes(fsDir)) - level)));
      }
      const attempt = await spawnLimitedBuild(runsDir, distDir, mode.kind === "fsize" ? Math.max(level, 1) : undefined).exited;
      const where = `with ${level} bytes ${mode.kind === "tmpfs" ? "free" : "at most per file"} (seed ${seed}):\n${attempt.stdout}\n${attempt.stderr}`;
      console.log(`[full disk] ${level} bytes ${mode.kind === "tmpfs" ? "free" : "at most per file"}: exit ${attempt.code}, ${attempt.stderr.split("\n").find((line) => line.trim()) ?? "(nothing on stderr)"}`);
      const current = await readlink(path.join(distDir, "current"));
      const { problems } = await inspectServedTree(distDir);
      expect(problems, where).toEqual([]);
      if (attempt.code === 0) {
        // Enough room after all: it published a whole release. Not the case this test is for, but allowed.
        expect(current, where).not.toBe(published);
        published = current;
        await untilServing(server, path.basename(current));
        reftimesBefore = (await http(server, "/reftimes", { headers: { "user-agent": "test/1.0" } })).text();
        continue;
      }
      failures++;
      expect(attempt.signal, where).toBeNull();
      // Reported as no space, with the fix, as "could not build" (2): not as an internal error (70) with a stack.
      expect(attempt.code, where).toBe(2);
      expect(attempt.stderr, where).toMatch(mode.kind === "tmpfs" ? /no space left to write the output.*\(ENOSPC: no space left on device/ : /no space left to write the output.*\(EFBIG: file too large/);
      expect(attempt.stderr, where).toMatch(/fix: free space/);
      expect(attempt.stderr, where).not.toMatch(/Internal error/);
      expect(current, where).toBe(published);
      expect((await http(server, "/reftimes", { headers: { "user-agent": "test/1.0" } })).text(), where).toBe(reftimesBefore);
    }
    // A build with no free space at all cannot publish: at least that one failed.
    expect(failures).toBeGreaterThan(0);

    if (mode.kind === "tmpfs") await unlink(filler);
    const recovered = await spawnBuild(runsDir, distDir).exited;
    expect(recovered.code, `${recovered.stdout}\n${recovered.stderr}`).toBe(0);
    const { problems, served } = await inspectServedTree(distDir);
    expect(problems).toEqual([]);
    expect(served?.index.reftimes).toHaveLength(next);
    expect(await findTemporaries(distDir)).toEqual([]);
  });

  it.skipIf(mode.kind !== "tmpfs")("a build in a process that goes on (watch, start) leaves no staged output behind when the disk is full: the space is back at once", async () => {
    for (const level of [16 * 1024, 64 * 1024, 256 * 1024]) {
      await addRun(`Added in-process while the disk was full (${level} bytes free).`);
      await unlink(filler).catch(() => {});
      await writeFile(filler, Buffer.alloc(Math.max(0, (await freeBytes(fsDir)) - level)));
      const failed = await build({ runsDir, distDir, publicUrl: PUBLIC_URL }).then(
        () => undefined,
        (error: unknown) => error as NodeJS.ErrnoException,
      );
      if (failed === undefined) continue; // it fitted after all
      expect(failed.code, String(failed)).toBe("ENOSPC");
      // No later build, no restart: what the failed one staged is gone already.
      expect(await findTemporaries(distDir), `${level} bytes free`).toEqual([]);
    }
    await unlink(filler);
  });
});
