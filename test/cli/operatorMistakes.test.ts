/**
 * The CLI as an operator gets it wrong: each mistake is refused with exit code 2 and a message that names the
 * flag or folder and the fix, nothing published is lost, and no process is left hanging. Real processes
 * (`./bin/ashcast`), real folders and ports.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun } from "../../src/cli/newRun.ts";
import { resolveBuildSettings } from "../../src/cli/settings.ts";
import { freePort } from "../limits/redisFixtures.ts";
import { waitFor } from "../server/serverFixtures.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const HEADERS = { "user-agent": "ashcast-test/1 ops@example.org" };
let scratch: string;
let runs: string;
let dist: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "ashcast-mistakes-"));
  runs = path.join(scratch, "runs");
  dist = path.join(scratch, "dist");
  for (const [name, reftime] of [["2024-05-01-hekla", "2024-05-01T12:00:00Z"], ["2024-05-02-katla", "2024-05-02T12:00:00Z"]] as const) {
    await newRun({ runsDir: runs, name, type: "Exercise", reftime, volcano: { name: "Hekla", lat: 63.98, lon: -19.7 } });
  }
  expect(ashcast(["build", "--runs", runs, "--out", dist]).status).toBe(0);
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await rm(scratch, { recursive: true, force: true });
});

function ashcast(args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT) {
  return spawnSync(path.join(ROOT, "bin/ashcast"), args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
}

describe("build", () => {
  it("refuses --runs pointed at one run folder, naming it and the folder meant, and withdraws nothing", async () => {
    const release = await readlink(path.join(dist, "current"));
    const folder = path.join(runs, "2024-05-01-hekla");
    const result = ashcast(["build", "--runs", folder, "--out", dist]);
    expect(result.status, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toContain(`${folder}: this is a run folder`);
    expect(result.stderr).toContain(`point --runs (ASHCAST_RUNS) at the folder that holds the run folders, e.g. ${runs}`);
    expect(await readlink(path.join(dist, "current"))).toBe(release);
    expect(result.stdout).not.toMatch(/withdrawn/);
  });

  it("refuses a runs folder holding no run folder while the release serves runs (a volume not mounted); --allow-empty withdraws them", async () => {
    const empty = path.join(scratch, "mount-point");
    await mkdir(empty, { recursive: true });
    const copy = path.join(scratch, "dist-emptied");
    await cp(dist, copy, { recursive: true, verbatimSymlinks: true });
    const release = await readlink(path.join(copy, "current"));
    const refused = ashcast(["build", "--runs", empty, "--out", copy]);
    expect(refused.status, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${empty}: the runs directory holds no run folder, and the release in ${copy} serves 2 run(s): building it would withdraw every one`);
    expect(refused.stderr).toContain("to withdraw every run on purpose, build with --allow-empty");
    expect(await readlink(path.join(copy, "current"))).toBe(release);
    const meant = ashcast(["build", "--runs", empty, "--out", copy, "--allow-empty"]);
    expect(meant.status, meant.stdout + meant.stderr).toBe(0);
    expect(meant.stdout.match(/^withdrawn /gm)).toHaveLength(2);
    // Nothing served any more: an empty folder builds again without the flag.
    expect(ashcast(["build", "--runs", empty, "--out", copy]).status).toBe(0);
  });

  it("a stray run file beside the run folders is no such mistake: the runs publish", async () => {
    const stray = path.join(runs, "advisory.kml");
    await writeFile(stray, "<kml/>");
    try {
      const result = ashcast(["build", "--runs", runs, "--out", dist]);
      expect(result.status, result.stdout + result.stderr).toBe(0);
    } finally {
      await rm(stray);
    }
  });

  it("an --out it cannot create is the operator's to fix (exit 2), not an internal error", async () => {
    const file = path.join(scratch, "a-file");
    await writeFile(file, "");
    // Under a file, and through a link to a volume that is not mounted; build, watch and start alike (the two
    // that keep running stop at once rather than log a failed build on every change).
    const dangling = path.join(scratch, "dist-on-missing-volume");
    await symlink(path.join(scratch, "no-volume", "dist"), dangling);
    for (const out of [path.join(file, "dist"), dangling]) {
      for (const command of ["build", "watch", "start"]) {
        const result = ashcast([command, "--runs", runs, "--out", out, ...(command === "start" ? ["--port", "0"] : [])]);
        expect(result.status, `${command} ${out}: ${result.stdout}${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(`${out}: cannot create the dist directory`);
        expect(result.stderr).not.toMatch(/Internal error/);
      }
    }
  });

  it("a blank environment variable counts as unset: ASHCAST_RUNS= is not the current directory", () => {
    expect(resolveBuildSettings({}, { ASHCAST_RUNS: "", ASHCAST_DIST: " " })).toMatchObject({ runsDir: path.resolve("runs"), distDir: path.resolve("dist") });
    const blank = resolveBuildSettings({}, { ASHCAST_DEFAULT_RUN_TYPE: " ", ASHCAST_THRESHOLDS: " ", ASHCAST_WMS_BASE: " " });
    expect(blank).not.toHaveProperty("defaultRunType");
    expect(blank).not.toHaveProperty("thresholds");
    expect(blank).not.toHaveProperty("wmsBaseUrl");
  });

  it("refuses an --out that holds the runs directory (its clean-up would delete the run folders) or lies inside it; every run folder stays", async () => {
    const before = (await readdir(runs)).sort();
    for (const [out, cwd, message] of [
      [".", scratch, `holds the runs directory`],
      [scratch, ROOT, `holds the runs directory`],
      [path.join(runs, "dist"), ROOT, "is inside the runs directory"],
    ] as const) {
      const result = ashcast(["build", "--runs", runs, "--out", out], {}, cwd);
      expect(result.status, `${out}: ${result.stdout}${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain("--out");
      expect((await readdir(runs)).sort()).toEqual(before);
    }
  });
});

describe("check and new-run take ASHCAST_RUNS, as build does", () => {
  it("from another directory, both use the runs folder the environment names", async () => {
    const elsewhere = path.join(scratch, "elsewhere");
    await mkdir(elsewhere);
    const checked = ashcast(["check"], { ASHCAST_RUNS: runs }, elsewhere);
    expect(checked.status, checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/2 run folders/);
    const created = ashcast(["new-run", "2024-05-03-askja", "--type", "Exercise", "--reftime", "2024-05-03T12:00:00Z"], { ASHCAST_RUNS: runs }, elsewhere);
    expect(created.status, created.stderr).toBe(0);
    expect(existsSync(path.join(runs, "2024-05-03-askja", "run.json"))).toBe(true);
    expect(existsSync(path.join(elsewhere, "runs"))).toBe(false);
    await rm(path.join(runs, "2024-05-03-askja"), { recursive: true });
  });
});

describe("serve's flags", () => {
  it("a prefix or removed version that is not one: exit 2 naming the flag and its variable", () => {
    const prefix = ashcast(["serve", "--out", dist, "--port", "0", "--prefix", "weatherapi"]);
    expect(prefix.status).toBe(2);
    expect(prefix.stderr).toContain('--prefix (env ASHCAST_PREFIX): "weatherapi" is not a path prefix');
    const removed = ashcast(["serve", "--out", dist, "--port", "0"], { ASHCAST_REMOVED_VERSIONS: "0.1" });
    expect(removed.status).toBe(2);
    expect(removed.stderr).toContain('--removed-versions (env ASHCAST_REMOVED_VERSIONS): "0.1" is not a removed product version');
  });

  it("conflicting flags: --out and --dist naming two directories, --http-port equal to --port; watch's --debounce out of range", () => {
    const both = ashcast(["serve", "--out", dist, "--dist", path.join(scratch, "elsewhere"), "--port", "0"]);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("name two directories");
    const same = ashcast(["serve", "--out", dist, "--port", "8443", "--http-port", "8443", "--tls-cert", "c.pem", "--tls-key", "k.pem"]);
    expect(same.status).toBe(2);
    expect(same.stderr).toContain("--http-port is --port (8443)");
    const debounce = ashcast(["watch", "--runs", runs, "--out", dist, "--debounce", "99999999999"]);
    expect(debounce.status).toBe(2);
    expect(debounce.stderr).toContain("--debounce");
  });

  it("a --host that is no address and no name: exit 2 naming --host, not an internal error", () => {
    const published = path.join(scratch, "dist-public");
    expect(ashcast(["build", "--runs", runs, "--out", published, "--public-url", "https://ash.example.org/volcanicashforecast/0.1"]).status).toBe(0);
    const result = ashcast(["serve", "--out", published, "--port", "0", "--host", "300.1.1.1", "--trusted-proxies", "127.0.0.1"]);
    expect(result.status, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toContain("--host");
    expect(result.stderr).toContain("300.1.1.1 is not an address");
    expect(result.stderr).not.toMatch(/Internal error/);
  });
});

describe("serve", () => {
  /** `ashcast serve --out dir` on a free port, its stdout and stderr together. */
  function serveOut(dir: string): { child: ChildProcess; output: () => string } {
    const child = spawn(path.join(ROOT, "bin/ashcast"), ["serve", "--out", dir, "--port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let output = "";
    for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    return { child, output: () => output };
  }

  it("warns when the dist directory does not exist (a mistyped --out), and still follows it", async () => {
    const missing = path.join(scratch, "dist-typo");
    const typo = serveOut(missing);
    await waitFor("the warning", () => typo.output().includes("warning:"), 30_000);
    expect(typo.output()).toContain(`warning: ${missing} does not exist: nothing is served (204, /healthz 503) until a build publishes into it; check --out (ASHCAST_DIST)`);
    typo.child.kill("SIGTERM");
    // The real dist: no such warning.
    const real = serveOut(dist);
    await waitFor("serving", () => real.output().includes("serving "), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(real.output()).not.toContain("does not exist");
    real.child.kill("SIGTERM");
  });
});

describe("start", () => {
  it("a bad flag stops it before the first build", () => {
    const startDist = path.join(scratch, "dist-bad-flag");
    const result = ashcast(["start", "--runs", runs, "--out", startDist, "--port", "abc"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--port (env PORT): "abc" is not a TCP port');
    expect(existsSync(startDist)).toBe(false);
    // What the server would refuse only once listening: checked before the first build too, nothing published.
    for (const [flags, named] of [
      [["--access-rules", path.join(scratch, "no-rules.json")], "no-rules.json"],
      [["--tls-cert", path.join(scratch, "no.pem"), "--tls-key", path.join(scratch, "no.key")], "--tls-cert"],
      [["--host", "0.0.0.0", "--public-url", "https://ash.example.org/volcanicashforecast/0.1"], "--host"],
    ] as const) {
      const refused = ashcast(["start", "--runs", runs, "--out", startDist, "--port", "0", ...flags]);
      expect(refused.status, `${flags.join(" ")}: ${refused.stdout}${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain(named);
      expect(existsSync(startDist), flags.join(" ")).toBe(false);
    }
  });

  it("SIGTERM during the first build: the build finishes, the lock is released, exit 0; a run's errors are printed with their fixes, as watch prints them", async () => {
    const startRuns = path.join(scratch, "runs-start-signal");
    await cp(path.join(ROOT, "runs"), startRuns, { recursive: true });
    // One broken run among the samples: its error must reach the operator's log, not only a count.
    await newRun({ runsDir: startRuns, name: "2024-05-03-broken", type: "Exercise", reftime: "2024-05-03T12:00:00Z", volcano: { name: "Hekla", lat: 63.98, lon: -19.7 } });
    await writeFile(path.join(startRuns, "2024-05-03-broken", "run.json"), '{"type": "Drill", "reftime": "2024-05-03T12:00:00Z", "description": "x"}');
    const startDist = path.join(scratch, "dist-start-signal");
    const run = (signalOnFirstLine: boolean) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(path.join(ROOT, "bin/ashcast"), ["start", "--runs", startRuns, "--out", startDist, "--port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
        children.push(child);
        let output = "";
        let signalled = false;
        const read = (chunk: Buffer) => {
          output += chunk.toString("utf8");
          if (!signalled && (signalOnFirstLine ? output.includes("\n") : output.includes("serving "))) signalled = child.kill("SIGTERM");
        };
        child.stdout!.on("data", read);
        child.stderr!.on("data", read);
        child.once("exit", (code) => resolve({ code, output }));
      });
    const during = await run(true);
    expect(during.code, during.output).toBe(0);
    expect(during.output).toContain("stopping: the build under way finishes first");
    expect(during.output).not.toMatch(/Internal error|Error:/);
    expect(existsSync(path.join(startDist, ".build.lock"))).toBe(false);
    // The next start builds and serves (the lock was released), and says what is wrong with the broken run.
    const next = await run(false);
    expect(next.code, next.output).toBe(0);
    expect(next.output).toContain("2024-05-03-broken");
    expect(next.output).toMatch(/ERROR .*run\.json.*type/);
  }, 180_000);

  it("a port in use after the first build: it exits with code 2, not left running with nobody served", async () => {
    const taken: Server = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => taken.once("listening", resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const result = ashcast(["start", "--runs", runs, "--out", path.join(scratch, "dist-port-taken"), "--port", String(port)]);
      expect(result.status, result.stdout + result.stderr).toBe(2);
      expect(result.stderr).toContain(`--port: port ${port} on 127.0.0.1 is in use`);
    } finally {
      taken.close();
    }
  });

  it("with a prefix given with a trailing slash, on loopback: its changelog links are its own address, and SIGHUP does not stop it", async () => {
    const port = await freePort();
    const child = spawn(path.join(ROOT, "bin/ashcast"), ["start", "--runs", runs, "--out", path.join(scratch, "dist-start"), "--port", String(port), "--prefix", "/weatherapi/"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const base = `http://127.0.0.1:${port}/weatherapi/volcanicashforecast/0.1`;
    let feed = "";
    await waitFor("the changelog served", async () => {
      const res = await fetch(`${base}/changelog`, { headers: HEADERS }).catch(() => undefined);
      feed = res?.status === 200 ? await res.text() : "";
      return feed !== "";
    }, 60_000);
    expect(feed).toContain(`<link>${base}/?reftime=`);
    expect(output).toContain(`serving ${base}/ from`);
    child.kill("SIGHUP");
    await waitFor("SIGHUP logged", () => output.includes("SIGHUP: one server process, nothing to replace"), 10_000);
    expect((await fetch(`${base}/reftimes`, { headers: HEADERS })).status).toBe(200);
    expect(child.exitCode).toBeNull();
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  });
});

describe("watch", () => {
  it("a runs folder that does not exist: exit 2 naming it, not an internal error or a hang", () => {
    const missing = path.join(scratch, "no-such-runs");
    const result = ashcast(["watch", "--runs", missing, "--out", path.join(scratch, "dist-watch")]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`${missing}: the runs directory does not exist`);
    expect(result.stderr).not.toMatch(/Internal error/);
  });
});
