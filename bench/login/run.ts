/**
 * Sign-in timing: does POST /token take as long for an unknown user as for a known user with a wrong
 * password? (security.md, Passwords: same status, body and time; the bar is ±20 %.)
 *
 * A real server on 127.0.0.1 (startServer, real argon2id with the production parameters), one client
 * sending interleaved pairs: an unknown name, then a known user with a wrong password, then the next pair.
 * Each known user and each unknown name is tried once, so the per-account backoff (3 failures) never
 * answers instead of the hash. Wall clock per request on the client; medians and p90 per kind, and their
 * ratio. Writes the section "## Sign-in timing" of docs/benchmarks.md unless --no-write.
 *
 *   npm run bench:login -- [--pairs 60] [--no-write]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { hashPassword } from "../../src/auth/passwords.ts";
import { writeUsers, type UsersFile } from "../../src/auth/users.ts";
import { startServer } from "../../src/server/serve.ts";
import { writeDocsSection } from "../docsSection.ts";

const { values: flags } = parseArgs({ options: { pairs: { type: "string", default: "60" }, "no-write": { type: "boolean", default: false } } });
const pairs = Number(flags.pairs);
const SECRET = "bench-secret-0123456789abcdef";
const root = mkdtempSync(path.join(tmpdir(), "ashcast-bench-login-"));
const usersFile = path.join(root, "users.json");

const users: UsersFile["users"] = {};
for (let i = 0; i < pairs; i++) users[`operator-${i}`] = { hash: await hashPassword(`the right password ${i}`, { version: "1", secret: Buffer.from(SECRET) }), created: "2026-11-23T00:00:00Z", roles: ["operator"] };
await writeUsers(usersFile, { format: 1, users });
const server = await startServer({ distDir: path.join(root, "dist"), port: 0, host: "127.0.0.1", usersFile, env: { AUTH_HASH_SALT: SECRET, ASHCAST_TOKEN_KEY: Buffer.alloc(32, 1).toString("base64") } });
const url = new URL(`${server.url}/token`);

function signIn(username: string, password: string): Promise<{ status: number; ms: number; body: string }> {
  const body = new URLSearchParams({ username, password }).toString();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent: false, headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

// Warm-up: the dummy hash, the JIT, the socket path.
for (let i = 0; i < 3; i++) await signIn(`warm-up-${i}`, "x");
const unknown: number[] = [];
const wrong: number[] = [];
const answers = new Set<string>();
for (let i = 0; i < pairs; i++) {
  const a = await signIn(`nobody-${i}`, `a wrong password ${i}`);
  const b = await signIn(`operator-${i}`, `a wrong password ${i}`);
  if (a.status !== 400 || b.status !== 400) throw new Error(`expected 400 for both, got ${a.status} and ${b.status}`);
  answers.add(a.body).add(b.body);
  unknown.push(a.ms);
  wrong.push(b.ms);
}
await server.close();
rmSync(root, { recursive: true, force: true });

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const ratio = quantile(unknown, 0.5) / quantile(wrong, 0.5);
const rows = [
  ["unknown user", unknown],
  ["known user, wrong password", wrong],
] as const;
const table = [
  "| request | median ms | p90 ms | min ms | max ms |",
  "|---|---:|---:|---:|---:|",
  ...rows.map(([name, values]) => `| ${name} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.9).toFixed(1)} | ${Math.min(...values).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`),
].join("\n");
const verdict = Math.abs(ratio - 1) <= 0.2 ? "within" : "outside";
const section = `## Sign-in timing

\`npm run bench:login -- --pairs ${pairs}\`: POST /token on a real server (argon2id m=19456 KiB, t=2, p=1),
${pairs} interleaved pairs of an unknown name and a known user with a wrong password, each account tried once (no backoff).
${cpus().length} cores, measured ${new Date().toISOString().slice(0, 16)}Z.

${table}

Median unknown / median wrong password: **${ratio.toFixed(2)}** (${verdict} the ±20 % bar of security.md). The two answers'
bodies are identical: ${answers.size === 1 ? "yes" : `no (${answers.size} different bodies)`}.
`;
process.stdout.write(`${section}\n`);
if (!flags["no-write"]) writeDocsSection("## Sign-in timing", section);
