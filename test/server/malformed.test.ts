/**
 * Requests the routers never see, over a raw socket: a target that is not a path, a header block over node's
 * limit, a request line that is not HTTP. Each is a problem (RFC 9457) like every other error, never a bare
 * status line.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server/serve.ts";
import { addRun, buildSite, makeSite, serve, type Site } from "./serverFixtures.ts";

let site: Site;
let server: RunningServer;
beforeAll(async () => {
  site = await makeSite("ashcast-malformed-");
  await addRun(site, "2024-05-01-hekla", "2024-05-01T12:00:00Z");
  await buildSite(site);
  server = await serve(site);
});
afterAll(async () => {
  await server?.close();
  await site?.cleanup();
});

/** Sends raw bytes and reads everything until the server closes the connection (or 5 s). */
function raw(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
    socket.end(request);
  });
}

describe("requests no router sees", () => {
  it.each([
    ["a target that is not a path (OPTIONS *)", "OPTIONS * HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1 t@example.org\r\nConnection: close\r\n\r\n", 400],
    ["a header block over node's limit", `GET /volcanicashforecast/0.1/ HTTP/1.1\r\nHost: x\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`, 431],
    ["a request line that is not HTTP", "HELLO THERE\r\n\r\n", 400],
  ])("%s: a problem body, not a bare status line", async (_what, request, status) => {
    const res = await raw(request);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(res.body)).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  });
});

describe("requests @hono/node-server cannot make a URL of", () => {
  const UA = "User-Agent: t/1 t@example.org\r\nConnection: close\r\n\r\n";
  it.each([
    ["a Host header holding a path", `GET /volcanicashforecast/0.1/healthz HTTP/1.1\r\nHost: example.org/path\r\n${UA}`, /Host header is not a host name/],
    ["a Host header holding a path, on a route the fast path answers", `GET /volcanicashforecast/0.1/reftimes HTTP/1.1\r\nHost: x/../../y\r\n${UA}`, /Host header is not a host name/],
    ["two Host headers", `GET /volcanicashforecast/0.1/reftimes HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n${UA}`, /two Host headers/],
    ["a backslash in the path", `GET /volcanicashforecast/0.1\\healthz HTTP/1.1\r\nHost: example.org\r\n${UA}`, /backslash/],
  ])("%s: a 400 problem that says what is wrong", async (_what, request, detail) => {
    const res = await raw(request);
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, title: "Bad Request", detail: expect.stringMatching(detail) });
  });

  it("a HEAD of the same gets the status and no body", async () => {
    const res = await raw(`HEAD /volcanicashforecast/0.1/healthz HTTP/1.1\r\nHost: example.org/path\r\nUser-Agent: t/1 t@example.org\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(res.body).toBe("");
  });
});

