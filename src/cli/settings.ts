/**
 * Where the CLI's settings come from: a flag, else an environment variable, else the default.
 * Checked once, with errors that name the flag or variable.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { isRunType, RUN_TYPES, type RunType } from "../contract/runTypes.ts";
import { UserError } from "../errors.ts";
import type { PipelineSettings } from "../build/pipelineSettings.ts";

export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080/volcanicashforecast/0.1";

export interface BuildSettings extends PipelineSettings {
  runsDir: string;
  distDir: string;
  publicUrl: string;
}

export interface BuildFlags {
  runs?: string;
  out?: string;
  publicUrl?: string;
  defaultType?: string;
  thresholds?: string;
  wmsBase?: string;
  /** Purge addresses of shared caches (repeatable --purge). */
  purge?: string[];
}

/** A variable of the environment, undefined when unset or blank (an empty ASHCAST_RUNS is not the current directory, nor `PORT=` port 0). */
export const envValue = (env: NodeJS.ProcessEnv, name: string): string | undefined => (env[name]?.trim() ? env[name] : undefined);

export function resolveBuildSettings(flags: BuildFlags, env: NodeJS.ProcessEnv = process.env): BuildSettings {
  const runsDir = path.resolve(flags.runs ?? envValue(env, "ASHCAST_RUNS") ?? "runs");
  const distDir = path.resolve(flags.out ?? envValue(env, "ASHCAST_DIST") ?? "dist");
  // The release clean-up deletes what dist/runs, dist/state ... do not list: dist must hold no run folder, and a
  // run folder no dist (`--out .` beside runs/ deleted every run folder).
  const [runsReal, distReal] = [realOrResolved(runsDir), realOrResolved(distDir)];
  if (distReal === runsReal) throw new UserError("--out is the runs directory", { where: "--out", fix: "publish into a directory of its own, e.g. --out dist" });
  if (within(runsReal, distReal)) throw new UserError(`--out ${distDir} holds the runs directory ${runsDir}: publishing there would delete run folders`, { where: "--out", fix: "publish into a directory of its own beside the runs directory, e.g. --out dist" });
  if (within(distReal, runsReal)) throw new UserError(`--out ${distDir} is inside the runs directory ${runsDir}: it would be read as a run folder`, { where: "--out", fix: "publish into a directory of its own beside the runs directory, e.g. --out dist" });
  const publicUrl = flags.publicUrl ?? envValue(env, "ASHCAST_PUBLIC_URL") ?? DEFAULT_PUBLIC_URL;
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new UserError(`"${publicUrl}" is not an absolute http(s) URL`, { where: flags.publicUrl ? "--public-url" : "ASHCAST_PUBLIC_URL", fix: "give the public address of the product base path, e.g. https://example.org/volcanicashforecast/0.1" });
  }
  return { runsDir, distDir, publicUrl, ...resolvePipelineSettings(flags, env) };
}

/** A path with its symbolic links followed where it exists (dist may not exist yet). */
function realOrResolved(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** Whether `inner` lies below `outer`. */
const within = (inner: string, outer: string): boolean => inner.startsWith(outer.endsWith(path.sep) ? outer : `${outer}${path.sep}`);

/** The settings that decide what runs publish (shared by build, watch, start and check). */
export function resolvePipelineSettings(flags: Pick<BuildFlags, "defaultType" | "thresholds" | "wmsBase">, env: NodeJS.ProcessEnv = process.env): PipelineSettings {
  const typeText = flags.defaultType ?? envValue(env, "ASHCAST_DEFAULT_RUN_TYPE");
  let defaultRunType: RunType | undefined;
  if (typeText !== undefined && typeText !== "") {
    if (!isRunType(typeText)) {
      throw new UserError(`"${typeText}" is not a run type`, { where: flags.defaultType ? "--default-type" : "ASHCAST_DEFAULT_RUN_TYPE", fix: `use one of ${RUN_TYPES.map((t) => `"${t}"`).join(", ")}` });
    }
    defaultRunType = typeText;
  }
  const thresholds = parseThresholds(flags.thresholds ?? envValue(env, "ASHCAST_THRESHOLDS"), flags.thresholds !== undefined ? "--thresholds" : "ASHCAST_THRESHOLDS");
  const wmsBaseUrl = flags.wmsBase ?? envValue(env, "ASHCAST_WMS_BASE");
  if (wmsBaseUrl && !/^https?:\/\/[^/]+/.test(wmsBaseUrl)) {
    throw new UserError(`"${wmsBaseUrl}" is not an absolute http(s) URL`, { where: flags.wmsBase ? "--wms-base" : "ASHCAST_WMS_BASE", fix: "give the WMS address of the runs folder, e.g. https://thredds.example.org/thredds/wms/volcano" });
  }
  return { ...(defaultRunType ? { defaultRunType } : {}), ...(thresholds ? { thresholds } : {}), ...(wmsBaseUrl ? { wmsBaseUrl } : {}) };
}

/** `0.2,2,4`: ascending positive numbers in mg/m³. */
function parseThresholds(text: string | undefined, where: string): number[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const values = text.split(",").map((part) => Number(part.trim()));
  const ascending = values.every((value, i) => Number.isFinite(value) && value > 0 && (i === 0 || value > values[i - 1]!));
  if (!ascending || values.length > 6) {
    throw new UserError(`"${text}" is not a list of thresholds`, { where, fix: "give up to 6 ascending concentrations in mg/m³, e.g. 0.2,2,4 (European charts) or 0.2,2,5,10" });
  }
  return values;
}
