/**
 * HTTPS only (security.md, "HTTPS"; spec, Limits and Errors rule 1), with real TLS: a certificate made
 * by openssl for this test, and real clients (curl and node's https). Direct TLS with a plain-HTTP
 * listener that redirects; behind a TLS-terminating proxy, whose X-Forwarded-Proto / Forwarded is
 * believed only from its address; neither configured: loopback only.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { checkClearBinding, isLoopback } from "../../src/server/transport.ts";
import { addRun, buildSite, expectProblem, header, http, makeSite, serve, type Site } from "../server/serverFixtures.ts";
import { trafficFor, UA } from "./trafficFixtures.ts";

const run = promisify(execFile);
const AGENT = UA["user-agent"];
let site: Site;
let cert: string;
let key: string;
const servers: RunningServer[] = [];

beforeAll(async () => {
  site = await makeSite("ashcast-https-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
  cert = path.join(site.root, "cert.pem");
  key = path.join(site.root, "key.pem");
  await run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await site.cleanup();
});

async function started(options: Parameters<typeof serve>[1]): Promise<RunningServer> {
  const server = await serve(site, options);
  servers.push(server);
  return server;
}

/** curl's status line and headers (lower-cased names) of one request. */
async function curl(args: string[]): Promise<{ status: number; headers: Record<string, string> }> {
  const { stdout } = await run("curl", ["-sS", "-o", "/dev/null", "-D", "-", "-A", AGENT, ...args]);
  const blocks = stdout.trim().split(/\r?\n\r?\n/);
  const last = blocks[blocks.length - 1]!.split(/\r?\n/);
  const headers: Record<string, string> = {};
  for (const line of last.slice(1)) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(last[0]!.split(" ")[1]), headers };
}

describe("direct TLS, with a plain-HTTP listener that redirects", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await started({ tls: { certFile: cert, keyFile: key, httpPort: 0 }, traffic: trafficFor(site) });
  });

  it("serves HTTPS to curl, with Strict-Transport-Security of a year or more", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
    const res = await curl(["--cacert", cert, `${server.url}/reftimes`]);
    expect(res.status).toBe(200);
    expect(Number(/^max-age=(\d+)/.exec(res.headers["strict-transport-security"] ?? "")?.[1])).toBeGreaterThanOrEqual(31536000);
    // Refusals over HTTPS carry it too (they are HTTPS answers).
    const anonymous = await run("curl", ["-sS", "-o", "/dev/null", "-D", "-", "-H", "User-Agent:", "--cacert", cert, `${server.url}/`]);
    expect(anonymous.stdout).toMatch(/^HTTP\/1\.1 429/);
    expect(anonymous.stdout.toLowerCase()).toContain("strict-transport-security: max-age=31536000");
  });

  it("serves HTTPS to node's https client, checking the certificate", async () => {
    const ca = await readFile(cert);
    const answer = await new Promise<{ status: number; hsts: string | undefined; body: string }>((resolve, reject) => {
      const req = httpsRequest(`${server.url}/`, { ca, headers: UA }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, hsts: res.headers["strict-transport-security"], body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.hsts).toBe("max-age=31536000");
    expect(JSON.parse(answer.body)).toHaveProperty("meta");
    // A client that does not trust the certificate is refused by the handshake (real TLS, not a stub).
    await expect(run("curl", ["-sS", "-A", AGENT, `${server.url}/`])).rejects.toThrow(/certificate/i);
  });

  it("redirects plain-HTTP GET and HEAD with 301 to the same host, path and query over https", async () => {
    const plainUrl = server.httpUrl!;
    expect(plainUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const httpsPort = new URL(server.url).port;
    const target = `/volcanicashforecast/0.1/?reftime=2024-05-01T12:00:00Z&cache=1`;
    const get = await curl([`${new URL(plainUrl).origin}${target}`]);
    expect(get.status).toBe(301);
    expect(get.headers.location).toBe(`https://127.0.0.1:${httpsPort}${target}`);
    expect(get.headers["strict-transport-security"]).toBeUndefined();
    expect(get.headers["cache-control"]).toBe("public, max-age=3600");
    expect(get.headers["surrogate-key"]).toBe("documents");
    const head = await curl(["-I", "-H", "Host: ash.example.org", `${new URL(plainUrl).origin}/volcanicashforecast/0.1/reftimes?x=%2F`]);
    expect(head.status).toBe(301);
    expect(head.headers.location).toBe(`https://ash.example.org:${httpsPort}/volcanicashforecast/0.1/reftimes?x=%2F`);
    // A Host that is not a host name (a path, a user part) is refused, never put into a Location.
    for (const host of ["ash.example.org/evil", "user@evil.example", "evil.example:99999"]) {
      expectProblem(await http(plainUrl, "/volcanicashforecast/0.1/", { headers: { ...UA, host } }), 400);
    }
    const v6 = await http(plainUrl, "/volcanicashforecast/0.1/", { headers: { ...UA, host: "[::1]:8080" } });
    expect(header(v6, "location")).toBe(`https://[::1]:${httpsPort}/volcanicashforecast/0.1/`);
    // Following it ends on HTTPS with the data.
    const followed = await curl(["-L", "--cacert", cert, `${plainUrl}/reftimes`]);
    expect(followed.status).toBe(200);
    expect(followed.headers["strict-transport-security"]).toBe("max-age=31536000");
  });

  it("refuses plain-HTTP requests that carry credentials with 403, never redirecting them", async () => {
    const origin = new URL(server.httpUrl!).origin;
    for (const args of [
      ["-d", "username=alice&password=secret", `${origin}/volcanicashforecast/0.1/token`],
      ["-d", "username=alice&password=secret", `${origin}/volcanicashforecast/0.1/login`],
      ["-H", "Authorization: Bearer abc.def.ghi", `${origin}/volcanicashforecast/0.1/datasets`],
      ["-H", "Authorization: Bearer abc.def.ghi", `${origin}/volcanicashforecast/0.1/`],
      // A GET with a body (a form sent with the wrong method) carries its secret in clear too.
      ["-X", "GET", "-d", "username=alice&password=secret", `${origin}/volcanicashforecast/0.1/token`],
    ]) {
      const res = await curl(args);
      expect(res.status).toBe(403);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers["strict-transport-security"]).toBeUndefined();
      expect(res.headers["cache-control"]).toBe("no-store");
    }
    expectProblem(await http(server.httpUrl!, "/volcanicashforecast/0.1/token", { method: "POST", headers: { ...UA, "content-type": "application/x-www-form-urlencoded" }, body: "username=a&password=b" }), 403);
  });

  it("refuses a certificate that has expired or is not valid yet, at start, naming --tls-cert and its date", async () => {
    const dir = path.join(site.root, "dated");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "index.txt"), "");
    await writeFile(path.join(dir, "serial"), "01\n");
    await writeFile(path.join(dir, "ca.cnf"), `[ca]\ndefault_ca = own\n[own]\ndatabase = ${dir}/index.txt\nunique_subject = no\nnew_certs_dir = ${dir}\nserial = ${dir}/serial\ndefault_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n`);
    const datedKey = path.join(dir, "key.pem");
    await run("openssl", ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", datedKey, "-out", path.join(dir, "req.csr"), "-subj", "/CN=localhost"]);
    /** A certificate for datedKey valid from `start` to `end` (openssl's YYYYMMDDHHMMSSZ), signed by itself. */
    const dated = async (name: string, start: string, end: string) => {
      const file = path.join(dir, name);
      await run("openssl", ["ca", "-config", path.join(dir, "ca.cnf"), "-selfsign", "-keyfile", datedKey, "-in", path.join(dir, "req.csr"), "-startdate", start, "-enddate", end, "-batch", "-notext", "-out", file]);
      return file;
    };
    const expired = await dated("expired.pem", "20200101000000Z", "20200201000000Z");
    await expect(serve(site, { tls: { certFile: expired, keyFile: datedKey } })).rejects.toThrow(expect.objectContaining({ where: "--tls-cert", message: expect.stringContaining("expired on 2020-02-01T00:00:00.000Z") }));
    const future = await dated("future.pem", "20990101000000Z", "20990201000000Z");
    await expect(serve(site, { tls: { certFile: future, keyFile: datedKey } })).rejects.toThrow(expect.objectContaining({ where: "--tls-cert", message: expect.stringContaining("valid only from 2099-01-01T00:00:00.000Z") }));
  });

  it("refuses a certificate and key that do not belong together, at start", async () => {
    const otherKey = path.join(site.root, "other-key.pem");
    await run("openssl", ["genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", otherKey]);
    await expect(serve(site, { tls: { certFile: cert, keyFile: otherKey } })).rejects.toThrow(/cannot be used/);
    await expect(serve(site, { tls: { certFile: path.join(site.root, "none.pem"), keyFile: key } })).rejects.toThrow(UserError);
  });
});

describe("behind a TLS-terminating proxy", () => {
  it("believes X-Forwarded-Proto from a trusted proxy: https is served with HSTS, http is redirected or refused", async () => {
    const server = await started({ traffic: trafficFor(site, { trustedProxies: ["127.0.0.1"] }) });
    const secure = await http(server, "/reftimes", { headers: { ...UA, "x-forwarded-proto": "https" } });
    expect(secure.status).toBe(200);
    expect(header(secure, "strict-transport-security")).toBe("max-age=31536000");
    const clear = await http(server, "/reftimes?a=1", { headers: { ...UA, host: "ash.example.org", "x-forwarded-proto": "http" } });
    expect(clear.status).toBe(301);
    expect(header(clear, "location")).toBe("https://ash.example.org/volcanicashforecast/0.1/reftimes?a=1");
    expect(clear.headers["strict-transport-security"]).toBeUndefined();
    // No scheme said: not known to be HTTPS, so not served as such.
    expect((await http(server, "/reftimes", { headers: UA })).status).toBe(301);
    expectProblem(await http(server, "/token", { method: "POST", headers: { ...UA, "x-forwarded-proto": "http" }, body: "username=a&password=b" }), 403);
  });

  it("reads the scheme from Forwarded when the proxies are configured to write it", async () => {
    const server = await started({ traffic: trafficFor(site, { trustedProxies: ["127.0.0.1"], forwardedHeader: "forwarded" }) });
    expect((await http(server, "/reftimes", { headers: { ...UA, forwarded: "for=192.0.2.1;proto=https" } })).status).toBe(200);
    expect((await http(server, "/reftimes", { headers: { ...UA, forwarded: "for=192.0.2.1;proto=http" } })).status).toBe(301);
    // The header it does not write is a client's: ignored.
    expect((await http(server, "/reftimes", { headers: { ...UA, "x-forwarded-proto": "https" } })).status).toBe(301);
  });

  it("ignores a forged X-Forwarded-Proto / Forwarded from a peer that is not a trusted proxy", async () => {
    const server = await started({ traffic: trafficFor(site, { trustedProxies: ["10.9.9.9"] }) });
    const forged = { ...UA, "x-forwarded-proto": "https", forwarded: "for=1.2.3.4;proto=https", host: "ash.example.org" };
    const res = await http(server, "/reftimes", { headers: forged });
    expect(res.status).toBe(301);
    expect(res.headers["strict-transport-security"]).toBeUndefined();
    expectProblem(await http(server, "/token", { method: "POST", headers: forged, body: "username=a&password=b" }), 403);
    expectProblem(await http(server, "/datasets", { headers: { ...forged, authorization: "Bearer x" } }), 403);
  });
});

describe("TLS with a trusted proxy in front (one that re-encrypts)", () => {
  it("believes the proxy's X-Forwarded-Proto: http though the socket is TLS, refusing credentials and redirecting data", async () => {
    const server = await started({ tls: { certFile: cert, keyFile: key }, traffic: trafficFor(site, { trustedProxies: ["127.0.0.1"] }) });
    const token = await curl(["--cacert", cert, "-H", "X-Forwarded-Proto: http", "-d", "username=alice&password=secret", `${server.url}/token`]);
    expect(token.status).toBe(403);
    expect(token.headers["strict-transport-security"]).toBeUndefined();
    expect((await curl(["--cacert", cert, "-H", "X-Forwarded-Proto: http", `${server.url}/reftimes`])).status).toBe(301);
    const secure = await curl(["--cacert", cert, "-H", "X-Forwarded-Proto: https", `${server.url}/reftimes`]);
    expect(secure.status).toBe(200);
    expect(secure.headers["strict-transport-security"]).toBe("max-age=31536000");
    // Without the proxy's word, the TLS socket says HTTPS.
    expect((await curl(["--cacert", cert, `${server.url}/reftimes`])).status).toBe(200);
  });
});

describe("a request without Host", () => {
  it("gets a 400 problem saying so, over TLS (with HSTS) and in clear, where node answered a bare 400", async () => {
    const tls = await started({ tls: { certFile: cert, keyFile: key, httpPort: 0 }, traffic: trafficFor(site) });
    for (const [url, hsts] of [[tls.url, "max-age=31536000"], [`${tls.httpUrl!}`, undefined]] as const) {
      const { stdout } = await run("curl", ["-sS", "-D", "-", "-H", "Host:", "-A", AGENT, ...(url.startsWith("https") ? ["--cacert", cert] : []), `${url}/reftimes`]);
      const [head, body] = stdout.split(/\r?\n\r?\n/);
      expect(head).toMatch(/^HTTP\/1\.1 400/);
      expect(head!.toLowerCase()).toContain("content-type: application/problem+json");
      if (hsts) expect(head!.toLowerCase()).toContain(`strict-transport-security: ${hsts}`);
      else expect(head!.toLowerCase()).not.toContain("strict-transport-security");
      expect(JSON.parse(body!)).toMatchObject({ status: 400, detail: expect.stringMatching(/no Host header/) });
    }
  });
});

describe("neither TLS nor a proxy configured", () => {
  it("serves plain HTTP on loopback, says so at start, and sends no HSTS", async () => {
    const logs: string[] = [];
    const server = await started({ traffic: trafficFor(site), log: (line) => logs.push(line) });
    const res = await http(server, "/reftimes", { headers: UA });
    expect(res.status).toBe(200);
    expect(res.headers["strict-transport-security"]).toBeUndefined();
    expect(logs.some((line) => /plain HTTP on 127\.0\.0\.1 only/.test(line))).toBe(true);
  });

  it("refuses to bind a public address in clear, naming the option and the fix", async () => {
    await expect(serve(site, { host: "0.0.0.0" })).rejects.toThrow(UserError);
    for (const host of ["0.0.0.0", "::", "192.0.2.10", "example.org"]) {
      const error = (() => {
        try {
          checkClearBinding(host, "loopback");
        } catch (e) {
          return e as UserError;
        }
      })();
      expect(error?.where).toBe("--host");
      expect(error?.fix).toMatch(/--tls-cert/);
    }
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]) expect(isLoopback(host)).toBe(true);
    expect(() => checkClearBinding("0.0.0.0", "tls")).not.toThrow();
    expect(() => checkClearBinding("0.0.0.0", "proxy")).not.toThrow();
  });

  it("the CLI refuses too, with exit code 2", async () => {
    const result = await run("./bin/ashcast", ["serve", "--dist", site.distDir, "--host", "0.0.0.0", "--port", "0"], { env: { ...process.env, ASHCAST_TRAFFIC_FILE: "" } }).catch((error: { code: number; stderr: string }) => error);
    expect((result as { code: number }).code).toBe(2);
    expect((result as { stderr: string }).stderr).toMatch(/--host: refusing to serve plain HTTP on 0\.0\.0\.0/);
  });
});
