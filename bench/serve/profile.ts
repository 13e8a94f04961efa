/**
 * A small summary of a V8 `.cpuprofile` (as written by `node --cpu-prof`): the functions with the most
 * self time, self time grouped by where the code lives (Node's HTTP internals, hono, @hono/node-server,
 * ashcast's src/server, GC ...), and the inclusive time of ashcast's and the adapter's own functions.
 *
 *   node_modules/.bin/node bench/serve/profile.ts CPU.*.cpuprofile [--top 20]
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  where: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  /** Sampled time, idle excluded (ms). */
  busyMs: number;
  idleMs: number;
  top: Row[];
  categories: Row[];
  /** Inclusive time of functions in src/server, hono and @hono/node-server (each counted once per stack). */
  inclusive: Row[];
}

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Where a frame's code lives, short. */
export function locate(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return "(native)";
  let file = url.startsWith("file://") ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf("/node_modules/");
  if (modules >= 0) file = file.slice(modules + "/node_modules/".length);
  else file = ashcastFile(file) ?? file;
  // Type stripping keeps every position of the source, so lines are meaningful in src/ too.
  return frame.lineNumber < 0 ? file : `${file}:${frame.lineNumber + 1}`;
}

/** `src/...` for a file of ashcast's sources, in this checkout or in a copy of it (bench/serve runs a copy). */
function ashcastFile(file: string): string | undefined {
  if (file.includes("/node_modules/")) return undefined;
  if (file.startsWith(REPO)) return file.slice(REPO.length);
  const at = file.lastIndexOf("/src/");
  return at >= 0 ? file.slice(at + 1) : undefined;
}

export function category(frame: CallFrame): string {
  const { functionName, url } = frame;
  if (!url) {
    if (functionName === "(garbage collector)") return "V8 garbage collector";
    if (functionName === "(program)") return "V8/native, not attributed (program)";
    if (functionName === "(idle)") return "(idle)";
    return "native functions (writev, …)";
  }
  if (url.includes("/node_modules/@hono/node-server/")) return "@hono/node-server (adapter)";
  if (url.includes("/node_modules/hono/")) return "hono (router, context)";
  if (url.includes("/node_modules/")) return `other packages (${url.split("/node_modules/").pop()!.split("/")[0]})`;
  if (url.startsWith("node:internal/deps/undici") || url.includes("internal/deps/undici")) return "node: undici (Headers/Response)";
  if (/^node:(_http_|http$|internal\/http)/.test(url)) return "node: http";
  if (/^node:(net|internal\/net|internal\/stream_base|stream|internal\/streams)/.test(url)) return "node: net/streams";
  if (url.startsWith("node:internal/webstreams") || url.includes("webstreams")) return "node: web streams";
  if (url.startsWith("node:")) return "node: other";
  const file = ashcastFile(url.startsWith("file://") ? fileURLToPath(url) : url);
  return file?.startsWith("src/") ? `ashcast ${file}` : "other";
}

/** A frame of Node's HTTP server handling a request: marks the samples taken while serving. */
const SERVING = (frame: CallFrame) => frame.url === "node:_http_server" || frame.url.includes("/node_modules/@hono/node-server/");

/**
 * Self and inclusive times. With `servingOnly`, only the samples between the first and the last one taken
 * inside Node's HTTP server count: start-up (module loading, reading the release) and shutdown are left out;
 * `skipMs` also leaves out the first milliseconds of that window (a warm-up).
 */
export function summariseProfile(profile: CpuProfile, topCount = 15, servingOnly = true, skipMs = 0): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const serving = new Map<number, boolean>();
  const isServing = (id: number): boolean => {
    let known = serving.get(id);
    if (known === undefined) {
      const p = parent.get(id);
      known = SERVING(byId.get(id)!.callFrame) || (p !== undefined && isServing(p));
      serving.set(id, known);
    }
    return known;
  };
  let first = 0;
  let last = profile.samples.length - 1;
  if (servingOnly) {
    while (first <= last && !isServing(profile.samples[first]!)) first++;
    while (last >= first && !isServing(profile.samples[last]!)) last--;
    if (first > last) {
      first = 0;
      last = profile.samples.length - 1;
    }
    if (skipMs > 0) {
      let skipped = 0;
      while (first < last && skipped < skipMs * 1000) skipped += profile.timeDeltas[++first] ?? 0;
    }
  }
  const self = new Map<number, number>(); // node id -> µs
  for (let i = first; i <= last; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let idle = 0;
  let busy = 0;
  const byFunction = new Map<string, { name: string; where: string; us: number }>();
  const byCategory = new Map<string, number>();
  const inclusive = new Map<string, { name: string; where: string; us: number }>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    busy += us;
    const name = frame.functionName || "(anonymous)";
    const where = locate(frame);
    const key = `${name} ${where}`;
    const entry = byFunction.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    byFunction.set(key, entry);
    const group = category(frame);
    byCategory.set(group, (byCategory.get(group) ?? 0) + us);
    // Inclusive time of our code and the HTTP stack's JS layers: each function once per stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!/\/src\/server\/|\/node_modules\/(hono|@hono\/node-server)\//.test(f.url)) continue;
      const fname = f.functionName || "(anonymous)";
      const fwhere = locate(f);
      const fkey = `${fname} ${fwhere}`;
      if (seen.has(fkey)) continue;
      seen.add(fkey);
      const e = inclusive.get(fkey) ?? { name: fname, where: fwhere, us: 0 };
      e.us += us;
      inclusive.set(fkey, e);
    }
  }
  const row = (name: string, where: string, us: number): Row => ({ name, where, ms: us / 1000, share: busy > 0 ? us / busy : 0 });
  return {
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    top: [...byFunction.values()].sort((a, b) => b.us - a.us).slice(0, topCount).map((e) => row(e.name, e.where, e.us)),
    categories: [...byCategory.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => row(name, "", us)),
    inclusive: [...inclusive.values()].sort((a, b) => b.us - a.us).slice(0, topCount).map((e) => row(e.name, e.where, e.us)),
  };
}

const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

/** The summary as markdown tables. */
export function formatSummary(summary: ProfileSummary, title: string): string {
  const lines = [
    `**${title}**: ${summary.busyMs.toFixed(0)} ms of CPU sampled on the main thread (${summary.idleMs.toFixed(0)} ms idle excluded).`,
    "",
    "| self time by where the code lives | share |",
    "|---|---|",
    ...summary.categories.map((c) => `| ${c.name} | ${pct(c.share)} |`),
    "",
    "| top self-time function | where | share |",
    "|---|---|---|",
    ...summary.top.map((r) => `| \`${r.name}\` | ${r.where} | ${pct(r.share)} |`),
    "",
    "| inclusive time (src/server, hono, @hono/node-server) | where | share |",
    "|---|---|---|",
    ...summary.inclusive.map((r) => `| \`${r.name}\` | ${r.where} | ${pct(r.share)} |`),
  ];
  return lines.join("\n");
}

export async function summariseFile(file: string, topCount = 15, skipMs = 0): Promise<ProfileSummary> {
  return summariseProfile(JSON.parse(await readFile(file, "utf8")) as CpuProfile, topCount, true, skipMs);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf("--top");
  const topCount = topAt >= 0 ? Number(args[topAt + 1]) : 15;
  const files = args.filter((a, i) => a !== "--top" && (topAt < 0 || i !== topAt + 1));
  if (!files.length) {
    process.stderr.write("usage: node_modules/.bin/node bench/serve/profile.ts FILE.cpuprofile [--top N]\n");
    process.exit(2);
  }
  for (const file of files) process.stdout.write(`${formatSummary(await summariseFile(file, topCount), path.basename(file))}\n\n`);
}
