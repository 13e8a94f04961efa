/** The users file on disk: round trip, atomic write with mode 0600, errors that name the field, the start check. */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/auth/passwords.ts";
import { loadUsers, loadUsersForServer, resolveUsersFile, writeUsers, type UsersFile } from "../../src/auth/users.ts";
import { UserError } from "../../src/errors.ts";

const SECRET = "0123456789abcdef0123";
const pepper = { version: "1", secret: Buffer.from(SECRET) };
// A well-formed stored hash (its password does not matter here), so most tests need not hash.
const HASH = "1$$argon2id$v=19$m=19456,t=2,p=1$Ob0bpQZOEsMt9B8QowRljw$W00wuZMapqMReTHNe8tBOk6Chh3rWQhqSUfgeMDErXg";
const alice = { hash: HASH, created: "2024-05-01T12:00:00Z", roles: ["operator" as const] };

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-users-"));
  file = path.join(dir, "config", "users.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function loadError(content: unknown): Promise<UserError> {
  await writeFile(path.join(dir, "bad.json"), typeof content === "string" ? content : JSON.stringify(content));
  const error = await loadUsers(path.join(dir, "bad.json")).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UserError);
  expect((error as UserError).where).toBe(path.join(dir, "bad.json"));
  return error as UserError;
}

describe("users file", () => {
  it("round trips, creating the directory, as a 0600 file and no temporary left behind", async () => {
    const users: UsersFile = { format: 1, users: { alice, "bob.smith-2_x": { ...alice, created: "2024-05-02T00:00:00Z" } } };
    await writeUsers(file, users);
    expect(await loadUsers(file)).toEqual(users);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(path.dirname(file))).toEqual(["users.json"]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual(users);
  });

  it("a hash written and read back still verifies", async () => {
    await writeUsers(file, { format: 1, users: { alice: { ...alice, hash: await hashPassword("pw", pepper) } } });
    const { users } = await loadUsers(file);
    expect(await verifyPassword(users.alice!.hash, "pw", [pepper])).toBe(true);
  });

  it("a missing file is an empty list", async () => {
    expect(await loadUsers(file)).toEqual({ format: 1, users: {} });
  });

  it("replaces an existing file whatever its mode was", async () => {
    await writeFile(path.join(dir, "users.json"), JSON.stringify({ format: 1, users: {} }), { mode: 0o644 });
    await writeUsers(path.join(dir, "users.json"), { format: 1, users: { alice } });
    expect((await stat(path.join(dir, "users.json"))).mode & 0o777).toBe(0o600);
    expect(Object.keys((await loadUsers(path.join(dir, "users.json"))).users)).toEqual(["alice"]);
  });

  it("invalid JSON names the file", async () => {
    const error = await loadError("{ format: 1");
    expect(error.message).toMatch(/^the users file is not valid JSON: /);
    expect(error.fix).toBe("fix the JSON syntax, or restore the file from a backup");
  });

  it("errors name the field at fault and the fix", async () => {
    expect((await loadError({ format: 2, users: {} })).message).toMatch(/^field format: /);
    expect((await loadError({ format: 2, users: {} })).fix).toBe('set "format" to 1');
    const badHash = await loadError({ format: 1, users: { alice: { ...alice, hash: "$argon2id$v=19$m=19456,t=2,p=1$abc$def" } } });
    expect(badHash.message).toBe("field users.alice.hash: not a password hash made by ashcast (<secret version>$<argon2id hash>)");
    expect(badHash.fix).toBe("set the user's password again with ./bin/ashcast user add NAME --replace");
    const badRole = await loadError({ format: 1, users: { alice: { ...alice, roles: ["admin"] } } });
    expect(badRole.message).toMatch(/^field users\.alice\.roles\.0: /);
    expect(badRole.fix).toBe('give "roles": ["operator"]');
    const badCreated = await loadError({ format: 1, users: { alice: { ...alice, created: "yesterday" } } });
    expect(badCreated.message).toMatch(/^field users\.alice\.created: /);
    const extra = await loadError({ format: 1, users: { alice: { ...alice, password: "pw" } } });
    expect(extra.message).toMatch(/^field users\.alice\.password: /);
    const badName = await loadError({ format: 1, users: { "al ice": alice } });
    expect(badName.message).toMatch(/^field users\.al ice: a username is 1 to 64 letters, digits, '\.', '_' or '-'$/);
    const longName = await loadError({ format: 1, users: { ["a".repeat(65)]: alice } });
    expect(longName.message).toMatch(/^field users\.a{65}: /);
  });

  it("a __proto__ entry is dropped (by zod), never made the prototype of the users", async () => {
    await writeFile(file.replace("config/", ""), '{"format": 1, "users": {"__proto__": {"hash": "x", "roles": ["admin"]}}}');
    const { users } = await loadUsers(file.replace("config/", ""));
    expect(Object.keys(users)).toEqual([]);
    expect((users as Record<string, unknown>).roles).toBeUndefined();
  });

  it("the path comes from --users, else ASHCAST_USERS_FILE, else config/users.json", () => {
    expect(resolveUsersFile("/x/flag.json", { ASHCAST_USERS_FILE: "/x/env.json" })).toBe("/x/flag.json");
    expect(resolveUsersFile(undefined, { ASHCAST_USERS_FILE: "/x/env.json" })).toBe("/x/env.json");
    expect(resolveUsersFile(undefined, {})).toBe(path.resolve("config/users.json"));
  });
});

describe("loadUsersForServer", () => {
  it("refuses to start when there are users and AUTH_HASH_SALT is not set", async () => {
    await writeUsers(file, { format: 1, users: { alice } });
    for (const env of [{}, { AUTH_HASH_SALT: "" }]) {
      const error = await loadUsersForServer(file, env).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).where).toBe("AUTH_HASH_SALT");
      expect((error as UserError).message).toBe(`the service refuses to start: ${file} has 1 user(s) but AUTH_HASH_SALT is not set`);
      expect((error as UserError).fix).toBe("set AUTH_HASH_SALT (and AUTH_HASH_SALT_VERSION if not 1) in the service's environment to the secret the passwords were added with");
    }
  });

  it("starts with the users and the pepper when AUTH_HASH_SALT is set", async () => {
    await writeUsers(file, { format: 1, users: { alice } });
    expect(await loadUsersForServer(file, { AUTH_HASH_SALT: SECRET })).toEqual({ users: { alice }, pepper, previous: [] });
  });

  it("starts without users and without AUTH_HASH_SALT (no file, or an empty list)", async () => {
    expect(await loadUsersForServer(file, {})).toEqual({ users: {}, pepper: undefined, previous: [] });
    await writeUsers(file, { format: 1, users: {} });
    expect(await loadUsersForServer(file, {})).toEqual({ users: {}, pepper: undefined, previous: [] });
  });

  it("refuses a secret that is too short even without users", async () => {
    await expect(loadUsersForServer(file, { AUTH_HASH_SALT: "short" })).rejects.toThrow("the secret is 5 bytes, fewer than the 16 required");
  });
});
