/** One operator, alice, for tests of protected routes: the users file, the secrets, and her bearer token. */
import { hashPassword } from "../../src/auth/passwords.ts";
import { writeUsers } from "../../src/auth/users.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { http } from "../server/serverFixtures.ts";

const SECRET = "pepper-for-tests-0123456789";
/** The server's environment: the pepper alice's hash was made with, and a token key. */
export const OPERATOR_ENV = { AUTH_HASH_SALT: SECRET, ASHCAST_TOKEN_KEY: Buffer.alloc(32, 9).toString("base64url") };

/** A users file holding alice (operator); write it before the server starts, which reads it once. */
export async function writeOperator(usersFile: string): Promise<void> {
  await writeUsers(usersFile, { format: 1, users: { alice: { hash: await hashPassword("correct horse", { version: "1", secret: Buffer.from(SECRET) }), created: "2026-11-23T12:00:00Z", roles: ["operator"] } } });
}

/** Signs alice in (POST /token): the Authorization header to send. */
export async function signInOperator(server: RunningServer): Promise<Record<string, string>> {
  const token = await http(server, "/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=alice&password=correct+horse" });
  return { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
}
