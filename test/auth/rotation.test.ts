/**
 * Rotating AUTH_HASH_SALT: the new secret signs every new hash, the old ones (AUTH_HASH_SALT_PREVIOUS)
 * still verify, and a user's hash is made again with the new secret at their next sign-in, in the users
 * file. A real server on a socket, real argon2, a real users file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword, parseStoredHash, previousPeppersFromEnvironment, verifyPassword, type Pepper } from "../../src/auth/passwords.ts";
import { loadUsers, loadUsersForServer, writeUsers } from "../../src/auth/users.ts";
import { UserError } from "../../src/errors.ts";
import { startServer } from "../../src/server/serve.ts";
import { http, makeSite, waitFor, type Site } from "../server/serverFixtures.ts";

const OLD: Pepper = { version: "1", secret: Buffer.from("the-old-secret-0123456789") };
const NEW: Pepper = { version: "2", secret: Buffer.from("the-new-secret-9876543210") };
const KEY = Buffer.alloc(32, 3).toString("base64url");
const ROTATING = { AUTH_HASH_SALT: NEW.secret.toString(), AUTH_HASH_SALT_VERSION: "2", AUTH_HASH_SALT_PREVIOUS: `1:${OLD.secret.toString()}`, ASHCAST_TOKEN_KEY: KEY };
const ROTATED = { AUTH_HASH_SALT: NEW.secret.toString(), AUTH_HASH_SALT_VERSION: "2", ASHCAST_TOKEN_KEY: KEY };

describe("previousPeppersFromEnvironment", () => {
  it("reads version:secret pairs separated by spaces", () => {
    expect(previousPeppersFromEnvironment({ AUTH_HASH_SALT_PREVIOUS: ` 1:${OLD.secret}  0:another-old-secret-0123 ` }, NEW)).toEqual([OLD, { version: "0", secret: Buffer.from("another-old-secret-0123") }]);
    expect(previousPeppersFromEnvironment({}, NEW)).toEqual([]);
  });

  it("refuses malformed entries, short or repeated secrets, and earlier secrets without a current one, never printing a secret", () => {
    const refusal = (env: NodeJS.ProcessEnv, current: Pepper | "none" = NEW) => {
      try {
        previousPeppersFromEnvironment(env, current === "none" ? undefined : current);
      } catch (error) {
        expect(error).toBeInstanceOf(UserError);
        const text = `${(error as UserError).where}: ${(error as UserError).message}`;
        expect(`${text} ${(error as UserError).fix}`).not.toContain("secret-0123456789");
        return text;
      }
      return "accepted";
    };
    expect(refusal({ AUTH_HASH_SALT_PREVIOUS: "the-old-secret-0123456789" })).toBe("AUTH_HASH_SALT_PREVIOUS: entry 1 does not start with a secret version and a colon");
    expect(refusal({ AUTH_HASH_SALT_PREVIOUS: `1:${OLD.secret} 0:short` })).toBe("AUTH_HASH_SALT_PREVIOUS: entry 2 (version 0): the secret is 5 bytes, fewer than the 16 required");
    expect(refusal({ AUTH_HASH_SALT_PREVIOUS: `2:${OLD.secret}` })).toBe("AUTH_HASH_SALT_PREVIOUS: entry 1: secret version 2 is given twice");
    expect(refusal({ AUTH_HASH_SALT_PREVIOUS: `1:${OLD.secret} 1:${OLD.secret}` })).toBe("AUTH_HASH_SALT_PREVIOUS: entry 2: secret version 1 is given twice");
    expect(refusal({ AUTH_HASH_SALT_PREVIOUS: `1:${OLD.secret}` }, "none")).toBe("AUTH_HASH_SALT: earlier secrets are set, but not the current one");
  });
});

describe("a rotation of AUTH_HASH_SALT, on a real server", () => {
  let dir: string;
  let site: Site;
  let usersFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-rotation-"));
    site = await makeSite("ashcast-rotation-site-");
    usersFile = path.join(dir, "users.json");
    const created = "2026-11-23T12:00:00Z";
    await writeUsers(usersFile, {
      format: 1,
      users: {
        alice: { hash: await hashPassword("alice's password", OLD), created, roles: ["operator"] },
        bob: { hash: await hashPassword("bob's password", OLD), created, roles: ["operator"] },
      },
    });
  });
  afterAll(async () => {
    await site?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const signIn = (server: { url: string }, user: string, password: string) =>
    http(server.url, `${new URL(server.url).pathname}/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ username: user, password }).toString() });

  it("old hashes verify with the old secret and are made again with the new one at sign-in; a wrong password changes nothing", async () => {
    const logged: string[] = [];
    const server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ROTATING, log: (line) => logged.push(line) });
    try {
      expect((await signIn(server, "bob", "wrong")).status).toBe(400);
      expect((await signIn(server, "alice", "alice's password")).status).toBe(200);
      await waitFor("alice's hash to be made again", async () => parseStoredHash((await loadUsers(usersFile)).users.alice!.hash)?.version === "2");
      const { users } = await loadUsers(usersFile);
      expect(await verifyPassword(users.alice!.hash, "alice's password", [NEW])).toBe(true);
      // bob has not signed in: his hash still needs the old secret.
      expect(parseStoredHash(users.bob!.hash)?.version).toBe("1");
      expect(logged).toContain("user alice: password hash made again with secret version 2");
      // Signing in again uses the new hash (from memory; the file agrees).
      expect((await signIn(server, "alice", "alice's password")).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("without the old secret, the server refuses to start while a user still needs it, naming the user; alice, upgraded, is fine", async () => {
    const error = await loadUsersForServer(usersFile, ROTATED).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toBe("the service refuses to start: the passwords of bob were made with secret version 1, which is neither AUTH_HASH_SALT_VERSION (2) nor in AUTH_HASH_SALT_PREVIOUS");
    expect((error as UserError).where).toBe(usersFile);
    await expect(startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ROTATED })).rejects.toThrow(/passwords of bob/);

    // bob signs in during the rotation; then the old secret can go.
    const rotating = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ROTATING });
    try {
      expect((await signIn(rotating, "bob", "bob's password")).status).toBe(200);
      await waitFor("bob's hash to be made again", async () => parseStoredHash((await loadUsers(usersFile)).users.bob!.hash)?.version === "2");
    } finally {
      await rotating.close();
    }
    const rotated = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ROTATED });
    try {
      expect((await signIn(rotated, "alice", "alice's password")).status).toBe(200);
      expect((await signIn(rotated, "bob", "bob's password")).status).toBe(200);
    } finally {
      await rotated.close();
    }
  });
});
