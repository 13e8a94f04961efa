/**
 * The reference point between nginx and ashcast in bench/serve/run.ts: bare `node:http` answering one
 * Buffer held in memory with a precomputed ETag and the same response headers as ashcast's `/`
 * (no framework, no routing, no negotiation). It tells how much of the gap to nginx is Node itself and
 * how much is the code above it.
 *
 *   node_modules/.bin/node bench/serve/bare.ts --file dist/runs/<dir>/model.json --etag '"abc"' --port 8090
 */
import { createServer } from "node:http";
import { readFileSync } from "node:fs";

function argument(name: string): string {
  const at = process.argv.indexOf(name);
  const value = at >= 0 ? process.argv[at + 1] : undefined;
  if (value === undefined) throw new Error(`bare.ts: ${name} is required (--file F --etag E --port P [--modified HTTPDATE])`);
  return value;
}

const body = readFileSync(argument("--file"));
const etag = argument("--etag");
const port = Number(argument("--port"));
const modifiedAt = process.argv.indexOf("--modified");
const lastModified = modifiedAt >= 0 ? (process.argv[modifiedAt + 1] ?? new Date().toUTCString()) : new Date().toUTCString();
const maxAge = 60;

const server = createServer((req, res) => {
  const headers: Record<string, string> = {
    etag,
    "last-modified": lastModified,
    "cache-control": `public, max-age=${maxAge}`,
    expires: new Date(Date.now() + maxAge * 1000).toUTCString(),
    vary: "Accept, Accept-Encoding",
    "access-control-allow-origin": "*",
  };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers["content-type"] = "application/json;charset=UTF-8";
  headers["content-length"] = String(body.length);
  res.writeHead(200, headers);
  res.end(body);
});

server.listen(port, "127.0.0.1", () => process.stdout.write(`bare node:http on 127.0.0.1:${port}\n`));
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
