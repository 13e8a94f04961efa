/**
 * Changes to the users file made at once are never lost: real `ashcast user add` processes, a real lock
 * file, real argon2. The password always comes on stdin.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadUsers, updateUsers } from "../../src/auth/users.ts";
import { tryLock } from "../../src/os/lockFile.ts";

const PROJECT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(PROJECT, "bin/ashcast");
const SECRET = "test-secret-0123456789";

/** Starts `ashcast user add NAME`; `stderr` grows as the child writes. */
function addUser(name: string, file: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", AUTH_HASH_SALT: SECRET };
  delete env.ASHCAST_USERS_FILE;
  delete env.AUTH_HASH_SALT_VERSION;
  const child = spawn(BIN, ["user", "add", name, "--users", file], { cwd: PROJECT, env, stdio: ["pipe", "pipe", "pipe"] });
  const seen = { stderr: "", exited: false };
  child.stderr.on("data", (chunk: Buffer) => (seen.stderr += chunk.toString()));
  child.stdin.end("a password\n");
  const exited = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      seen.exited = true;
      resolve(code ?? -1);
    });
  });
  return { seen, exited };
}

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-users-lock-"));
  file = path.join(dir, "users.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the users file lock", () => {
  it("eight `user add` at once: every user is in the file, and no lock or temporary is left", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `operator-${i}`);
    const codes = await Promise.all(names.map((name) => addUser(name, file).exited));
    expect(codes).toEqual(names.map(() => 0));
    expect(Object.keys((await loadUsers(file)).users).sort()).toEqual(names);
    const { readdir } = await import("node:fs/promises");
    expect(await readdir(dir)).toEqual(["users.json"]);
  });

  it("a `user add` waits while another process holds the lock, says so, and keeps that process's change", async () => {
    await updateUsers(file, () => false); // creates the directory; writes nothing
    const held = await tryLock(`${file}.lock`, ".users.json.lock-");
    if (held.kind !== "taken") throw new Error("the test could not take the lock");
    const child = addUser("bob", file);
    // The child tells that it waits; until the lock is released it writes nothing.
    while (!child.seen.stderr.includes("waiting:") && !child.seen.exited) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(child.seen.stderr).toBe(`waiting: process ${process.pid} is changing the users file\n`);
    // This process's change, made under the lock while bob's add waits.
    const { hashPassword } = await import("../../src/auth/passwords.ts");
    const { writeUsers } = await import("../../src/auth/users.ts");
    const current = await loadUsers(file);
    current.users.alice = { hash: await hashPassword("pw", { version: "1", secret: Buffer.from(SECRET) }), created: "2026-11-23T00:00:00Z", roles: ["operator"] };
    await writeUsers(file, current);
    await held.release();
    expect(await child.exited).toBe(0);
    expect(Object.keys((await loadUsers(file)).users).sort()).toEqual(["alice", "bob"]);
  });

  it("a lock left by a process that died is taken over", async () => {
    // A pid far above pid_max (4194304 at most on Linux) is never alive.
    await writeFile(`${file}.lock`, "99999999 deadbeef\n");
    const child = addUser("carol", file);
    expect(await child.exited).toBe(0);
    expect(child.seen.stderr).toBe("");
    expect(Object.keys((await loadUsers(file)).users)).toEqual(["carol"]);
  });

  it("a lock whose pid now belongs to another process (it started at another time) is taken over; the holder's own is not", async () => {
    // A live process that is not the holder: this test's own pid, with a start time it never had.
    await writeFile(`${file}.lock`, `${process.pid} deadbeef 1\n`);
    const child = addUser("dave", file);
    expect(await child.exited).toBe(0);
    expect(child.seen.stderr).toBe("");
    expect(Object.keys((await loadUsers(file)).users)).toContain("dave");
    // Another live process with its true start time holds it; with another start time, it does not.
    const { processStartTime } = await import("../../src/os/processes.ts");
    const sleeper = spawn("sleep", ["30"]);
    try {
      await writeFile(`${file}.lock`, `${sleeper.pid} deadbeef ${processStartTime(sleeper.pid!)}\n`);
      expect(await tryLock(`${file}.lock`, ".probe-")).toEqual({ kind: "held", pid: sleeper.pid });
      await writeFile(`${file}.lock`, `${sleeper.pid} deadbeef 1\n`);
      const taken = await tryLock(`${file}.lock`, ".probe-");
      expect(taken).toMatchObject({ kind: "taken", takenOver: true });
      if (taken.kind === "taken") await taken.release();
    } finally {
      sleeper.kill();
    }
  });
});
