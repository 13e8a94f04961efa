/**
 * `ashcast user` as a person runs it: the real CLI as a child process, the password on stdin, real argon2,
 * a users file in a temp directory. Exit codes: 0 done; 1 refused (user exists, no such user); 2 could not run.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyPassword } from "../../src/auth/passwords.ts";
import { loadUsers } from "../../src/auth/users.ts";

const PROJECT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(PROJECT, "bin/ashcast");
const SECRET = "test-secret-0123456789";
const PASSWORD = "Tr0ub4dor&3 with spaces";

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  /** The child's command line as the kernel shows it to other users (Linux), read while it ran. */
  cmdline: string;
}

function ashcast(args: string[], stdin: string, env: NodeJS.ProcessEnv = { AUTH_HASH_SALT: SECRET }): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...env };
    for (const key of ["ASHCAST_USERS_FILE", "AUTH_HASH_SALT", "AUTH_HASH_SALT_VERSION"]) if (!(key in env)) delete childEnv[key];
    const child = spawn(BIN, args, { cwd: PROJECT, env: childEnv, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let cmdline = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("spawn", () => {
      // Read before the password is written: nothing else could have put it there.
      readSettledCmdline(child.pid).then((text) => (cmdline = text)).finally(() => child.stdin.end(stdin));
    });
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr, cmdline }));
  });
}

/**
 * The shebang runs /usr/bin/env, which then execs node: while that second exec is under way the kernel shows an
 * empty command line. Wait (the child blocks on stdin meanwhile) until node's own arguments are visible.
 */
async function readSettledCmdline(pid: number | undefined): Promise<string> {
  const procFile = `/proc/${pid}/cmdline`;
  if (pid === undefined || !existsSync(procFile)) return "";
  let text = "";
  for (let attempt = 0; attempt < 100; attempt++) {
    text = (await readFile(procFile, "utf8").catch(() => "")).replaceAll("\0", " ");
    if (text.includes("bin/ashcast")) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return text;
}

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-user-cli-"));
  file = path.join(dir, "users.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ashcast user", () => {
  it("add reads the password from stdin, list shows the user and role but never the hash", async () => {
    const added = await ashcast(["user", "add", "alice", "--users", file], `${PASSWORD}\n`);
    expect(added).toMatchObject({ code: 0, stderr: "", stdout: expect.stringMatching(new RegExp(`^added user alice \\(operator\\) in ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\na running service signs users in from the file as it was at its start: restart it`)) });
    const { users } = await loadUsers(file);
    expect(Object.keys(users)).toEqual(["alice"]);
    expect(users.alice!.roles).toEqual(["operator"]);
    // The trailing newline is not part of the password; the spaces are.
    expect(await verifyPassword(users.alice!.hash, PASSWORD, [{ version: "1", secret: Buffer.from(SECRET) }])).toBe(true);

    const listed = await ashcast(["user", "list", "--users", file], "");
    expect(listed).toMatchObject({ code: 0, stderr: "", stdout: "alice\toperator\tsecret version 1\n" });
    expect(listed.stdout).not.toContain("argon2");
  });

  it("ASHCAST_USERS_FILE chooses the file when --users is not given", async () => {
    expect((await ashcast(["user", "add", "bob"], "pw\n", { AUTH_HASH_SALT: SECRET, ASHCAST_USERS_FILE: file })).code).toBe(0);
    expect(Object.keys((await loadUsers(file)).users)).toEqual(["bob"]);
  });

  it("the password appears neither in the users file, nor in the output, nor in the command line", async () => {
    const added = await ashcast(["user", "add", "alice", "--users", file], `${PASSWORD}\n`);
    expect(added.code).toBe(0);
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(Buffer.from(PASSWORD).toString("base64").replace(/=+$/, ""));
    expect(added.stdout + added.stderr).not.toContain(PASSWORD);
    if (existsSync("/proc/self/cmdline")) {
      expect(added.cmdline).toContain("user add alice");
      expect(added.cmdline).not.toContain(PASSWORD);
    }
  });

  it("has no password flag: --password is refused (exit 2) and nothing is written", async () => {
    const refused = await ashcast(["user", "add", "alice", "--users", file, "--password", PASSWORD], "");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("error: unknown option '--password'");
    expect(existsSync(file)).toBe(false);
    const help = await ashcast(["user", "add", "--help"], "");
    expect(help.code).toBe(0);
    expect(help.stdout).not.toMatch(/--pass/);
  });

  it("add of an existing user exits 1 and keeps its hash, unless --replace", async () => {
    expect((await ashcast(["user", "add", "alice", "--users", file], "first\n")).code).toBe(0);
    const before = (await loadUsers(file)).users.alice!.hash;
    const again = await ashcast(["user", "add", "alice", "--users", file], "second\n");
    expect(again).toMatchObject({ code: 1, stdout: "", stderr: `${file}: user "alice" exists already\n  fix: add --replace to set a new password and roles, or choose another name\n` });
    expect((await loadUsers(file)).users.alice!.hash).toBe(before);

    const replaced = await ashcast(["user", "add", "alice", "--users", file, "--replace"], "second\n");
    expect(replaced).toMatchObject({ code: 0, stdout: expect.stringMatching(/^replaced user alice \(operator\) in .*\n.*restart it/) });
    const after = (await loadUsers(file)).users.alice!.hash;
    expect(await verifyPassword(after, "second", [{ version: "1", secret: Buffer.from(SECRET) }])).toBe(true);
  });

  it("remove deletes the user; removing an unknown user exits 1", async () => {
    expect((await ashcast(["user", "add", "alice", "--users", file], "pw\n")).code).toBe(0);
    expect((await ashcast(["user", "add", "bob", "--users", file], "pw\n")).code).toBe(0);
    expect(await ashcast(["user", "remove", "alice", "--users", file], "")).toMatchObject({ code: 0, stdout: expect.stringMatching(/^removed user alice from .*\n.*restart it/) });
    expect(Object.keys((await loadUsers(file)).users)).toEqual(["bob"]);
    const unknown = await ashcast(["user", "remove", "alice", "--users", file], "");
    expect(unknown).toMatchObject({ code: 1, stdout: "", stderr: `${file}: there is no user "alice"\n  fix: see the users with ./bin/ashcast user list\n` });
  });

  it("add without AUTH_HASH_SALT exits 2 naming the variable, and writes nothing", async () => {
    const refused = await ashcast(["user", "add", "alice", "--users", file], "pw\n", {});
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe("AUTH_HASH_SALT: a password cannot be hashed without the server's secret\n  fix: set AUTH_HASH_SALT to the secret the service runs with (at least 16 bytes, e.g. from `openssl rand -base64 32`)\n");
    expect(existsSync(file)).toBe(false);
  });

  it("refuses a bad username, an empty or two-line stdin, and a 1025-byte password (exit 2)", async () => {
    expect((await ashcast(["user", "add", "al ice", "--users", file], "pw\n")).stderr).toBe(`NAME: "al ice" is not a usable username\n  fix: use 1 to 64 letters, digits, '.', '_' or '-' (not __proto__)\n`);
    expect((await ashcast(["user", "add", "alice", "--users", file], "")).stderr).toMatch(/^stdin: no password on stdin\n/);
    expect((await ashcast(["user", "add", "alice", "--users", file], "one\ntwo\n")).stderr).toMatch(/^stdin: stdin holds more than one line\n/);
    const long = await ashcast(["user", "add", "alice", "--users", file], `${"x".repeat(1025)}\n`);
    expect(long).toMatchObject({ code: 2, stderr: "password: the password is 1025 bytes, more than the 1024 accepted\n  fix: use a password of at most 1024 bytes (UTF-8)\n" });
    expect(existsSync(file)).toBe(false);
  });

  it("list of a missing file says there are no users", async () => {
    expect(await ashcast(["user", "list", "--users", file], "")).toMatchObject({ code: 0, stdout: `no users in ${file}\n` });
  });

  it("serve refuses to start when users exist and AUTH_HASH_SALT is not set, naming the variable", async () => {
    expect((await ashcast(["user", "add", "alice", "--users", file], "pw\n")).code).toBe(0);
    const dist = path.join(path.dirname(file), "dist");
    const refused = await ashcast(["serve", "--dist", dist, "--port", "0", "--users", file], "", {});
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("AUTH_HASH_SALT: the service refuses to start");
    expect(refused.stderr).toContain("has 1 user(s) but AUTH_HASH_SALT is not set");
    expect(refused.stdout).not.toContain("serving");
  });
});
