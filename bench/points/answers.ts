/**
 * The /point reply built in-process, as the server builds it per request without HTTP (src/server/pointReply.ts:
 * parameters, run selection, validators, the answer's bytes), on the full-size dist of bench:points: at the
 * volcano (ash in most steps), at random places over the domain, and at one place without ash, each query new
 * to the answer cache. This tree against a snapshot of another revision (`--against`, git archive), in
 * alternating child processes; µs per reply, median of the rounds.
 *
 *   node bench/points/answers.ts [--against <revision>] [--rounds 6]
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({
  options: {
    against: { type: "string", default: "HEAD~1" },
    rounds: { type: "string", default: "6" },
    child: { type: "string" },
  },
});
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const WORK = path.join(tmpdir(), "ashcast-bench-points-work");
const DIST = path.join(WORK, "dist-full");
const KINDS = ["volcano", "random", "empty"] as const;
const REPLIES = 20_000;

if (flags.child !== undefined) await child(flags.child);
else await main();

/** In a child: µs per reply for each kind of place, with the modules of `tree`. */
async function child(tree: string): Promise<void> {
  const load = (file: string) => import(pathToFileURL(path.join(tree, "src/server", file)).href);
  const { ReleaseSource } = await load("releaseSource.ts");
  const { PointGridStore } = await load("pointGrids.ts");
  const { Representations } = await load("representation.ts");
  const { pointReply } = await load("pointReply.ts");
  const source = await ReleaseSource.open({ distDir: DIST });
  const context = {
    base: "/volcanicashforecast/0.1",
    current: () => source.current,
    runArtefacts: (run: unknown, prefix: string) => source.readRunArtefacts(run, prefix),
    grids: new PointGridStore({ read: (stored: unknown) => source.readWhole(stored) }),
    representations: new Representations(),
  };
  let seed = 16;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const randomPlaces = Array.from({ length: REPLIES }, () => [25 + random() * 49.9, -45 + random() * 79.9] as const);
  // A billionth of a degree apart: the same cell, a new query (the answer cache keys on the query).
  const place = (kind: (typeof KINDS)[number], i: number): readonly [number, number] =>
    kind === "random" ? randomPlaces[i]! : kind === "volcano" ? [63.98 + i * 1e-9, -19.7] : [60.1 + i * 1e-9, -20.3];
  const request = (lat: number, lon: number) => {
    const params = new URLSearchParams(`lat=${lat.toFixed(9)}&lon=${lon.toFixed(9)}`);
    return { query: (name: string) => (params.has(name) ? params.getAll(name) : undefined), ifNoneMatch: undefined, ifModifiedSince: undefined };
  };
  const result: Record<string, number> = {};
  for (const kind of KINDS) {
    const requests = Array.from({ length: REPLIES }, (_, i) => request(...place(kind, i)));
    await pointReply(context, requests[0]!); // loads the grid
    const times: number[] = [];
    for (let round = 0; round < 4; round++) {
      const t0 = performance.now();
      for (const each of requests) {
        const reply = pointReply(context, each);
        if (reply instanceof Promise || reply.status !== 200) throw new Error(`Internal error: no answer at a ${kind} place`);
      }
      times.push(((performance.now() - t0) * 1000) / REPLIES);
    }
    result[kind] = Math.min(...times.slice(1)); // the first round warms the code
  }
  source.close();
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

async function main(): Promise<void> {
  if (!existsSync(path.join(DIST, "current"))) throw new Error(`no full-size dist at ${DIST}: run \`npm run bench:points -- --skip serve,memory\` once first`);
  const snapshot = path.join(WORK, "tree-answers");
  rmSync(snapshot, { recursive: true, force: true });
  mkdirSync(snapshot, { recursive: true });
  execFileSync("sh", ["-c", `git -C ${REPO} archive ${flags.against} | tar -x -C ${snapshot}`]);
  symlinkSync(path.join(REPO, "node_modules"), path.join(snapshot, "node_modules"));
  const runs: Record<"ours" | "theirs", Array<Record<string, number>>> = { ours: [], theirs: [] };
  const rounds = Math.max(1, Number(flags.rounds));
  for (let i = 0; i < rounds; i++) {
    for (const which of i % 2 ? (["theirs", "ours"] as const) : (["ours", "theirs"] as const)) {
      const tree = which === "ours" ? REPO : snapshot;
      const done = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", tree], { encoding: "utf8" });
      if (done.status !== 0) throw new Error(`the child for ${tree} failed: ${done.stderr}`);
      runs[which].push(JSON.parse(done.stdout) as Record<string, number>);
      process.stderr.write(`${which}: ${done.stdout}\n`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  console.log(`| place | this tree µs/reply | ${flags.against} µs/reply | ratio |`);
  console.log("|---|---|---|---|");
  for (const kind of KINDS) {
    const ours = median(runs.ours.map((r) => r[kind]!));
    const theirs = median(runs.theirs.map((r) => r[kind]!));
    console.log(`| ${kind} | ${ours.toFixed(2)} | ${theirs.toFixed(2)} | ${(ours / theirs).toFixed(2)} |`);
  }
  rmSync(snapshot, { recursive: true, force: true });
}
