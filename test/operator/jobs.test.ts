/**
 * /jobs as an operator uses it: a real server on a socket, real sign-in, and the builder that
 * `ashcast start` runs (the watcher in its worker thread) doing the rebuilds and cleanups on real files.
 * Cancellation is tested on the real watcher in this process, where the moment of the cancel can be chosen.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { UserError } from "../../src/errors.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWatchWorker, type WatchWorker } from "../../src/build/watchWorker.ts";
import { watchRuns, type Watcher } from "../../src/build/watch.ts";
import { runJob } from "../../src/build/runJob.ts";
import { JobBoard } from "../../src/operator/jobs.ts";
import { createAuditLog } from "../../src/operator/auditLog.ts";
import { JobQueueFull, MAX_QUEUED_JOBS, type Job, type JobExecutor } from "../../src/contract/jobs.ts";
import { readReleaseIndex } from "../../src/contract/readReleaseIndex.ts";
import type { ReleaseIndex } from "../../src/contract/releaseIndex.ts";
import { startServer, type RunningServer } from "../../src/server/serve.ts";
import { addRun, expectProblem, http, makeSite, PUBLIC_URL, waitFor, type RawResponse, type Site } from "../server/serverFixtures.ts";
import { OPERATOR_ENV, signInOperator, writeOperator } from "./operatorFixtures.ts";

const RUN_A = "2026-01-10-hekla";
const RUN_B = "2026-01-11-hekla";
const REFTIME_A = "2026-01-10T06:00:00Z";

async function currentIndex(site: Site): Promise<{ id: string; index: ReleaseIndex }> {
  const target = await readlink(path.join(site.distDir, "current"));
  return { id: path.basename(target), index: await readReleaseIndex(site.distDir, path.resolve(site.distDir, target)) };
}

const auditLines = async (file: string) => (await readFile(file, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { who: string; action: string; target: string; outcome: string; detail?: string });

describe("/jobs on the builder of ashcast start (watcher in its worker thread)", () => {
  let dir: string;
  let site: Site;
  let audit: string;
  let worker: WatchWorker;
  let server: RunningServer;
  let bearer: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-jobs-"));
    site = await makeSite("ashcast-jobs-site-");
    await addRun(site, RUN_A, REFTIME_A);
    await addRun(site, RUN_B, "2026-01-11T06:00:00Z");
    worker = startWatchWorker({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL }, () => {});
    await worker.firstBuild;
    audit = path.join(dir, "audit.log");
    const usersFile = path.join(dir, "users.json");
    await writeOperator(usersFile);
    server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: audit, settingsFile: path.join(dir, "settings.json"), jobs: worker } });
    bearer = await signInOperator(server);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await worker?.close();
    await site?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const submit = (body: unknown, type = "application/json") => http(server, "/jobs", { method: "POST", headers: { ...bearer, "content-type": type }, body: typeof body === "string" ? body : JSON.stringify(body) });

  async function finished(res: RawResponse): Promise<Job> {
    expect(res.status).toBe(202);
    const job = res.json() as Job;
    expect(res.headers.location).toBe(`/volcanicashforecast/0.1/jobs/${job.id}`);
    expect(res.headers["cache-control"]).toBe("no-store");
    let seen = job;
    await waitFor(`job ${job.id} to finish`, async () => {
      seen = (await http(server, `/jobs/${job.id}`, { headers: bearer })).json() as Job;
      return seen.state !== "queued" && seen.state !== "running";
    });
    return seen;
  }

  it("rebuilds one run: read and drawn again into a fresh directory, published, with the same content, ETag and changelog", async () => {
    const before = await currentIndex(site);
    const json = await http(server, `/.json?reftime=${REFTIME_A}`);
    const job = await finished(await submit({ kind: "rebuild", run: RUN_A }));
    expect(job).toMatchObject({ kind: "rebuild", runs: [RUN_A], state: "succeeded", submittedBy: "alice", outcome: { kind: "rebuild", published: true, rebuilt: [RUN_A], errors: 0 } });
    expect(job.started! >= job.submitted && job.finished! >= job.started!).toBe(true);

    const after = await currentIndex(site);
    expect(after.id).not.toBe(before.id);
    expect(after.index.runs[REFTIME_A]!.dir).not.toBe(before.index.runs[REFTIME_A]!.dir);
    expect(after.index.runs[REFTIME_A]!.contentSha256).toBe(before.index.runs[REFTIME_A]!.contentSha256);
    expect(after.index.runs["2026-01-11T06:00:00Z"]).toEqual(before.index.runs["2026-01-11T06:00:00Z"]);
    // Same content: clients see nothing new (the changelog only reports what changed).
    expect(after.index.artefacts["changelog.rss"]!.sha256).toBe(before.index.artefacts["changelog.rss"]!.sha256);
    await waitFor("the server to serve the new release", async () => (await server.source.refresh(), server.source.current?.id === after.id));
    expect((await http(server, `/.json?reftime=${REFTIME_A}`)).headers.etag).toBe(json.headers.etag);

    const lines = await auditLines(audit);
    expect(lines).toContainEqual(expect.objectContaining({ who: "alice", action: "job-submit", target: job.id, outcome: "done", detail: `rebuild ${RUN_A}` }));
    await waitFor("the job's outcome in the audit log", async () => (await auditLines(audit)).some((l) => l.action === "job-rebuild" && l.target === job.id));
    expect((await auditLines(audit)).find((l) => l.action === "job-rebuild" && l.target === job.id)).toMatchObject({ who: "alice", outcome: "done" });
  });

  it("rebuilds every run", async () => {
    const job = await finished(await submit({ kind: "rebuild" }));
    expect(job).toMatchObject({ runs: "all", state: "succeeded", outcome: { published: true, rebuilt: [RUN_A, RUN_B] } });
  });

  it("cleans up old releases and what killed builds left, never the served release", async () => {
    const { id } = await currentIndex(site);
    const releases = path.join(site.distDir, "releases");
    // Releases of long ago (their ids start with their build time), and temporaries of a killed build.
    const old = ["20200101T000000Z-000-aaaaaa", "20200101T000001Z-000-bbbbbb", "20200101T000002Z-000-cccccc", "20200101T000003Z-000-dddddd"];
    for (const name of old) await cp(path.join(releases, id), path.join(releases, name), { recursive: true });
    await mkdir(path.join(site.distDir, "runs", ".tmp-99999999-deadbeef"));
    await mkdir(path.join(releases, ".tmp-99999999-deadbeef"));
    const job = await finished(await submit({ kind: "cleanup" }));
    expect(job).toMatchObject({ kind: "cleanup", state: "succeeded", outcome: { kind: "cleanup", temporaries: 2 } });
    const left = await readdir(releases);
    for (const name of old) expect(left).not.toContain(name);
    expect(left).toContain(id);
    expect((job.outcome as { releases: number }).releases).toBeGreaterThanOrEqual(old.length);
    expect((await http(server, `/.json?reftime=${REFTIME_A}`)).status).toBe(200);
  });

  it("lists jobs newest first; refuses bad orders naming the field; 404, 405, 409, 401", async () => {
    const listed = (await http(server, "/jobs", { headers: bearer })).json() as { jobs: Job[] };
    expect(listed.jobs.map((job) => job.kind)).toEqual(["cleanup", "rebuild", "rebuild"]);
    const cases: Array<[unknown, number, RegExp]> = [
      [{ kind: "rebuild", run: "2099-01-01-nowhere" }, 404, /runs\/ has no run folder "2099-01-01-nowhere"/],
      [{ kind: "rebuild", run: "../etc" }, 400, /"run" must be the name of a run folder/],
      [{ kind: "reboot" }, 400, /"kind" must be "rebuild" or "cleanup"/],
      [{ kind: "cleanup", run: RUN_A }, 400, /leave "run" out/],
      [{ kind: "rebuild", force: true }, 400, /"force": not a field of a job/],
      [[1, 2], 400, /must be a JSON object/],
      ["{kind: rebuild", 400, /not JSON/],
    ];
    for (const [body, status, detail] of cases) expect(expectProblem(await submit(body), status).detail, JSON.stringify(body)).toMatch(detail);
    expectProblem(await submit("kind=rebuild", "application/x-www-form-urlencoded"), 415);
    expectProblem(await http(server, "/jobs/20260101T000000Z-abcdef", { headers: bearer }), 404);
    expectProblem(await http(server, "/jobs", { method: "PUT", headers: bearer }), 405);
    expectProblem(await http(server, "/jobs", { method: "POST", headers: { "content-type": "application/json" }, body: `{"kind":"cleanup"}` }), 401);
    expectProblem(await http(server, "/jobs"), 401);
    // An encoded slash that the access rules would resolve away while the router kept it in a job id: refused
    // before either, never reaching a job's handler without a token.
    expect(expectProblem(await http(server, "/jobs/x%2F..%2F.."), 400).detail).toMatch(/an encoded '\/' \(%2F\)/);
    expectProblem(await http(server, "/jobs/a%2F..%2F..%2F..%2Fx/cancel", { method: "POST" }), 400);

    const done = listed.jobs[0]!;
    const refused = await http(server, `/jobs/${done.id}/cancel`, { method: "POST", headers: bearer });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({ status: 409, detail: `job ${done.id} has succeeded already; there is nothing to cancel`, job: { id: done.id, state: "succeeded" } });
    expect(await auditLines(audit)).toContainEqual(expect.objectContaining({ action: "job-cancel", target: done.id, outcome: "refused" }));
  });
});

describe("cancelling jobs (the real watcher in this process)", () => {
  let site: Site;
  let auditFile: string;
  let watcher: Watcher;
  /** Called after each run folder a build handles; a test sets it to act at that moment. */
  let afterFolder: (done: number) => void = () => {};

  beforeAll(async () => {
    site = await makeSite("ashcast-jobs-cancel-");
    await addRun(site, RUN_A, REFTIME_A);
    await addRun(site, RUN_B, "2026-01-11T06:00:00Z");
    auditFile = path.join(site.root, "audit.log");
    watcher = await watchRuns({ runsDir: site.runsDir, distDir: site.distDir, publicUrl: PUBLIC_URL, onProgress: (done) => afterFolder(done) });
    await watcher.idle();
  }, 60_000);

  afterAll(async () => {
    await watcher?.close();
    await site?.cleanup();
  });

  const finishedJob = async (board: JobBoard, id: string): Promise<Job> => {
    await waitFor(`job ${id} to finish`, () => board.get(id)?.finished !== undefined);
    return board.get(id)!;
  };

  it("a job that fails: the operator's mistake is said with its fix; a bug says so without its stack, which stays in the server's log", async () => {
    const failing = (error: Error) => new JobBoard({ executor: { run: async () => Promise.reject(error) }, audit: createAuditLog(auditFile) });
    const user = failing(new UserError("the runs directory does not exist", { where: "/srv/runs", fix: "create it" }));
    const said = await finishedJob(user, (await user.submit({ kind: "cleanup" }, "alice")).id);
    expect(said).toMatchObject({ state: "failed", error: expect.stringMatching(/the runs directory does not exist[\s\S]*create it/) });
    const bug = failing(new TypeError("cannot read properties of undefined"));
    const quiet = await finishedJob(bug, (await bug.submit({ kind: "cleanup" }, "alice")).id);
    expect(quiet).toMatchObject({ state: "failed", error: "Internal error: the job failed; the server's log has the details" });
  });

  it("answers a job the same as one still waiting with that job, and refuses one more than 20 waiting, naming the fix", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const board = new JobBoard({ executor: { run: () => gate.then(() => Promise.reject(new UserError("held for the test"))) }, audit: createAuditLog(auditFile) });
    const running = await board.submit({ kind: "cleanup" }, "alice");
    await waitFor("the first job to run", () => board.get(running.id)?.state === "running");
    // A burst, all at once: one full rebuild queued however many ask for it.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => board.submit({ kind: "rebuild", runs: "all" }, i % 2 ? "alice" : "bob")));
    expect(new Set(burst.map((job) => job.id)).size).toBe(1);
    // Different jobs, all at once: 20 wait, the rest are refused.
    const distinct = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => board.submit({ kind: "rebuild", runs: [`run-${i}`] }, "alice")));
    expect(distinct.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(MAX_QUEUED_JOBS - 1);
    for (const outcome of distinct) if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(JobQueueFull);
    expect(board.list().filter((job) => job.state === "queued")).toHaveLength(MAX_QUEUED_JOBS);
    expect((await auditLines(auditFile)).at(-1)).toMatchObject({ who: "alice", action: "job-submit", outcome: "refused" });
    for (const job of board.list()) if (job.state === "queued") await board.cancel(job.id, "alice");
    open();
    await finishedJob(board, running.id);
  });

  it("a running rebuild stops between run folders: nothing is published, and the next rebuild publishes", async () => {
    const board: JobBoard = new JobBoard({ executor: { run: (order, signal) => runJob(watcher, order, signal) }, audit: createAuditLog(auditFile) });
    const before = await currentIndex(site);
    let id = "";
    // Cancelled the moment the first folder is rebuilt, as an operator's POST /jobs/{id}/cancel would.
    afterFolder = (done) => {
      if (done === 1) void board.cancel(id, "bob");
    };
    id = (await board.submit({ kind: "rebuild", runs: "all" }, "alice")).id;
    const job = await finishedJob(board, id);
    afterFolder = () => {};
    expect(job).toMatchObject({ state: "cancelled", cancelRequested: true });
    expect(job.outcome).toBeUndefined();
    expect((await currentIndex(site)).id).toBe(before.id);
    const lines = await auditLines(auditFile);
    expect(lines).toContainEqual(expect.objectContaining({ who: "bob", action: "job-cancel", target: id, outcome: "done", detail: "asked the running job to stop" }));
    await waitFor("the cancelled outcome in the audit log", async () => (await auditLines(auditFile)).some((l) => l.action === "job-rebuild" && l.target === id));
    expect((await auditLines(auditFile)).find((l) => l.action === "job-rebuild" && l.target === id)).toMatchObject({ who: "alice", outcome: "cancelled" });

    const again = await finishedJob(board, (await board.submit({ kind: "rebuild", runs: "all" }, "alice")).id);
    expect(again).toMatchObject({ state: "succeeded", outcome: { published: true, rebuilt: [RUN_A, RUN_B] } });
  });

  it("through HTTP: a queued job is cancelled at once (200) and never runs; a running one is asked to stop (202)", async () => {
    // The first job holds the builder until the gate opens, so the moments are the test's to choose.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated: JobExecutor = { run: async (order, signal) => (await gate, runJob(watcher, order, signal)) };
    const dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-jobs-http-"));
    const usersFile = path.join(dir, "users.json");
    await writeOperator(usersFile);
    const server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: auditFile, settingsFile: path.join(dir, "settings.json"), jobs: gated } });
    try {
      const bearer = await signInOperator(server);
      const before = await currentIndex(site);
      const post = (target: string, body?: unknown) => http(server, target, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const first = (await post("/jobs", { kind: "rebuild" })).json() as Job;
      const second = (await post("/jobs", { kind: "cleanup" })).json() as Job;
      await waitFor("the first job to run", async () => ((await http(server, `/jobs/${first.id}`, { headers: bearer })).json() as Job).state === "running");

      const queued = await post(`/jobs/${second.id}/cancel`);
      expect(queued.status).toBe(200);
      expect(queued.json()).toMatchObject({ id: second.id, state: "cancelled" });
      const running = await post(`/jobs/${first.id}/cancel`);
      expect(running.status).toBe(202);
      expect(running.json()).toMatchObject({ id: first.id, state: "running", cancelRequested: true });
      open();
      await waitFor("the first job to stop", async () => ((await http(server, `/jobs/${first.id}`, { headers: bearer })).json() as Job).state === "cancelled");
      const stopped = (await http(server, `/jobs/${second.id}`, { headers: bearer })).json() as Job;
      expect(stopped.started).toBeUndefined();
      expect(stopped.state).toBe("cancelled");
      expect((await currentIndex(site)).id).toBe(before.id);
    } finally {
      open();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers 503 where no builder runs", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-jobs-none-"));
    const usersFile = path.join(dir, "users.json");
    await writeOperator(usersFile);
    const server = await startServer({ distDir: site.distDir, port: 0, host: "127.0.0.1", usersFile, env: OPERATOR_ENV, operator: { runsDir: site.runsDir, auditLogFile: auditFile, settingsFile: path.join(dir, "settings.json") } });
    try {
      const bearer = await signInOperator(server);
      expect(expectProblem(await http(server, "/jobs", { headers: bearer }), 503).detail).toMatch(/ashcast start/);
      expectProblem(await http(server, "/jobs", { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: `{"kind":"cleanup"}` }), 503);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
