/**
 * Password hashing: argon2id with a random salt per user (argon2's own) and a server-wide secret, the
 * pepper (`AUTH_HASH_SALT`), passed as argon2's `secret`. The stored string names the pepper's version,
 * `<version>$<argon2 encoded hash>`, so a secret can be rotated while old hashes still verify.
 */
import { randomBytes } from "node:crypto";
import argon2 from "argon2";
import { UserError } from "../errors.ts";

/** OWASP's argon2id minimum (security.md): 19 MiB, two passes, one lane. */
export const ARGON2_MEMORY_KIB = 19456;
export const ARGON2_PASSES = 2;
export const ARGON2_LANES = 1;
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: ARGON2_MEMORY_KIB, timeCost: ARGON2_PASSES, parallelism: ARGON2_LANES } as const;

/** Longer passwords are refused before hashing: argon2 would take them, at the cost of a cheap DoS. */
export const MAX_PASSWORD_BYTES = 1024;
/** 128 bits: a shorter secret adds little against someone who has the users file. */
export const MIN_PEPPER_BYTES = 16;
export const DEFAULT_PEPPER_VERSION = "1";
/** The version is the prefix of every stored hash: no `$`, short. */
const PEPPER_VERSION = /^[A-Za-z0-9._-]{1,32}$/;
/**
 * What a stored hash looks like; the users file schema checks it too. The PHC string's parameters come in
 * either order: argon2 writes `m=,p=,t=`, @node-rs/argon2 (used before 2026-11) wrote `m=,t=,p=`.
 */
export const STORED_HASH = /^([A-Za-z0-9._-]{1,32})\$(\$argon2id\$v=19\$m=\d+,(?:t=\d+,p=\d+|p=\d+,t=\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+)$/;

export interface Pepper {
  version: string;
  secret: Buffer;
}

/** The pepper from `AUTH_HASH_SALT` (UTF-8 bytes) and `AUTH_HASH_SALT_VERSION`; undefined when unset or empty. */
export function pepperFromEnvironment(env: NodeJS.ProcessEnv = process.env): Pepper | undefined {
  const text = env.AUTH_HASH_SALT;
  if (text === undefined || text === "") return undefined;
  const secret = Buffer.from(text, "utf8");
  if (secret.length < MIN_PEPPER_BYTES) {
    throw new UserError(`the secret is ${secret.length} bytes, fewer than the ${MIN_PEPPER_BYTES} required`, { where: "AUTH_HASH_SALT", fix: "set it to a random value of at least 16 bytes, e.g. the output of `openssl rand -base64 32`" });
  }
  const version = env.AUTH_HASH_SALT_VERSION || DEFAULT_PEPPER_VERSION;
  if (!PEPPER_VERSION.test(version)) {
    throw new UserError(`"${version}" is not a usable secret version`, { where: "AUTH_HASH_SALT_VERSION", fix: "use 1 to 32 letters, digits, '.', '_' or '-', e.g. 2" });
  }
  return { version, secret };
}

/**
 * Earlier secrets, kept while a rotation is under way: `AUTH_HASH_SALT_PREVIOUS` holds `version:secret`
 * pairs separated by spaces. Hashes made with them still verify, and are made again with the current
 * secret at the user's next sign-in; once every user has signed in (ashcast user list shows each
 * hash's version), the old secret can go.
 */
export function previousPeppersFromEnvironment(env: NodeJS.ProcessEnv = process.env, current?: Pepper): Pepper[] {
  const text = env.AUTH_HASH_SALT_PREVIOUS?.trim();
  if (!text) return [];
  const where = "AUTH_HASH_SALT_PREVIOUS";
  if (!current) throw new UserError("earlier secrets are set, but not the current one", { where: "AUTH_HASH_SALT", fix: "set AUTH_HASH_SALT (and AUTH_HASH_SALT_VERSION) to the new secret; AUTH_HASH_SALT_PREVIOUS keeps the old ones" });
  const peppers: Pepper[] = [];
  text.split(/\s+/).forEach((pair, index) => {
    const at = pair.indexOf(":");
    const version = at > 0 ? pair.slice(0, at) : "";
    const secret = Buffer.from(at > 0 ? pair.slice(at + 1) : "", "utf8");
    const entry = `entry ${index + 1}`;
    if (!PEPPER_VERSION.test(version)) throw new UserError(`${entry} does not start with a secret version and a colon`, { where, fix: "write each earlier secret as version:secret, e.g. 1:<the old AUTH_HASH_SALT>, separated by spaces" });
    if (secret.length < MIN_PEPPER_BYTES) throw new UserError(`${entry} (version ${version}): the secret is ${secret.length} bytes, fewer than the ${MIN_PEPPER_BYTES} required`, { where, fix: "give the old secret exactly as AUTH_HASH_SALT held it" });
    if (version === current.version || peppers.some((p) => p.version === version)) throw new UserError(`${entry}: secret version ${version} is given twice`, { where, fix: `give each version once; version ${current.version} is the current one (AUTH_HASH_SALT_VERSION)` });
    peppers.push({ version, secret });
  });
  return peppers;
}

function passwordBytes(password: string): number {
  return Buffer.byteLength(password, "utf8");
}

/** Refuses what must never be hashed: an empty or over-long password. */
export function checkPassword(password: string): void {
  if (password === "") throw new UserError("the password is empty", { where: "password", fix: "give a password of 1 to 1024 bytes" });
  const bytes = passwordBytes(password);
  if (bytes > MAX_PASSWORD_BYTES) {
    throw new UserError(`the password is ${bytes} bytes, more than the ${MAX_PASSWORD_BYTES} accepted`, { where: "password", fix: `use a password of at most ${MAX_PASSWORD_BYTES} bytes (UTF-8)` });
  }
}

/** `<pepper version>$<argon2id encoded hash>`; the salt is random, so equal passwords give different strings. */
export async function hashPassword(password: string, pepper: Pepper): Promise<string> {
  checkPassword(password);
  return `${pepper.version}$${await argon2.hash(password, { ...ARGON2_OPTIONS, secret: pepper.secret })}`;
}

/** The pepper version a stored hash was made with, and argon2's encoded hash. */
export function parseStoredHash(stored: string): { version: string; encoded: string } | undefined {
  const match = STORED_HASH.exec(stored);
  return match ? { version: match[1]!, encoded: match[2]! } : undefined;
}

/**
 * True when `password` is the one `stored` was made from, with the pepper of the version it names.
 * A stored hash whose pepper is not configured cannot be checked: that is a configuration error, not
 * a wrong password, so it throws rather than lock the user out silently.
 */
export async function verifyPassword(stored: string, password: string, peppers: readonly Pepper[]): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (!parsed) throw new UserError("a stored password hash is malformed", { where: "hash", fix: "set the user's password again with ./bin/ashcast user add NAME --replace" });
  const pepper = peppers.find((p) => p.version === parsed.version);
  if (!pepper) {
    throw new UserError(`a password hash was made with secret version "${parsed.version}", which is not configured`, { where: "AUTH_HASH_SALT_VERSION", fix: `set AUTH_HASH_SALT and AUTH_HASH_SALT_VERSION=${parsed.version} to that secret, or set the user's password again with ./bin/ashcast user add NAME --replace` });
  }
  // Length is no secret: an over-long password is simply wrong, without spending a hash on it.
  if (password === "" || passwordBytes(password) > MAX_PASSWORD_BYTES) return false;
  return argon2.verify(parsed.encoded, password, { secret: pepper.secret });
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of one verification and answers false: for an unknown user, so a login takes as long
 * as for a known one (an empty or over-long password is refused at once in both cases, as in
 * verifyPassword). The dummy is hashed from a random password and secret on the first call (call it once
 * at start to pay for that there); it has the same parameters, so verifying against it costs the same.
 */
export async function dummyVerify(password: string): Promise<false> {
  dummy ??= argon2.hash(randomBytes(32).toString("base64"), { ...ARGON2_OPTIONS, secret: randomBytes(MIN_PEPPER_BYTES) });
  const encoded = await dummy;
  if (password === "" || passwordBytes(password) > MAX_PASSWORD_BYTES) return false;
  await argon2.verify(encoded, password, { secret: randomBytes(MIN_PEPPER_BYTES) });
  return false;
}
