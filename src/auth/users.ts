/**
 * The users file: who may sign in, with their password hash and roles. JSON, checked by zod on every
 * load; written to a temporary file in the same directory and renamed, so a reader never sees half a file.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { UserError } from "../errors.ts";
import { readConfigJson } from "./configFile.ts";
import { parseStoredHash, pepperFromEnvironment, previousPeppersFromEnvironment, STORED_HASH, type Pepper } from "./passwords.ts";
import { waitForLock } from "../os/lockFile.ts";

export const DEFAULT_USERS_FILE = "config/users.json";
export const USERS_FILE_FORMAT = 1;
/** Far above any real list of operators; bounds what a broken or hostile file can make us parse. */
const MAX_USERS_FILE_BYTES = 4 * 1024 * 1024;
export const ROLES = ["operator"] as const;

export const Username = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, "a username is 1 to 64 letters, digits, '.', '_' or '-'")
  // Assigning it to a plain object would set the prototype instead of adding a user.
  .refine((name) => name !== "__proto__", "__proto__ cannot be a username");
export type Role = (typeof ROLES)[number];

export const UserRecord = z.strictObject({
  hash: z.string().regex(STORED_HASH, "not a password hash made by ashcast (<secret version>$<argon2id hash>)"),
  created: z.iso.datetime(),
  roles: z.array(z.enum(ROLES)).min(1),
});
export type UserRecord = z.infer<typeof UserRecord>;

export const UsersFile = z.strictObject({
  format: z.literal(USERS_FILE_FORMAT),
  users: z.record(Username, UserRecord),
});
export type UsersFile = z.infer<typeof UsersFile>;

export const emptyUsersFile = (): UsersFile => ({ format: USERS_FILE_FORMAT, users: {} });

/** `--users`, else `ASHCAST_USERS_FILE`, else config/users.json; relative to the working directory. */
export function resolveUsersFile(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag || env.ASHCAST_USERS_FILE || DEFAULT_USERS_FILE);
}

/** The users file, or an empty list when it does not exist yet. */
export async function loadUsers(file: string): Promise<UsersFile> {
  const json = await readConfigJson(file, {
    what: "users file",
    maxBytes: MAX_USERS_FILE_BYTES,
    sizeFix: "check that this is the users file (ashcast user list reads it)",
    readFix: "check the path (--users or ASHCAST_USERS_FILE) and that the service's account may read it",
    syntaxFix: "fix the JSON syntax, or restore the file from a backup",
  });
  if (json === undefined) return emptyUsersFile();
  const parsed = UsersFile.safeParse(json);
  if (!parsed.success) {
    const problem = parsed.error.issues[0]!;
    // An unknown key is named as the field itself, so the message points at the typo.
    const segments = problem.code === "unrecognized_keys" && problem.keys.length === 1 ? [...problem.path, problem.keys[0]!] : problem.path;
    const field = segments.length ? segments.map(String).join(".") : "(top level)";
    // A bad username is reported by zod as "Invalid key in record"; the key's own issue says why.
    const message = problem.code === "invalid_key" ? (problem.issues[0]?.message ?? problem.message) : problem.message;
    throw new UserError(`field ${field}: ${message}`, { where: file, fix: fixFor(segments) });
  }
  return parsed.data;
}

function fixFor(segments: readonly PropertyKey[]): string {
  const field = segments.at(-1);
  if (segments.length === 0) return `the file must be {"format": 1, "users": {...}}`;
  if (field === "format") return `set "format" to 1`;
  if (segments[0] === "users" && segments.length === 2) return "usernames are 1 to 64 letters, digits, '.', '_' or '-': rename or remove that user";
  if (field === "hash") return "set the user's password again with ./bin/ashcast user add NAME --replace";
  if (field === "created") return 'write it as "YYYY-MM-DDTHH:MM:SSZ"';
  if (segments.includes("roles")) return `give "roles": ["operator"]`;
  return `remove that field: a user is {"hash", "created", "roles"}`;
}

/** Replaces the file in one rename: a temporary file beside it, mode 0600, flushed before the rename. */
export async function writeUsers(file: string, users: UsersFile): Promise<void> {
  const checked = UsersFile.parse(users);
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(checked, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw new UserError(`cannot write the users file: ${(error as Error).message}`, { where: file, fix: "check that the directory exists and is writable by this account", cause: error });
  }
}

/** How long a change waits for another one (argon2 hashing is done before the lock is taken, so a holder is quick). */
const USERS_LOCK_WAIT_MS = 10_000;

/**
 * Reads, changes and writes the users file under a lock (`<file>.lock`), so two changes made at once
 * (two `ashcast user add`, or the server upgrading a hash) never lose one another's users.
 * `change` returns false to write nothing. `onWait` hears once that another process holds the lock.
 */
export async function updateUsers(file: string, change: (current: UsersFile) => boolean, onWait?: (pid: number) => void): Promise<UsersFile> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const lockPath = `${file}.lock`;
  const lock = await waitForLock(lockPath, `.${path.basename(file)}.lock-`, { waitMs: USERS_LOCK_WAIT_MS, ...(onWait ? { onWait } : {}) });
  if (lock.kind === "held") {
    throw new UserError(`the users file is being changed by process ${lock.pid} and stayed locked for ${USERS_LOCK_WAIT_MS / 1000} s`, { where: lockPath, fix: "try again; if no ashcast process is running, remove the lock file" });
  }
  try {
    const current = await loadUsers(file);
    if (change(current)) await writeUsers(file, current);
    return current;
  } finally {
    await lock.release();
  }
}

export interface ServerUsers {
  users: UsersFile["users"];
  /** The current secret: new hashes are made with it. Undefined only when there are no users. */
  pepper: Pepper | undefined;
  /** Earlier secrets (AUTH_HASH_SALT_PREVIOUS), to verify hashes made before a rotation. */
  previous: Pepper[];
}

/**
 * What the server needs at start. Users without `AUTH_HASH_SALT` could never sign in (and a service that
 * started anyway would look healthy while refusing everyone): refuse to start instead. The same for
 * users whose hash names a secret version that is configured neither as current nor as previous.
 */
export async function loadUsersForServer(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ServerUsers> {
  const { users } = await loadUsers(file);
  const pepper = pepperFromEnvironment(env);
  const previous = previousPeppersFromEnvironment(env, pepper);
  const count = Object.keys(users).length;
  if (count > 0 && !pepper) {
    throw new UserError(`the service refuses to start: ${file} has ${count} user(s) but AUTH_HASH_SALT is not set`, {
      where: "AUTH_HASH_SALT",
      fix: "set AUTH_HASH_SALT (and AUTH_HASH_SALT_VERSION if not 1) in the service's environment to the secret the passwords were added with",
    });
  }
  const known = new Set([pepper?.version, ...previous.map((p) => p.version)]);
  const stranded = Object.entries(users).filter(([, user]) => !known.has(parseStoredHash(user.hash)?.version));
  if (stranded.length > 0) {
    const versions = [...new Set(stranded.map(([, user]) => parseStoredHash(user.hash)?.version))].join(", ");
    throw new UserError(`the service refuses to start: the passwords of ${stranded.map(([name]) => name).join(", ")} were made with secret version ${versions}, which is neither AUTH_HASH_SALT_VERSION (${pepper!.version}) nor in AUTH_HASH_SALT_PREVIOUS`, {
      where: file,
      fix: `add the old secret to AUTH_HASH_SALT_PREVIOUS as version:secret, or set those passwords again with ./bin/ashcast user add NAME --replace`,
    });
  }
  return { users, pepper, previous };
}
