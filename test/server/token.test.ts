/**
 * POST /token and /login over a real socket: a users file made with the real argon2 code, the secrets
 * given as the environment, tokens checked with the real verifier.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/auth/passwords.ts";
import { createTokenVerifier, TOKEN_AUDIENCE, TOKEN_ISSUER, TOKEN_LIFETIME_SECONDS } from "../../src/auth/tokens.ts";
import { writeUsers } from "../../src/auth/users.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { MAX_TOKEN_REQUEST_BYTES } from "../../src/server/tokenEndpoint.ts";
import { BuildReport } from "../../src/contract/buildReport.ts";
import { addRun, buildSite, http, makeSite, type RawResponse, type Site } from "./serverFixtures.ts";

const SECRET = "pepper-for-tests-0123456789";
const KEY = Buffer.alloc(32, 7);
const ENV = { AUTH_HASH_SALT: SECRET, ASHCAST_TOKEN_KEY: KEY.toString("base64url") };
const FORM = { "content-type": "application/x-www-form-urlencoded" };

let dir: string;
let usersFile: string;
let server: RunningServer;
let site: Site;

beforeAll(async () => {
  site = await makeSite("ashcast-token-site-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-token-"));
  usersFile = path.join(dir, "users.json");
  const pepper = { version: "1", secret: Buffer.from(SECRET) };
  await writeUsers(usersFile, {
    format: 1,
    users: {
      alice: { hash: await hashPassword("correct horse", pepper), created: "2026-11-23T12:00:00Z", roles: ["operator"] },
      bob: { hash: await hashPassword("battery staple", pepper), created: "2026-11-23T12:00:00Z", roles: ["operator"] },
      carol: { hash: await hashPassword("tr0ub4dor", pepper), created: "2026-11-23T12:00:00Z", roles: ["operator"] },
    },
  });
  server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ENV });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
  await site?.cleanup();
});

const post = (target: string, body: string, headers: Record<string, string> = FORM) => http(server, target, { method: "POST", headers, body });
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

function expectNoStore(res: RawResponse) {
  expect(res.headers["cache-control"]).toBe("no-store");
  expect(res.headers.pragma).toBe("no-cache");
}

describe("POST /token and /login", () => {
  it("answer a right password with a bearer token for the user and their roles, never cached", async () => {
    const verifier = createTokenVerifier({ key: KEY, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE });
    for (const target of ["/token", "/login"]) {
      const forms: Array<Record<string, string>> = [{ username: "alice", password: "correct horse" }, { grant_type: "password", username: "alice", password: "correct horse" }];
      for (const fields of forms) {
        const res = await post(target, form(fields));
        expect(res.status, target).toBe(200);
        expect(res.headers["content-type"]).toBe("application/json;charset=UTF-8");
        expectNoStore(res);
        const body = res.json() as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
        expect(body).toMatchObject({ token_type: "Bearer", expires_in: TOKEN_LIFETIME_SECONDS });
        const checked = await verifier.verify(`Bearer ${body.access_token as string}`);
        expect(checked).toMatchObject({ ok: true, subject: "alice", roles: ["operator"] });
      }
    }
  });

  it("give an unknown user and a wrong password the same answer", async () => {
    const wrong = await post("/token", form({ username: "bob", password: "wrong" }));
    const unknown = await post("/token", form({ username: "mallory", password: "wrong" }));
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(400);
      expectNoStore(res);
      expect(res.json()).toEqual({ error: "invalid_grant", error_description: "the username or password is wrong" });
    }
    expect(wrong.body.equals(unknown.body)).toBe(true);
  });

  it("refuse what is not a password grant in a form, with the RFC 6749 error and never a 500", async () => {
    const cases: Array<[string, string, Record<string, string>, number, string]> = [
      ["json body", JSON.stringify({ username: "alice", password: "correct horse" }), { "content-type": "application/json" }, 415, "invalid_request"],
      ["no content type", "username=alice&password=x", {}, 415, "invalid_request"],
      ["multipart", "--x\r\n", { "content-type": "multipart/form-data; boundary=x" }, 415, "invalid_request"],
      ["no password", form({ username: "alice" }), FORM, 400, "invalid_request"],
      ["empty username", form({ username: "", password: "x" }), FORM, 400, "invalid_request"],
      ["username twice", "username=alice&username=bob&password=x", FORM, 400, "invalid_request"],
      ["other grant", form({ grant_type: "client_credentials", username: "alice", password: "x" }), FORM, 400, "unsupported_grant_type"],
      ["not UTF-8", "username=alice&password=%FF", FORM, 400, "invalid_grant"],
      ["raw bytes not UTF-8", Buffer.from([0x75, 0x3d, 0xff]).toString("latin1"), FORM, 400, "invalid_request"],
      ["too large", `username=alice&password=${"x".repeat(MAX_TOKEN_REQUEST_BYTES)}`, FORM, 413, "invalid_request"],
    ];
    for (const [name, body, headers, status, error] of cases) {
      const res = await post("/token", body, headers);
      expect(res.status, name).toBe(status);
      expectNoStore(res);
      expect((res.json() as { error: string }).error, name).toBe(error);
    }
  });

  it("slow an account down after repeated failures, with 429 and Retry-After, and let the right password in after the wait", async () => {
    // Three failures are free; the fourth makes the account wait 1 s.
    for (let i = 0; i < 4; i++) expect((await post("/token", form({ username: "carol", password: `guess ${i}` }))).status).toBe(400);
    const blocked = await post("/token", form({ username: "carol", password: "tr0ub4dor" }));
    expect(blocked.status).toBe(429);
    expect(blocked.headers["retry-after"]).toBe("1");
    expect(blocked.json()).toEqual({ error: "invalid_request", error_description: "too many failed logins for this account; try again in 1 s" });
    // Another account is not slowed down.
    expect((await post("/token", form({ username: "alice", password: "correct horse" }))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await post("/token", form({ username: "carol", password: "tr0ub4dor" }))).status).toBe(200);
  });

  it("count guesses sent at once before any is checked: only the free ones and the one that starts the wait are checked", async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post("/token", form({ username: "trent", password: `guess ${i}` }))));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array<number>(4).fill(400), ...Array<number>(8).fill(429)]);
  });

  it("answer other methods with 405 and Allow (mutating ones once signed in), and a CORS preflight with 204", async () => {
    const bearer = { authorization: `Bearer ${await tokenFor("alice", "correct horse")}` };
    for (const method of ["GET", "HEAD", "PUT", "DELETE"]) {
      const res = await http(server, "/token", { method, headers: method === "GET" || method === "HEAD" ? {} : bearer });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe("POST, OPTIONS");
    }
    expect((await http(server, "/token", { method: "PUT" })).status).toBe(401);
    const preflight = await http(server, "/login", { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-methods"]).toBe("POST");
  });
});

async function tokenFor(username: string, password: string): Promise<string> {
  const res = await post("/token", form({ username, password }));
  expect(res.status).toBe(200);
  return (res.json() as { access_token: string }).access_token;
}

describe("protected addresses", () => {
  it("GET /datasets needs an operator's token: 401 with a Bearer challenge without one, the build report with one", async () => {
    const anonymous = await http(server, "/datasets");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toBe('Bearer realm="ashcast"');
    expect(anonymous.headers["content-type"]).toBe("application/problem+json");
    const forged = await http(server, "/datasets", { headers: { authorization: "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9." } });
    expect(forged.status).toBe(401);
    expect(forged.headers["www-authenticate"]).toMatch(/^Bearer realm="ashcast", error="invalid_token", error_description="/);
    const token = await tokenFor("alice", "correct horse");
    const signedIn = await http(server, "/datasets", { headers: { authorization: `Bearer ${token}` } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers["cache-control"]).toBe("no-store"); // an answer behind sign-in is never cached
    const report = BuildReport.parse(signedIn.json());
    expect(report.runs.map((run) => [run.folder, run.status])).toEqual([["2024-05-01-hekla", "published"]]);
  });

  it("answers a signed-in operator's other methods on the data routes with 405 and Allow", async () => {
    const bearer = { authorization: `Bearer ${await tokenFor("alice", "correct horse")}` };
    for (const route of ["/", "/.json", "/reftimes", "/resources", "/changelog", "/healthz", "/openapi.json", "/doc/TermsOfService"]) {
      for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
        const res = await http(server, route, { method, headers: bearer });
        expect(res.status, `${method} ${route}`).toBe(405);
        expect(res.headers.allow, `${method} ${route}`).toBe("GET, HEAD, OPTIONS");
      }
    }
  });

  it("gives every spelling of a protected path the same answer", async () => {
    for (const spelling of ["//datasets", "/datasets/", "/./datasets", "/x/../datasets", "/%64atasets", "/%2564atasets", "/DATASETS/../datasets"]) {
      const res = await http(server, spelling, { method: spelling.length % 2 ? "GET" : "HEAD" });
      expect(res.status, spelling).toBe(401);
    }
  });

  it("answers 403 to a valid token without the operator role", async () => {
    const { createTokenIssuer } = await import("../../src/auth/tokens.ts");
    const issuer = createTokenIssuer({ key: KEY, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, lifetimeSeconds: 60 });
    const { access_token } = await issuer.issue("viewer", []);
    const res = await http(server, "/datasets", { headers: { authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(403);
    expect((res.json() as { detail: string }).detail).toBe("this address needs the role operator, which viewer does not have");
  });
});

describe("answers behind sign-in", () => {
  it("a data route the access rules protect is answered private to the operator: no shared cache may keep it; public routes stay public", async () => {
    const rulesFile = path.join(dir, "protect-reftimes.json");
    await writeFile(rulesFile, JSON.stringify({ format: 1, rules: [{ method: "GET", path: "/reftimes", protected: true, role: "operator" }] }));
    const guarded = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: ENV, accessRulesFile: rulesFile });
    try {
      const bearer = { authorization: `Bearer ${await tokenFor("alice", "correct horse")}` };
      const reftimes = await http(guarded, "/reftimes", { headers: bearer });
      expect(reftimes.status).toBe(200);
      expect(reftimes.headers["cache-control"]).toBe("private, max-age=60");
      expect(reftimes.headers.vary).toMatch(/^(Accept-Encoding, )?Authorization$/); // a browser's cache keeps it for this token only
      const open = await http(guarded, "/.json", { headers: bearer });
      expect(open.status).toBe(200);
      expect(open.headers["cache-control"]).toMatch(/^public, .*s-maxage=/); // the same for everyone, token or not
      expect(open.headers.vary ?? "").not.toMatch(/Authorization/);
    } finally {
      await guarded.close();
    }
  });
});

describe("GET /config", () => {
  it("shows the effective configuration to anyone, and none of its secrets", async () => {
    const res = await http(server, "/config");
    expect(res.status).toBe(200);
    const config = res.json() as Record<string, any>;
    expect(config.base).toBe("/volcanicashforecast/0.1");
    expect(config.signIn).toEqual({ configured: true, tokenIssuer: TOKEN_ISSUER, tokenAudience: TOKEN_AUDIENCE, tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS });
    expect(config.accessRules.source).toBe("defaults");
    expect(config.accessRules.rules).toContainEqual({ method: "GET", path: "/config", protected: false });
    // POST /config changes it with no publish to purge it: no cache may reuse it without asking (its ETag makes that a 304).
    expect(res.headers["cache-control"]).toBe("public, max-age=0");
    expect((await http(server, "/config", { headers: { "if-none-match": res.headers.etag! } })).status).toBe(304);
    const text = res.text();
    for (const secret of [SECRET, ENV.ASHCAST_TOKEN_KEY, KEY.toString("base64"), "argon2", usersFile, "correct horse"]) expect(text).not.toContain(secret);
    expect((await http(server, "/config", { method: "POST" })).status).toBe(401);
  });
});

describe("POST /withdraw", () => {
  it("moves the reftime's folder to the archive, says so in the audit log, and the next build withdraws the run", async () => {
    const runsSite = await makeSite("ashcast-withdraw-");
    try {
      await addRun(runsSite, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
      await addRun(runsSite, "2024-05-02-katla", "2024-05-02T00:00:00Z", "Rehearsal");
      await buildSite(runsSite, "2026-11-23T12:00:00Z");
      const audit = path.join(runsSite.root, "audit.log");
      const operatorServer = await startServer({ distDir: runsSite.distDir, port: 0, host: "127.0.0.1", usersFile, env: ENV, operator: { runsDir: runsSite.runsDir, auditLogFile: audit } });
      try {
        const token = (await post("/token", form({ username: "alice", password: "correct horse" }))).json() as { access_token: string };
        const bearer = { authorization: `Bearer ${token.access_token}` };
        expect((await http(operatorServer, "/withdraw?reftime=2024-05-01T12:00:00Z", { method: "POST" })).status).toBe(401);
        expect((await http(operatorServer, "/withdraw", { method: "GET", headers: bearer })).status).toBe(405);
        expect((await http(operatorServer, "/withdraw", { method: "POST", headers: bearer })).status).toBe(400);
        expect((await http(operatorServer, "/withdraw?reftime=2024-05-03T00:00:00Z", { method: "POST", headers: bearer })).status).toBe(404);

        // A copy of the run arrived after the last build: withdrawn too, or the next build would publish it again.
        const again = await addRun(runsSite, "2024-05-01-hekla-again", "2024-05-01T12:00:00Z");
        // Its run.json saved with a byte order mark, as the build accepts it.
        await writeFile(path.join(again, "run.json"), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), await readFile(path.join(again, "run.json"))]));
        // Any spelling of the instant, as everywhere else.
        const done = await http(operatorServer, "/withdraw?reftime=2024-05-01T14:00:00%2B02:00", { method: "POST", headers: bearer });
        expect(done.status).toBe(202);
        expect(done.json()).toEqual({ reftime: "2024-05-01T12:00:00Z", withdrawn: ["2024-05-01-hekla", "2024-05-01-hekla-again"], note: "the next build publishes the withdrawal" });
        const archive = path.join(runsSite.root, "runs-archive");
        expect(await readdir(runsSite.runsDir)).toEqual(["2024-05-02-katla"]);
        expect((await readdir(archive)).sort()).toEqual([expect.stringMatching(/^2024-05-01-hekla-again\.withdrawn-\d{8}T\d{6}Z$/), expect.stringMatching(/^2024-05-01-hekla\.withdrawn-\d{8}T\d{6}Z$/)]);

        const lines = (await readFile(audit, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as Record<string, string>);
        expect(lines.map(({ who, action, target, outcome }) => ({ who, action, target, outcome }))).toEqual([
          { who: "alice", action: "withdraw", target: "2024-05-03T00:00:00Z", outcome: "refused" },
          { who: "alice", action: "withdraw", target: "2024-05-01T12:00:00Z", outcome: "started" },
          { who: "alice", action: "withdraw", target: "2024-05-01T12:00:00Z", outcome: "done" },
        ]);
        expect(lines.every((line) => !Number.isNaN(Date.parse(line.time!)))).toBe(true);

        const rebuilt = await buildSite(runsSite, "2026-11-23T12:05:00Z");
        expect(rebuilt.events.map((e) => [e.kind, e.reftime])).toEqual([["withdrawn", "2024-05-01T12:00:00Z"]]);
      } finally {
        await operatorServer.close();
      }
    } finally {
      await runsSite.cleanup();
    }
  });

  it("answers 503 where the server does not know runs/ (serve alone)", async () => {
    const token = (await post("/token", form({ username: "alice", password: "correct horse" }))).json() as { access_token: string };
    const res = await http(server, "/withdraw?reftime=2024-05-01T12:00:00Z", { method: "POST", headers: { authorization: `Bearer ${token.access_token}` } });
    expect(res.status).toBe(503);
  });
});

describe("starting with users", () => {
  it("refuses without ASHCAST_TOKEN_KEY or without AUTH_HASH_SALT, naming the variable", async () => {
    const start = (env: Record<string, string>) => startServer({ distDir: path.join(dir, "dist"), port: 0, host: "127.0.0.1", usersFile, env });
    await expect(start({ AUTH_HASH_SALT: SECRET })).rejects.toMatchObject({ where: "ASHCAST_TOKEN_KEY", message: expect.stringContaining("3 user(s) may sign in, but no key is set") });
    await expect(start({ ASHCAST_TOKEN_KEY: ENV.ASHCAST_TOKEN_KEY })).rejects.toMatchObject({ where: "AUTH_HASH_SALT" });
  });
});
