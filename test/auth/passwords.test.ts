/** Password hashing with the real argon2: parameters, per-user salt, pepper and its version, limits. */
import { describe, expect, it } from "vitest";
import { dummyVerify, hashPassword, parseStoredHash, pepperFromEnvironment, verifyPassword, type Pepper } from "../../src/auth/passwords.ts";
import { UserError } from "../../src/errors.ts";

const pepper: Pepper = { version: "1", secret: Buffer.from("0123456789abcdef-first") };
const otherSecret: Pepper = { version: "1", secret: Buffer.from("0123456789abcdef-other") };
const rotated: Pepper = { version: "2", secret: Buffer.from("0123456789abcdef-second") };

describe("hashPassword / verifyPassword", () => {
  it("verifies the password a hash was made from, and no other", async () => {
    const stored = await hashPassword("correct horse battery staple", pepper);
    expect(await verifyPassword(stored, "correct horse battery staple", [pepper])).toBe(true);
    expect(await verifyPassword(stored, "correct horse battery stapl", [pepper])).toBe(false);
    expect(await verifyPassword(stored, "", [pepper])).toBe(false);
  });

  it("a different secret under the same version does not verify", async () => {
    const stored = await hashPassword("s3cret", pepper);
    expect(await verifyPassword(stored, "s3cret", [otherSecret])).toBe(false);
  });

  it("equal passwords give different hashes (a random salt per user)", async () => {
    const a = parseStoredHash(await hashPassword("same password", pepper))!;
    const b = parseStoredHash(await hashPassword("same password", pepper))!;
    expect(a.encoded).not.toBe(b.encoded);
    expect(a.encoded.split("$")[4]).not.toBe(b.encoded.split("$")[4]);
  });

  it("uses argon2id, m=19456 KiB, t=2, p=1, a 16-byte salt and a 32-byte hash, and records the pepper version in front", async () => {
    const stored = await hashPassword("s3cret", pepper);
    expect(parseStoredHash(stored)!.version).toBe("1");
    // The PHC string: $argon2id$v=19$<parameters>$<salt>$<hash>, base64 without padding.
    const [empty, algorithm, version, parameters, salt, hash] = parseStoredHash(stored)!.encoded.split("$");
    expect([empty, algorithm, version]).toEqual(["", "argon2id", "v=19"]);
    expect(Object.fromEntries(parameters!.split(",").map((pair) => pair.split("=")))).toEqual({ m: "19456", t: "2", p: "1" });
    expect(Buffer.from(salt!, "base64").length).toBe(16);
    expect(Buffer.from(hash!, "base64").length).toBe(32);
  });

  it("picks the pepper named by the stored hash", async () => {
    const old = await hashPassword("s3cret", pepper);
    const current = await hashPassword("s3cret", rotated);
    expect(parseStoredHash(old)!.version).toBe("1");
    expect(parseStoredHash(current)!.version).toBe("2");
    expect(await verifyPassword(old, "s3cret", [rotated, pepper])).toBe(true);
    expect(await verifyPassword(current, "s3cret", [rotated, pepper])).toBe(true);
    // Version 2's secret under version 1's name: the pepper really is chosen by version.
    expect(await verifyPassword(old, "s3cret", [{ version: "1", secret: rotated.secret }])).toBe(false);
  });

  it("a hash whose pepper version is not configured is a configuration error, naming the variable", async () => {
    const stored = await hashPassword("s3cret", rotated);
    const error = await verifyPassword(stored, "s3cret", [pepper]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).where).toBe("AUTH_HASH_SALT_VERSION");
    expect((error as UserError).message).toBe('a password hash was made with secret version "2", which is not configured');
  });

  it("refuses a password of 1025 bytes before hashing, and takes 1024", async () => {
    const error = await hashPassword("x".repeat(1025), pepper).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toBe("the password is 1025 bytes, more than the 1024 accepted");
    expect((error as UserError).fix).toBe("use a password of at most 1024 bytes (UTF-8)");
    // Bytes, not characters: 513 two-byte characters are 1026 bytes.
    await expect(hashPassword("é".repeat(513), pepper)).rejects.toThrow("the password is 1026 bytes, more than the 1024 accepted");
    const longest = await hashPassword("x".repeat(1024), pepper);
    expect(await verifyPassword(longest, "x".repeat(1024), [pepper])).toBe(true);
    expect(await verifyPassword(longest, "x".repeat(1025), [pepper])).toBe(false);
  });

  it("refuses an empty password", async () => {
    await expect(hashPassword("", pepper)).rejects.toThrow("the password is empty");
  });
});

describe("dummyVerify", () => {
  it("answers false, whatever the password", async () => {
    expect(await dummyVerify("anything")).toBe(false);
    expect(await dummyVerify("")).toBe(false);
    expect(await dummyVerify("x".repeat(2000))).toBe(false);
  });
});

describe("pepperFromEnvironment", () => {
  it("reads AUTH_HASH_SALT as UTF-8 bytes, version 1 by default", () => {
    expect(pepperFromEnvironment({ AUTH_HASH_SALT: "0123456789abcdef" })).toEqual({ version: "1", secret: Buffer.from("0123456789abcdef") });
    expect(pepperFromEnvironment({ AUTH_HASH_SALT: "0123456789abcdef", AUTH_HASH_SALT_VERSION: "2025-01" })).toEqual({ version: "2025-01", secret: Buffer.from("0123456789abcdef") });
  });

  it("is undefined when AUTH_HASH_SALT is unset or empty", () => {
    expect(pepperFromEnvironment({})).toBeUndefined();
    expect(pepperFromEnvironment({ AUTH_HASH_SALT: "" })).toBeUndefined();
  });

  it("refuses a secret shorter than 16 bytes, naming the variable and the fix", () => {
    let error: unknown;
    try {
      pepperFromEnvironment({ AUTH_HASH_SALT: "0123456789abcde" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).where).toBe("AUTH_HASH_SALT");
    expect((error as UserError).message).toBe("the secret is 15 bytes, fewer than the 16 required");
    expect((error as UserError).fix).toBe("set it to a random value of at least 16 bytes, e.g. the output of `openssl rand -base64 32`");
  });

  it("refuses a version that cannot prefix a stored hash", () => {
    expect(() => pepperFromEnvironment({ AUTH_HASH_SALT: "0123456789abcdef", AUTH_HASH_SALT_VERSION: "a$b" })).toThrow('"a$b" is not a usable secret version');
  });
});
