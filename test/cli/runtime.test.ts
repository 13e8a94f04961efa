/**
 * ashcast runs on the Node.js the project pins (the npm package `node`, issue 15), not on whatever `node`
 * comes first on PATH: this machine's own is Node 20, past its end of life.
 */
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const PROJECT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(PROJECT, "bin/ashcast");
const manifest = JSON.parse(await readFile(path.join(PROJECT, "package.json"), "utf8")) as { dependencies: Record<string, string>; engines: Record<string, string> };
const PINNED = manifest.dependencies.node!;
const run = promisify(execFile);
/** The system's directories only: /usr/bin/node, if there is one, comes first. */
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

const scratch = await mkdtemp(path.join(tmpdir(), "ashcast-runtime-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("the pinned runtime", () => {
  it("is Node 24 LTS, exactly, and engines says the same", () => {
    expect(PINNED).toMatch(/^24\.\d+\.\d+$/);
    expect(manifest.engines.node).toBe(PINNED);
  });

  it("runs the tests (npm test puts it first on PATH)", () => {
    expect(process.version).toBe(`v${PINNED}`);
  });

  it("runs ./bin/ashcast from a shell whose PATH has only the system's node", async () => {
    const { stdout } = await run(BIN, ["--version"], { env: { ...process.env, PATH: SYSTEM_PATH } });
    expect(stdout.trim()).toBe(`ashcast ${(JSON.parse(await readFile(path.join(PROJECT, "package.json"), "utf8")) as { version: string }).version} (Node.js v${PINNED})`);
  });

  it("runs it through a symbolic link, as npm links a package's bin", async () => {
    const link = path.join(scratch, "ashcast");
    await symlink(BIN, link);
    const { stdout } = await run(link, ["--version"], { env: { ...process.env, PATH: SYSTEM_PATH }, cwd: scratch });
    expect(stdout).toContain(`(Node.js v${PINNED})`);
  });

  it("says what to do when the pinned Node is not installed, instead of running another", async () => {
    const bare = path.join(scratch, "bare");
    await mkdir(path.join(bare, "bin"), { recursive: true });
    await copyFile(BIN, path.join(bare, "bin/ashcast"));
    const failed = await run(path.join(bare, "bin/ashcast"), ["--version"], { env: { ...process.env, PATH: SYSTEM_PATH } }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(`is not installed; run npm ci in ${bare}`);
  });

  it("ends quietly when its reader has closed the pipe, as in `ashcast check --help | head -1`", async () => {
    // `true` exits without reading: by the time ashcast writes, the pipe is closed, and the write fails with EPIPE.
    const { stdout, stderr } = await run("bash", ["-c", `"${BIN}" check --help | true; echo "exit \${PIPESTATUS[0]}"`]);
    expect(stderr).toBe("");
    expect(stdout).toBe("exit 0\n");
  });

  /** What Node was started with for `args` (its own flags), and whether it loaded its TypeScript stripper (amaro). */
  async function started(args: string[], env: NodeJS.ProcessEnv): Promise<{ execArgv: string[]; stripper: boolean }> {
    const report = path.join(scratch, "started.json");
    // Loaded before ashcast's own first module, it writes down what it saw as the process ends.
    const probe = path.join(scratch, "probe.mjs");
    await writeFile(probe, `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(report)}, JSON.stringify({ execArgv: process.execArgv, stripper: process.moduleLoadList.some((m) => m.includes("amaro")) })));\n`);
    await run(BIN, args, { env: { ...env, NODE_OPTIONS: `--import ${probe}` } });
    return JSON.parse(await readFile(report, "utf8")) as { execArgv: string[]; stripper: boolean };
  }

  it("starts Node with its compile cache on, so that a second start strips no TypeScript (Node's stripper is not loaded)", async () => {
    const { NODE_COMPILE_CACHE: _unset, ...env } = process.env;
    const temp = await mkdtemp(path.join(scratch, "tmp-"));
    expect((await started(["--version"], { ...env, TMPDIR: temp })).stripper).toBe(true); // the first start strips every module and fills the cache
    expect((await started(["--version"], { ...env, TMPDIR: temp })).stripper).toBe(false);
    expect(await readdir(path.join(temp, "node-compile-cache"))).not.toEqual([]);
  });

  it("gives a build's V8 a larger first old generation, and a server's a smaller young one", async () => {
    expect((await started(["build", "--help"], process.env)).execArgv).toContain("--initial-old-space-size=128");
    expect((await started(["serve", "--help"], process.env)).execArgv).toContain("--max-semi-space-size=16");
    expect((await started(["check", "--help"], process.env)).execArgv).not.toContain("--initial-old-space-size=128");
  });

  /** The environment the launcher gave Node, read from /proc once the command says it serves. */
  async function launchedEnvironment(args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
    const child = spawn(BIN, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("serving http://") && resolve());
        child.on("exit", (code) => reject(new Error(`ashcast ${args[0]} exited with ${code}`)));
      });
      return (await readFile(`/proc/${child.pid}/environ`, "utf8")).split("\0").filter((entry) => entry.startsWith("MALLOC_ARENA_MAX="));
    } finally {
      child.kill("SIGTERM");
    }
  }

  it("keeps an operator's own MALLOC_ARENA_MAX, and leaves serve on glibc's (the start test checks the launcher's 2)", async () => {
    const { MALLOC_ARENA_MAX: _unset, ...env } = process.env;
    const dist = await mkdtemp(path.join(scratch, "dist-"));
    const runs = await mkdtemp(path.join(scratch, "runs-"));
    expect(await launchedEnvironment(["start", "--runs", runs, "--out", dist, "--port", "0"], { ...env, MALLOC_ARENA_MAX: "4" })).toEqual(["MALLOC_ARENA_MAX=4"]);
    expect(await launchedEnvironment(["serve", "--dist", dist, "--port", "0"], env)).toEqual([]);
  });
});
