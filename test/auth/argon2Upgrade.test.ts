/**
 * The switch from @node-rs/argon2 to argon2 (issue 15): a users file written before it, committed as a
 * fixture (made by `ashcast user add` on 2026-11-25 with @node-rs/argon2 2.2.1, two users under two secret
 * versions), still loads and every password in it still verifies, through the same code a sign-in uses.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hashPassword, parseStoredHash, verifyPassword, type Pepper } from "../../src/auth/passwords.ts";
import { loadUsers } from "../../src/auth/users.ts";

const FIXTURE = path.join(import.meta.dirname, "../fixtures/auth/users-node-rs-argon2.json");
// Secrets and passwords of the fixture only: they protect nothing.
const first: Pepper = { version: "1", secret: Buffer.from("fixture pepper one, tests only") };
const second: Pepper = { version: "2", secret: Buffer.from("fixture pepper two, tests only") };

describe("a users file written with @node-rs/argon2", () => {
  it("loads, and its hashes keep @node-rs's order of parameters (m, t, p)", async () => {
    const file = await loadUsers(FIXTURE);
    expect(Object.keys(file.users)).toEqual(["alice", "bob"]);
    expect(file.users.alice!.hash).toMatch(/^1\$\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(file.users.bob!.hash).toMatch(/^2\$\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it("verifies every user's password with the secret of its version, and refuses wrong ones", async () => {
    const { users } = await loadUsers(FIXTURE);
    expect(await verifyPassword(users.alice!.hash, "alice-password-2026", [second, first])).toBe(true);
    expect(await verifyPassword(users.bob!.hash, "bob: ünïcode pässword", [second, first])).toBe(true);
    expect(await verifyPassword(users.alice!.hash, "alice-password-2025", [second, first])).toBe(false);
    expect(await verifyPassword(users.bob!.hash, "bob: unicode password", [second, first])).toBe(false);
    // The secret takes part: alice's hash under version 1's name with version 2's secret does not verify.
    expect(await verifyPassword(users.alice!.hash, "alice-password-2026", [{ version: "1", secret: second.secret }])).toBe(false);
  });

  it("and a hash made now is accepted beside them by the users file's schema", async () => {
    const made = await hashPassword("alice-password-2026", first);
    expect(parseStoredHash(made)).toBeDefined();
    expect(await verifyPassword(made, "alice-password-2026", [first])).toBe(true);
  });
});
