/**
 * `ashcast`: build, watch, check, new-run and user. Exit codes: 0 all good; 1 some runs have errors (the
 * valid ones were still published), or `user` refused (the user exists, no such user); 2 the command could
 * not run (bad flag, missing directory, build locked); 70 internal error (a bug: please report it).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Command, CommanderError, Option } from "commander";
import { isRunType, RUN_TYPES, type RunType } from "../contract/runTypes.ts";
import { AshcastError, UserError, formatError, InternalError, outOfSpace, refusedByFileSystem } from "../errors.ts";
import { formatRunReports, summarise } from "./printReport.ts";
import { progressBar } from "./progress.ts";
import { envValue, resolveBuildSettings, resolvePipelineSettings, type BuildFlags } from "./settings.ts";
import type { ServeFlags } from "./listen.ts";

export const EXIT = { ok: 0, runErrors: 1, usage: 2, internal: 70 } as const;

/** `ashcast 0.1.0 (Node.js v24.21.0)`: operators reporting a problem say both. */
function versionText(): string {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return `ashcast ${version} (Node.js ${process.version})`;
}

const untilSignal = () =>
  new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });

const fromEnv = (name: string): string | undefined => envValue(process.env, name);

/** One server process has nothing to replace on SIGHUP, whose default would end it: say so and go on. */
function ignoreHangup(log: (line: string) => void): void {
  process.on("SIGHUP", () => log("SIGHUP: one server process, nothing to replace (new releases are followed without a signal; --workers 2 or more replaces workers on SIGHUP)"));
}

/** Decimal degrees within ±limit, as written: "" (an unset variable in a script), hex and exponents are refused, not read as 0 or 16. */
function degrees(text: string, flag: "--lat" | "--lon", limit: number): number {
  const value = Number(text);
  if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) && Math.abs(value) <= limit) return value;
  throw new UserError(`"${text}" is not a ${flag === "--lat" ? "latitude" : "longitude"}`, { where: flag, fix: `give decimal degrees between -${limit} and ${limit}, e.g. ${flag === "--lat" ? "63.98" : "-19.70"}` });
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);
const stamp = (line: string) => `${new Date().toISOString().slice(11, 19)} ${line}`;

function buildOptions(command: Command): Command {
  return command
    .option("--runs <dir>", "folder of run folders (env ASHCAST_RUNS; default runs)", undefined)
    .option("--out <dir>", "where releases are published (env ASHCAST_DIST; default dist)", undefined)
    .option("--public-url <url>", "public address of the product base path, for changelog links (env ASHCAST_PUBLIC_URL)")
    .addOption(new Option("--default-type <type>", "run type for runs whose run.json gives none (env ASHCAST_DEFAULT_RUN_TYPE); never guessed otherwise").choices(RUN_TYPES))
    .option("--thresholds <mg/m3>", "ash concentration thresholds for model output, ascending (env ASHCAST_THRESHOLDS; default 0.2,2,4)")
    .option("--wms-base <url>", "WMS address serving the runs folder's model output, e.g. a THREDDS ncWMS (env ASHCAST_WMS_BASE)")
    .option("--purge <url>", "a shared cache to purge by tag after each publish, e.g. Varnish's http://127.0.0.1:6081/; repeatable (env ASHCAST_PURGE_URLS, space-separated)", (url: string, urls: string[]) => [...urls, url], [] as string[]);
}

export async function main(argv: readonly string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = new Command("ashcast")
    .description("Publishes volcanic ash forecast runs: validates runs/ and precomputes every artefact into dist/.")
    .version(versionText(), "-V, --version", "the version of ashcast and of the Node.js it runs on")
    .showHelpAfterError("(add --help for usage)");

  buildOptions(program.command("build"))
    .description("validate every run folder and publish a new release into the dist directory")
    .option("--allow-empty", "publish even when the runs directory holds no run folder, withdrawing every published run")
    .addHelpText("after", "\nExit codes: 0 published, no errors; 1 published, some runs have errors; 2 could not build; 70 internal error.")
    .action(async (flags: BuildFlags & { allowEmpty?: boolean }) => {
      const settings = resolveBuildSettings(flags);
      // Workers load, and open new model output, while this thread loads its own code (src/build/earlyWorkers.ts);
      // started before that code is asked for, which would hold the hint's own small import back by ~0.15 s.
      (await import("../build/earlyWorkers.ts")).startWorkersEarly(settings.runsDir, settings.distDir);
      // Build code (canvas, h5wasm, d3) is loaded only by the commands that build: `serve` stays small.
      const [{ build }, { createPurger, resolvePurgeUrls }, { checkRunsDirectory, runsAnEmptyBuildWouldWithdraw }] = await Promise.all([import("../build/build.ts"), import("../build/cachePurger.ts"), import("../build/runsDirectory.ts")]);
      // Before the emptiness check: a run folder given as --runs holds no run folder either, and its own error says more.
      await checkRunsDirectory(settings.runsDir);
      const withdrawn = flags.allowEmpty ? 0 : await runsAnEmptyBuildWouldWithdraw(settings.runsDir, settings.distDir);
      if (withdrawn > 0) {
        throw new UserError(`the runs directory holds no run folder, and the release in ${settings.distDir} serves ${withdrawn} run(s): building it would withdraw every one`, {
          where: settings.runsDir,
          fix: "point --runs (ASHCAST_RUNS) at the folder of run folders (is its volume mounted?); to withdraw every run on purpose, build with --allow-empty",
        });
      }
      const purger = createPurger({ urls: resolvePurgeUrls(flags.purge), log: (line) => err(line) });
      const result = await build({ ...settings, log: (line) => out(line), onProgress: progressBar() });
      for (const line of formatRunReports(result.report.runs)) out(line);
      out(summarise(result.report.runs));
      if (result.report.counts.errors > 0) exitCode = EXIT.runErrors;
      // Published already: the caches are told before the process exits, and a failure changes no exit code.
      if (result.published) purger.purge(result.release, result.changedTags);
      await purger.settled();
    });

  buildOptions(program.command("watch"))
    .description("build, then rebuild whenever a run folder changes (Ctrl-C to stop)")
    .option("--debounce <ms>", "quiet time before a build starts", "400")
    .action(async (flags: BuildFlags & { debounce: string }) => {
      const settings = resolveBuildSettings(flags);
      const debounceMs = Number(flags.debounce);
      if (!Number.isFinite(debounceMs) || debounceMs < 0 || debounceMs > 600_000) throw new UserError(`"${flags.debounce}" is not a number of milliseconds from 0 to 600000`, { where: "--debounce", fix: "give e.g. --debounce 400" });
      const [{ watchRuns }, { createPurger, resolvePurgeUrls }] = await Promise.all([import("../build/watch.ts"), import("../build/cachePurger.ts")]);
      const watcher = await watchRuns({
        ...settings,
        debounceMs,
        purger: createPurger({ urls: resolvePurgeUrls(flags.purge), log: (line) => out(stamp(line)) }),
        log: (line) => out(stamp(line)),
        onBuild: ({ result }) => {
          if (!result) return;
          for (const line of formatRunReports(result.report.runs)) out(line);
        },
      });
      out(stamp(`watching ${settings.runsDir} (publishing into ${settings.distDir})`));
      await untilSignal();
      await watcher.close();
    });

  const serveOptions = (command: Command): Command =>
    command
      .option("--port <n>", "TCP port (env PORT)", fromEnv("PORT") ?? "8080")
      .option("--host <address>", "address to listen on (env HOST)", fromEnv("HOST") ?? "127.0.0.1")
      .option("--prefix <path>", "path in front of /volcanicashforecast/0.1, e.g. /weatherapi (env ASHCAST_PREFIX)", fromEnv("ASHCAST_PREFIX") ?? "")
      .option("--removed-versions <list>", "comma-separated product versions that were removed and answer 404 (env ASHCAST_REMOVED_VERSIONS)", fromEnv("ASHCAST_REMOVED_VERSIONS") ?? "")
      .option("--users <file>", "the users file (env ASHCAST_USERS_FILE; default config/users.json)")
      .option("--access-rules <file>", "the access rules (env ASHCAST_ACCESS_RULES; default: templates/access-rules.json's rules)", fromEnv("ASHCAST_ACCESS_RULES"))
      .option("--traffic <file>", "limits per route class, generic agents, trusted proxies, block list (env ASHCAST_TRAFFIC_FILE; default config/traffic.json if it exists, else templates/traffic.json's values)")
      .option("--tls-cert <file>", "PEM certificate: serve HTTPS directly (env ASHCAST_TLS_CERT)", fromEnv("ASHCAST_TLS_CERT"))
      .option("--tls-key <file>", "PEM private key of --tls-cert (env ASHCAST_TLS_KEY)", fromEnv("ASHCAST_TLS_KEY"))
      .option("--http-port <n>", "with TLS: a plain-HTTP port that redirects GET/HEAD to HTTPS and refuses the rest (env ASHCAST_HTTP_PORT)", fromEnv("ASHCAST_HTTP_PORT"))
      .option("--trusted-proxies <list>", "comma-separated addresses or CIDR ranges of TLS-terminating proxies, whose X-Forwarded-For/-Proto are believed (env ASHCAST_TRUSTED_PROXIES; replaces the traffic file's)", fromEnv("ASHCAST_TRUSTED_PROXIES"));

  serveOptions(program.command("serve"))
    .description("serve the published release of the dist directory (follows new releases without restart)")
    .option("--out <dir>", "the dist directory the builds publish to, as for build and start (env ASHCAST_DIST)")
    .option("--dist <dir>", "same as --out")
    // Not ASHCAST_WORKERS: that is the build's worker threads (0 allowed), which an operator may set for a whole host.
    .option("--workers <n>", "server processes sharing the port, or auto for one per core; SIGHUP replaces them one at a time (env ASHCAST_SERVE_WORKERS)", fromEnv("ASHCAST_SERVE_WORKERS") ?? "1")
    .action(async (flags: ServeFlags & { out?: string; dist?: string; workers: string }) => {
      if (flags.out !== undefined && flags.dist !== undefined && path.resolve(flags.out) !== path.resolve(flags.dist)) {
        throw new UserError(`--out ${flags.out} and --dist ${flags.dist} name two directories`, { where: "--out, --dist", fix: "give one of them (they are the same option)" });
      }
      const dist = flags.out ?? flags.dist;
      const settings = resolveBuildSettings(dist ? { out: dist } : {});
      const cluster = await import("./cluster.ts");
      const workers = cluster.parseWorkers(flags.workers);
      if (workers > 1 && !cluster.isWorker()) {
        await cluster.superviseWorkers(workers, (line) => out(stamp(line)));
        return;
      }
      const { listen } = await import("./listen.ts");
      const server = await listen(settings.distDir, flags, (line) => out(stamp(cluster.isWorker() ? `[worker ${process.pid}] ${line}` : line))).catch((error: unknown) => {
        cluster.leavePrimary();
        throw error;
      });
      if (!cluster.isWorker()) ignoreHangup((line) => out(stamp(line)));
      else cluster.tellPrimaryServing();
      // A worker stops when the primary retires it; the primary handles the signals.
      await (cluster.isWorker() ? cluster.untilRetired() : untilSignal());
      await server.close();
    });

  serveOptions(buildOptions(program.command("start")))
    .description("watch runs/ and serve dist/ in one process (what npm start runs)")
    .action(async (flags: ServeFlags & BuildFlags) => {
      const [{ listen, checkServeFlags, checkServeFiles }, { signInSettings }, { loadTraffic }, { checkFeedLinks, isLoopback, serverUrl }, { checkRunsDirectory }, { ensureDistDirectory }] = await Promise.all([
        import("./listen.ts"),
        import("../server/serve.ts"),
        import("../server/limits/trafficConfig.ts"),
        import("../server/transport.ts"),
        import("../build/runsDirectory.ts"),
        import("../build/releaseStore.ts"),
      ]);
      // The flags and the runs directory before the first build, not minutes later after it.
      const { port, base } = checkServeFlags(flags);
      // The changelog's links, unless given: on loopback, this server's own address (a fixed port only: 0 is known
      // after listening); beyond it the address clients use must be configured (checkFeedLinks).
      const ownUrl = port === 0 || !isLoopback(flags.host) || fromEnv("ASHCAST_PUBLIC_URL") ? undefined : serverUrl("http", flags.host, port, base);
      const settings = resolveBuildSettings({ ...flags, ...(flags.publicUrl === undefined && ownUrl ? { publicUrl: ownUrl } : {}) });
      await checkRunsDirectory(settings.runsDir);
      // Before the first build: it would publish a changelog whose links only this machine can follow.
      checkFeedLinks(flags.host, settings.publicUrl);
      // Users who could never sign in (no AUTH_HASH_SALT or no token key) stop the start before the first
      // build; `serve` is stopped by startServer itself, before it listens.
      await signInSettings(flags.users);
      // A broken traffic file too, the access rules, the TLS files and serving in clear: before the first build.
      const traffic = await loadTraffic(flags.traffic);
      await checkServeFiles(flags, traffic);
      await ensureDistDirectory(settings.distDir);
      // Builds run in a worker thread, so requests are answered while a run is contoured and drawn.
      const [{ startWatchWorker }, { resolvePurgeUrls }] = await Promise.all([import("../build/watchWorker.ts"), import("../build/cachePurger.ts")]);
      const purgeUrls = resolvePurgeUrls(flags.purge);
      // Ctrl-C or SIGTERM from here on, the first build included, stops the watcher after its build (lock released).
      const signalled = untilSignal().then(() => "signalled" as const);
      const watcher = startWatchWorker({ ...settings, purgeUrls }, (line) => out(stamp(line)), (runs) => {
        for (const line of formatRunReports(runs)) out(line);
      });
      // Whatever stops the start from here stops the watcher too: a process left building with nobody serving would hang.
      const first = await Promise.race([watcher.firstBuild.then(() => "built" as const), signalled]).catch(async (error: unknown) => {
        await watcher.close();
        throw error;
      });
      if (first === "signalled") {
        out(stamp("stopping: the build under way finishes first"));
        await watcher.close();
        return;
      }
      const server = await listen(settings.distDir, flags, (line) => out(stamp(line)), { runsDir: settings.runsDir, pipeline: settings, jobs: watcher, ...(purgeUrls.length ? { cachePurges: () => watcher.cachePurges } : {}) }, traffic).catch(
        async (error: unknown) => {
          await watcher.close();
          throw error;
        },
      );
      ignoreHangup((line) => out(stamp(line)));
      await signalled;
      await server.close();
      await watcher.close();
    });

  program
    .command("check")
    .description("validate a runs directory, or one run folder, without writing anything")
    .argument("[dir]", "runs directory or run folder (env ASHCAST_RUNS)", fromEnv("ASHCAST_RUNS") ?? "runs")
    .addOption(new Option("--default-type <type>", "run type for runs whose run.json gives none (env ASHCAST_DEFAULT_RUN_TYPE)").choices(RUN_TYPES))
    .addHelpText("after", "\nExit codes: 0 no errors (warnings allowed); 1 errors found; 2 could not check.")
    .option("--thresholds <mg/m3>", "ash concentration thresholds for model output (env ASHCAST_THRESHOLDS; default 0.2,2,4)")
    .option("--wms-base <url>", "WMS address serving the runs folder's model output, as for build (env ASHCAST_WMS_BASE)")
    .action(async (dir: string, flags: { defaultType?: RunType; thresholds?: string; wmsBase?: string }) => {
      const { check } = await import("../build/check.ts");
      const result = await check(dir, resolvePipelineSettings(flags));
      for (const line of formatRunReports(result.runs, "check")) out(line);
      out(`${summarise(result.runs, "check")}; ${result.errors} error(s), ${result.warnings} warning(s)`);
      if (result.errors > 0) exitCode = EXIT.runErrors;
    });

  program
    .command("new-run")
    .description("create a run folder from templates/run, valid as created, to edit")
    .argument("<name>", "folder name, e.g. 2024-05-01-hekla")
    .requiredOption("--type <type>", `run type: ${RUN_TYPES.join(", ")}`)
    .option("--runs <dir>", "folder of run folders (env ASHCAST_RUNS)", fromEnv("ASHCAST_RUNS") ?? "runs")
    .option("--reftime <time>", "reference time (default: the current hour)")
    .option("--volcano <name>", "volcano name", "Hekla")
    .option("--lat <deg>", "volcano latitude", "63.98")
    .option("--lon <deg>", "volcano longitude", "-19.70")
    .action(async (name: string, flags: { type: string; runs: string; reftime?: string; volcano: string; lat: string; lon: string }) => {
      if (!isRunType(flags.type)) {
        throw new UserError(`"${flags.type}" is not a run type`, { where: "--type", fix: `use one of ${RUN_TYPES.map((t) => `"${t}"`).join(", ")}` });
      }
      const lat = degrees(flags.lat, "--lat", 90);
      const lon = degrees(flags.lon, "--lon", 180);
      const { newRun } = await import("./newRun.ts");
      const folder = await newRun({ runsDir: flags.runs, name, type: flags.type, volcano: { name: flags.volcano, lat, lon }, ...(flags.reftime ? { reftime: flags.reftime } : {}) });
      // Valid as made: a watcher publishes it at once, so say so before a forecaster starts editing in place.
      out(`created ${folder}: edit run.json and advisory.kml, then run ./bin/ashcast check ${folder}`);
      out(`note: it is valid as it is, so a running watch or start publishes it at once, template areas and all; to draft a run first, make it with --runs outside the watched folder and move it in when done`);
    });

  const user = program.command("user").description("manage the users who may sign in (the users file)");
  const usersOption = (command: Command): Command => command.option("--users <file>", "the users file (env ASHCAST_USERS_FILE; default config/users.json)");
  const passwordHelp = "\nThe password is read from stdin (one line) or, on a terminal, asked twice without echo; never from the command line.\nNeeds AUTH_HASH_SALT, the server's secret (and AUTH_HASH_SALT_VERSION if not 1).\nExit codes: 0 added; 1 the user exists (without --replace); 2 could not add.";
  usersOption(user.command("add"))
    .description("add a user, or with --replace set a new password and roles")
    .argument("<name>", "username: 1 to 64 letters, digits, '.', '_' or '-'")
    .addOption(new Option("--role <role>", "the user's role").choices(["operator"]).default("operator")) // ROLES of src/auth/users.ts, not imported here: argon2 loads only for `user`
    .option("--replace", "replace an existing user's password and roles")
    .addHelpText("after", passwordHelp)
    .action(async (name: string, flags: { users?: string; role: string; replace?: boolean }) => {
      const { userAdd } = await import("./user.ts");
      if (!(await userAdd(name, flags))) exitCode = EXIT.runErrors;
    });
  usersOption(user.command("remove"))
    .description("remove a user")
    .argument("<name>", "username")
    .addHelpText("after", "\nExit codes: 0 removed; 1 no such user; 2 could not remove.")
    .action(async (name: string, flags: { users?: string }) => {
      const { userRemove } = await import("./user.ts");
      if (!(await userRemove(name, flags))) exitCode = EXIT.runErrors;
    });
  usersOption(user.command("list"))
    .description("list the users and their roles (never their hashes)")
    .action(async (flags: { users?: string }) => {
      const { userList } = await import("./user.ts");
      await userList(flags);
    });

  // Every command, sub-commands of `user` included, reports through main's exit codes.
  const allCommands = (command: Command): Command[] => [command, ...command.commands.flatMap(allCommands)];
  for (const command of allCommands(program)) {
    command.exitOverride();
    command.configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  }

  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    err(formatError(error));
    return (error instanceof AshcastError && !(error instanceof InternalError)) || outOfSpace(error) || refusedByFileSystem(error) ? EXIT.usage : EXIT.internal;
  }
}
