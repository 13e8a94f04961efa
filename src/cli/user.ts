/**
 * `ashcast user add | remove | list`: edits the users file. The password comes from stdin (one line) or,
 * on a terminal, from a prompt without echo asked twice; never from argv, which other users can read.
 */
import { hashPassword, parseStoredHash, pepperFromEnvironment } from "../auth/passwords.ts";
import { loadUsers, resolveUsersFile, ROLES, updateUsers, Username, type Role } from "../auth/users.ts";
import { formatError, UserError } from "../errors.ts";

/** Enough for a 1024-byte password and its newline; anything longer is not a password. */
const MAX_STDIN_BYTES = 4096;

export interface UserFlags {
  users?: string;
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const waitingFor = (pid: number) => process.stderr.write(`waiting: process ${pid} is changing the users file\n`);
/** A refusal (user exists, no such user) is reported here and answered false: main exits 1, not 2. */
const refuse = (error: UserError): false => {
  process.stderr.write(`${formatError(error)}\n`);
  return false;
};

function checkName(name: string): void {
  if (!Username.safeParse(name).success) throw new UserError(`"${name}" is not a usable username`, { where: "NAME", fix: "use 1 to 64 letters, digits, '.', '_' or '-' (not __proto__)" });
}

/** The service reads the users file when it starts (the spec's rule): a change does not reach a running one by itself. */
const IN_EFFECT = "a running service signs users in from the file as it was at its start: restart it (or SIGHUP serve --workers 2 or more) for this to take effect; tokens already issued stay valid until they expire";

export async function userAdd(name: string, flags: UserFlags & { role: string; replace?: boolean }, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  checkName(name);
  if (!(ROLES as readonly string[]).includes(flags.role)) throw new UserError(`"${flags.role}" is not a role`, { where: "--role", fix: `use one of ${ROLES.join(", ")}` });
  const file = resolveUsersFile(flags.users, env);
  // Everything that can refuse is checked before the password is asked for.
  const pepper = pepperFromEnvironment(env);
  if (!pepper) throw new UserError("a password cannot be hashed without the server's secret", { where: "AUTH_HASH_SALT", fix: "set AUTH_HASH_SALT to the secret the service runs with (at least 16 bytes, e.g. from `openssl rand -base64 32`)" });
  const existing = await loadUsers(file);
  const exists = Object.hasOwn(existing.users, name);
  if (exists && !flags.replace) return refuse(new UserError(`user "${name}" exists already`, { where: file, fix: "add --replace to set a new password and roles, or choose another name" }));
  const password = await readPassword();
  const hash = await hashPassword(password, pepper);
  // Read again under the lock: a change made while the password was typed, or by a concurrent add, is kept.
  let addedMeanwhile = false;
  await updateUsers(file, (current) => {
    addedMeanwhile = !exists && Object.hasOwn(current.users, name);
    if (addedMeanwhile && !flags.replace) return false;
    current.users[name] = { hash, created: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"), roles: [flags.role as Role] };
    return true;
  }, waitingFor);
  if (addedMeanwhile && !flags.replace) return refuse(new UserError(`user "${name}" was added by someone else meanwhile`, { where: file, fix: "add --replace to set a new password and roles, or choose another name" }));
  out(`${exists || addedMeanwhile ? "replaced" : "added"} user ${name} (${flags.role}) in ${file}`);
  out(IN_EFFECT);
  return true;
}

export async function userRemove(name: string, flags: UserFlags, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const file = resolveUsersFile(flags.users, env);
  let found = false;
  await updateUsers(file, (current) => {
    found = Object.hasOwn(current.users, name);
    delete current.users[name];
    return found;
  }, waitingFor);
  if (!found) return refuse(new UserError(`there is no user "${name}"`, { where: file, fix: "see the users with ./bin/ashcast user list" }));
  out(`removed user ${name} from ${file}`);
  out(IN_EFFECT);
  return true;
}

/** Names, roles and the secret version of each hash: hashes stay in the file. */
export async function userList(flags: UserFlags, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const file = resolveUsersFile(flags.users, env);
  const { users } = await loadUsers(file);
  const names = Object.keys(users).sort();
  if (names.length === 0) out(`no users in ${file}`);
  // The secret version shows how far a rotation has got: every user on the new one, the old secret can go.
  for (const name of names) out(`${name}\t${users[name]!.roles.join(",")}\tsecret version ${parseStoredHash(users[name]!.hash)?.version ?? "?"}`);
}

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden("Password: ");
    const second = await promptHidden("Password again: ");
    if (first !== second) throw new UserError("the two passwords differ", { where: "password", fix: "run the command again and type the same password twice" });
    return first;
  }
  return passwordFromStdin();
}

/** One line: the trailing newline (\n or \r\n) is removed, anything else is part of the password. */
async function passwordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_STDIN_BYTES) throw new UserError(`more than ${MAX_STDIN_BYTES} bytes on stdin`, { where: "stdin", fix: "give the password alone, as one line" });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
  if (/[\r\n]/.test(text)) throw new UserError("stdin holds more than one line", { where: "stdin", fix: "give the password alone, as one line" });
  if (text === "") throw new UserError("no password on stdin", { where: "stdin", fix: "pipe the password in, e.g. from a password manager, or run the command in a terminal to be asked for it" });
  return text;
}

/** Reads a line from the terminal in raw mode, echoing nothing; Ctrl-C aborts. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (error?: UserError) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish();
        if (char === "\u0003") return finish(new UserError("interrupted", { where: "password", fix: "run the command again to set the password" }));
        if (char === "\u007f" || char === "\b") typed = [...typed].slice(0, -1).join("");
        else typed += char;
      }
    };
    stdin.on("data", onData);
  });
}
