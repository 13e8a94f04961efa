/**
 * A fixed number of keep-alive GET requests, 8 at a time, for bench/serve/instructions.ts (where a count of
 * requests, not a duration, is what instructions are divided by). Exits 1 unless every answer had the status.
 *
 *   node bench/serve/fixedLoad.ts URL COUNT STATUS [IF-NONE-MATCH]
 */
import http from "node:http";

const [url, countText, statusText, etag] = process.argv.slice(2);
const count = Number(countText);
const expected = Number(statusText);
if (!url || !Number.isInteger(count) || !Number.isInteger(expected)) throw new Error("usage: node bench/serve/fixedLoad.ts URL COUNT STATUS [IF-NONE-MATCH]");

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const headers = { "user-agent": "bench/1 ops@example.org", ...(etag ? { "if-none-match": etag } : {}) };
const statuses = new Map<number, number>();
const one = () =>
  new Promise<void>((resolve, reject) => {
    http
      .get(url, { agent, headers }, (response) => {
        response.resume();
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          resolve();
        });
      })
      .on("error", reject);
  });
let started = 0;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (started++ < count) await one();
}));
agent.destroy();
if (statuses.get(expected) !== count) {
  console.error(`expected ${count} × ${expected}, got ${JSON.stringify(Object.fromEntries(statuses))}`);
  process.exitCode = 1;
}
