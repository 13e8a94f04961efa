/**
 * The server for bench/limits/run.ts: startServer on a dist, with the traffic guard (limits from the
 * defaults and ASHCAST_RATE_PER_SECOND / ASHCAST_RATE_BURST) or without it (`--no-guard`), so that the
 * guard's cost is measured on the same code and nothing else differs.
 *
 *   node_modules/.bin/node bench/limits/server.ts --dist DIR --port N [--no-guard] [--hold-ms N]
 */
import { startServer } from "../../src/server/serve.ts";
import { resolveTraffic } from "../../src/server/limits/trafficConfig.ts";

const args = process.argv.slice(2);
const value = (flag: string) => {
  const at = args.indexOf(flag);
  if (at === -1 || args[at + 1] === undefined) throw new Error(`usage: server.ts --dist DIR --port N [--no-guard] (missing ${flag})`);
  return args[at + 1]!;
};
const guard = !args.includes("--no-guard");
const holdRefusalsMs = args.includes("--hold-ms") ? Number(value("--hold-ms")) : undefined;
const server = await startServer({
  distDir: value("--dist"),
  port: Number(value("--port")),
  host: "127.0.0.1",
  ...(guard ? { traffic: { ...resolveTraffic(undefined, process.env), blockList: "/nonexistent/blocklist.json", ...(holdRefusalsMs !== undefined ? { holdRefusalsMs } : {}) } } : {}),
});
process.stdout.write(`ready ${server.url} guard=${guard}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
