/**
 * The `ashcast` command as a person runs it: spawned from /work/main, real folders in a temp directory.
 * Exit codes: 0 all good; 1 some runs have errors; 2 the command could not run; 70 internal error.
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, readRelease, snapshotTree, writeKmlRun, type Workspace } from "./runFixtures.ts";

const PROJECT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(PROJECT, "bin/ashcast");
const PINNED_NODE = (JSON.parse(await readFile(path.join(PROJECT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies.node!;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function ashcast(args: string[], cwd = PROJECT): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // No TTY: the progress bar stays silent; NO_COLOR keeps output plain.
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    for (const key of ["ASHCAST_RUNS", "ASHCAST_DIST", "ASHCAST_DEFAULT_RUN_TYPE", "ASHCAST_PUBLIC_URL"]) delete env[key];
    execFile(BIN, args, { cwd, env, timeout: 50_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

const exists = (file: string): Promise<boolean> => stat(file).then(() => true, () => false);

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace("ashcast-cli-");
});
afterEach(async () => {
  await ws.cleanup();
});

describe("ashcast", () => {
  it("--help exits 0 and lists the commands", async () => {
    const { code, stdout } = await ashcast(["--help"]);
    expect(code).toBe(0);
    for (const command of ["build", "watch", "check", "new-run"]) expect(stdout).toContain(command);
  });

  it("build exits 1 when a run has errors, prints the error with its file, field and fix, and still publishes the good run", async () => {
    await writeKmlRun(ws.runsDir, "good", { reftime: "2024-05-01T12:00:00Z" });
    await writeKmlRun(ws.runsDir, "bad", { reftime: "2024-05-02T12:00:00Z", manifest: { type: "Drill" } });
    const { code, stdout } = await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^bad: invalid$/m);
    const errorLine = stdout.split("\n").find((line) => line.includes("ERROR"));
    expect(errorLine).toBeDefined();
    expect(errorLine).toContain("bad/run.json (type)");
    expect(errorLine).toMatch(/Fix: set "type" to "Exercise", "Rehearsal" or "Real Eruption"/);
    expect(stdout).toContain("2 run folders: 1 invalid, 1 published");
    const release = await readRelease(ws.distDir);
    expect(release.index.reftimes).toEqual(["2024-05-01T12:00:00Z"]);
  });

  it("build exits 0 when every run is good", async () => {
    await writeKmlRun(ws.runsDir, "good");
    const { code, stdout } = await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir]);
    expect(code).toBe(0);
    expect(stdout).not.toContain("ERROR");
    expect((await readRelease(ws.distDir)).index.reftimes).toEqual(["2024-05-01T12:00:00Z"]);
  });

  it("build exits 2 naming the runs directory when it does not exist, and creates no dist", async () => {
    const missing = path.join(ws.root, "no-such-runs");
    const { code, stderr } = await ashcast(["build", "--runs", missing, "--out", ws.distDir]);
    expect(code).toBe(2);
    expect(stderr).toContain(missing);
    expect(stderr).toMatch(/does not exist/);
    expect(stderr).toMatch(/fix:/);
    expect(await exists(ws.distDir)).toBe(false);
  });

  it("build exits 2 while another build holds the lock, naming its pid, and publishes nothing", async () => {
    await writeKmlRun(ws.runsDir, "good");
    await mkdir(ws.distDir);
    // This test process is alive and is not the spawned build: the lock is held.
    await writeFile(path.join(ws.distDir, ".build.lock"), `${process.pid}\n`);
    const { code, stderr } = await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir]);
    expect(code).toBe(2);
    expect(stderr).toContain(`another build is running (pid ${process.pid})`);
    expect(await exists(path.join(ws.distDir, "current"))).toBe(false);
    expect(await readFile(path.join(ws.distDir, ".build.lock"), "utf8")).toBe(`${process.pid}\n`);
  });

  it("build exits 2 on a run type that does not exist in --default-type", async () => {
    await writeKmlRun(ws.runsDir, "good");
    const { code, stderr } = await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir, "--default-type", "Drill"]);
    expect(code).toBe(2);
    expect(stderr).toContain("Drill");
    expect(await exists(ws.distDir)).toBe(false);
  });
});

describe("ashcast check", () => {
  it("exits 1 on errors, prints them, and writes nothing", async () => {
    await writeKmlRun(ws.runsDir, "good");
    await writeKmlRun(ws.runsDir, "bad", { reftime: "2024-05-02T12:00:00Z", manifest: { reftime: "tomorrow" } });
    const before = await snapshotTree(ws.root);
    const { code, stdout } = await ashcast(["check", ws.runsDir], ws.root);
    expect(code).toBe(1);
    expect(stdout).toMatch(/ERROR bad\/run\.json \(reftime\): .*Fix: /);
    expect(stdout).toMatch(/1 error\(s\)/);
    expect(await snapshotTree(ws.root)).toEqual(before);
    expect(await exists(ws.distDir)).toBe(false);
    expect(await exists(path.join(ws.root, "dist"))).toBe(false);
  });

  it("exits 0 on a clean runs directory, and writes nothing", async () => {
    await writeKmlRun(ws.runsDir, "good");
    await writeKmlRun(ws.runsDir, "also-good", { reftime: "2024-05-02T12:00:00Z" });
    const before = await snapshotTree(ws.root);
    const { code, stdout } = await ashcast(["check", ws.runsDir], ws.root);
    expect(code).toBe(0);
    expect(stdout).toContain("2 run folders: 2 valid; 0 error(s), 0 warning(s)");
    expect(await snapshotTree(ws.root)).toEqual(before);
    expect(await exists(path.join(ws.root, "dist"))).toBe(false);
  });

  it("checks a single run folder", async () => {
    const good = await writeKmlRun(ws.runsDir, "good");
    const bad = await writeKmlRun(ws.runsDir, "bad", { manifest: { colour: "red" } });
    const ok = await ashcast(["check", good.dir], ws.root);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("1 run folder: 1 valid");
    const notOk = await ashcast(["check", bad.dir], ws.root);
    expect(notOk.code).toBe(1);
    expect(notOk.stdout).toMatch(/ERROR bad\/run\.json.*colour.*Fix: remove colour/);
    expect(notOk.stdout).toContain("1 run folder: 1 invalid");
  });

  it("a single run folder holding a sub-folder, or named as the build skips it: the errors the build would give", async () => {
    const nested = await writeKmlRun(ws.runsDir, "nested");
    await mkdir(path.join(nested.dir, "extras"));
    const withSub = await ashcast(["check", nested.dir], ws.root);
    expect(withSub.code).toBe(1);
    expect(withSub.stdout).toMatch(/ERROR nested\/extras: /);
    expect(withSub.stdout).toContain("1 run folder: 1 invalid");
    const draft = await writeKmlRun(ws.runsDir, "_draft");
    const skipped = await ashcast(["check", draft.dir], ws.root);
    expect(skipped.code).toBe(1);
    expect(skipped.stdout).toMatch(/ERROR _draft: the build skips a folder named so/);
    expect(skipped.stdout).toContain("1 run folder: 1 invalid");
  });

  it("a file instead of a directory: exit 2 saying so, for check and for build's --runs", async () => {
    const file = path.join(ws.root, "a-file");
    await writeFile(file, "");
    const checked = await ashcast(["check", file], ws.root);
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain(`${file}: a file, not a directory`);
    const built = await ashcast(["build", "--runs", file, "--out", ws.distDir], ws.root);
    expect(built.code).toBe(2);
    expect(built.stderr).toContain(`${file}: the runs directory is a file, not a directory`);
  });

  it("exits 2 on a directory with nothing to check (empty, or only folders the build skips), rather than pass it", async () => {
    const empty = path.join(ws.root, "empty");
    await mkdir(empty);
    const none = await ashcast(["check", empty], ws.root);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`${empty}: nothing to check: no run folder here, and no run.json`);
    await mkdir(path.join(empty, "_draft"));
    expect((await ashcast(["check", empty], ws.root)).code).toBe(2);
  });

  it("exits 2 on a directory that does not exist", async () => {
    const { code, stderr } = await ashcast(["check", path.join(ws.root, "nowhere")], ws.root);
    expect(code).toBe(2);
    expect(stderr).toContain(path.join(ws.root, "nowhere"));
  });
});

describe("ashcast serve", () => {
  it("serves the dist directory named by --out, as build was told to publish it (--dist is the same), on the pinned Node.js", async () => {
    await writeKmlRun(ws.runsDir, "hekla", { reftime: "2024-05-01T12:00:00Z" });
    expect((await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir])).code).toBe(0);
    for (const flag of ["--out", "--dist"]) {
      const child = spawn(BIN, ["serve", flag, ws.distDir, "--port", "0"], { cwd: PROJECT, env: { ...process.env, ASHCAST_DIST: "" }, stdio: ["ignore", "pipe", "pipe"] });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let text = "";
          child.stdout.on("data", (chunk: Buffer) => {
            text += chunk.toString();
            const match = / serving (http:\/\/\S+?)\/ from (.+) on Node\.js (v\S+)$/m.exec(text);
            if (match) resolve(`${match[1]!}|${match[2]!}|${match[3]!}`);
          });
          child.once("exit", (code) => reject(new Error(`serve ${flag} exited with ${code}: ${text}`)));
        });
        const [base, from, nodeVersion] = url.split("|");
        expect(from).toBe(ws.distDir);
        expect(nodeVersion).toBe(`v${PINNED_NODE}`);
        const answer = await fetch(`${base}/reftimes`, { headers: { "user-agent": "cli-test/1 ops@example.org" } });
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual([{ reftimes: ["2024-05-01T12:00:00Z"] }]);
      } finally {
        child.kill();
      }
    }
  });
});

describe("ashcast new-run", () => {
  it("creates a run folder that check passes and build publishes", async () => {
    const { code, stdout } = await ashcast(["new-run", "2024-05-01-hekla", "--type", "Exercise", "--runs", ws.runsDir, "--reftime", "2024-05-01T12:00Z"]);
    expect(code).toBe(0);
    const folder = path.join(ws.runsDir, "2024-05-01-hekla");
    expect(stdout).toContain(folder);
    expect(stdout).toContain("a running watch or start publishes it at once, template areas and all");
    const manifest = JSON.parse(await readFile(path.join(folder, "run.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({ type: "Exercise", reftime: "2024-05-01T12:00:00Z" });
    expect(await exists(`${folder}.part`)).toBe(false);
    const checked = await ashcast(["check", folder], ws.root);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain("1 run folder: 1 valid; 0 error(s), 0 warning(s)");
    const built = await ashcast(["build", "--runs", ws.runsDir, "--out", ws.distDir]);
    expect(built.code).toBe(0);
    const release = await readRelease(ws.distDir);
    expect((await release.model("2024-05-01T12:00:00Z")).meta.type).toBe("Exercise");
  });

  it("refuses a name that exists, exit 2, leaving the folder as it was", async () => {
    const first = await ashcast(["new-run", "hekla", "--type", "Rehearsal", "--runs", ws.runsDir, "--reftime", "2024-05-01T12:00:00Z"]);
    expect(first.code).toBe(0);
    const manifestPath = path.join(ws.runsDir, "hekla", "run.json");
    await writeFile(manifestPath, (await readFile(manifestPath, "utf8")).replace("Replace this text with the eruption summary.", "Edited by hand."));
    const edited = await readFile(manifestPath, "utf8");
    const second = await ashcast(["new-run", "hekla", "--type", "Exercise", "--runs", ws.runsDir, "--reftime", "2024-05-02T12:00:00Z"]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(path.join(ws.runsDir, "hekla"));
    expect(second.stderr).toMatch(/exists/);
    expect(await readFile(manifestPath, "utf8")).toBe(edited);
  });

  it("refuses --type Drill with exit 2, naming the flag and the run types, and creates nothing", async () => {
    const { code, stderr } = await ashcast(["new-run", "hekla", "--type", "Drill", "--runs", ws.runsDir, "--reftime", "2024-05-01T12:00:00Z"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--type");
    expect(stderr).toContain("Drill");
    for (const type of ["Exercise", "Rehearsal", "Real Eruption"]) expect(stderr).toContain(type);
    expect(await exists(path.join(ws.runsDir, "hekla"))).toBe(false);
  });

  it("refuses a name the build would skip, a mistyped --runs whose parent does not exist and one that is a file: exit 2, nothing created", async () => {
    for (const name of ["hekla.tmp", "hekla.swp", "_draft", "hekla~"]) {
      const { code, stderr } = await ashcast(["new-run", name, "--type", "Exercise", "--runs", ws.runsDir]);
      expect(code, name).toBe(2);
      expect(stderr).toContain("not a usable folder name");
      expect(await exists(path.join(ws.runsDir, name))).toBe(false);
    }
    const typo = path.join(ws.root, "no-such-parent", "runs");
    const missing = await ashcast(["new-run", "hekla", "--type", "Exercise", "--runs", typo]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${typo}: neither the runs directory nor the folder it would be made in exists`);
    expect(await exists(path.dirname(typo))).toBe(false);
    const file = path.join(ws.root, "a-file");
    await writeFile(file, "");
    const notDir = await ashcast(["new-run", "hekla", "--type", "Exercise", "--runs", file]);
    expect(notDir.code).toBe(2);
    expect(notDir.stderr).toContain(`${file}: the runs directory is not a directory`);
    expect(notDir.stderr).not.toMatch(/Internal error/);
  });

  it("makes runs that check passes for volcanoes beside the antimeridian and at a pole", async () => {
    const volcanoes = [
      ["2024-05-01-semisopochnoi", "Semisopochnoi", "51.93", "179.58", "2024-05-01T12:00Z"],
      ["2024-05-02-west-of-180", "West", "-20.5", "-179.8", "2024-05-02T12:00Z"],
      ["2024-05-03-north-pole", "Pole", "90", "0", "2024-05-03T12:00Z"],
    ];
    for (const [name, volcano, lat, lon, reftime] of volcanoes) {
      const made = await ashcast(["new-run", name!, "--type", "Exercise", "--runs", ws.runsDir, "--reftime", reftime!, "--volcano", volcano!, "--lat", lat!, "--lon", lon!]);
      expect(made.code, `${name}: ${made.stderr}`).toBe(0);
    }
    const checked = await ashcast(["check", ws.runsDir], ws.root);
    expect(checked.stdout, checked.stdout).toContain("3 run folders: 3 valid; 0 error(s)");
  });

  it("refuses a delivery in progress (NAME.part), a latitude that is not decimal degrees, a name too long and a volcano's name XML cannot carry: exit 2, nothing touched", async () => {
    const delivery = path.join(ws.runsDir, "2024-05-01-hekla.part");
    await mkdir(delivery);
    await writeFile(path.join(delivery, "model.nc"), "arriving");
    const busy = await ashcast(["new-run", "2024-05-01-hekla", "--type", "Exercise", "--runs", ws.runsDir]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`${delivery}: a folder of that name is being delivered`);
    expect(await readFile(path.join(delivery, "model.nc"), "utf8")).toBe("arriving");
    for (const lat of ["", "0x10", " 12 ", "1e1"]) {
      const { code, stderr } = await ashcast(["new-run", "hekla", "--type", "Exercise", "--runs", ws.runsDir, "--lat", lat]);
      expect(code, JSON.stringify(lat)).toBe(2);
      expect(stderr).toContain(`--lat: "${lat}" is not a latitude`);
    }
    const long = await ashcast(["new-run", `2024-05-01-${"a".repeat(250)}`, "--type", "Exercise", "--runs", ws.runsDir]);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/NAME: the folder name is 261 characters long[\s\S]*at most 200/);
    const control = await ashcast(["new-run", "hekla", "--type", "Exercise", "--runs", ws.runsDir, "--volcano", "Hek\fla"]);
    expect(control.code).toBe(2);
    expect(control.stderr).toContain("--volcano: the volcano's name contains U+000C (form feed), which XML does not allow");
    expect((await readdir(ws.runsDir)).sort()).toEqual(["2024-05-01-hekla.part"]);
  });
});
