/**
 * Where the CLI's settings come from: a flag, else an environment variable, else the default.
 * Checked once, with errors that name the flag or variable.
 */
import path from "node:path";
import { RUN_TYPES, RunType } from "../contract/ashModel.ts";
import { UserError } from "../errors.ts";

export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080/volcanicashforecast/0.1";

export interface BuildSettings {
  runsDir: string;
  distDir: string;
  publicUrl: string;
  defaultRunType?: RunType;
}

export interface BuildFlags {
  runs?: string;
  out?: string;
  publicUrl?: string;
  defaultType?: string;
}

export function resolveBuildSettings(flags: BuildFlags, env: NodeJS.ProcessEnv = process.env): BuildSettings {
  const runsDir = path.resolve(flags.runs ?? env.ASHCAST_RUNS ?? "runs");
  const distDir = path.resolve(flags.out ?? env.ASHCAST_DIST ?? "dist");
  if (distDir === runsDir) {
    throw new UserError("--out is the runs directory", { where: "--out", fix: "publish into a directory of its own, e.g. --out dist" });
  }
  const publicUrl = flags.publicUrl ?? env.ASHCAST_PUBLIC_URL ?? DEFAULT_PUBLIC_URL;
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new UserError(`"${publicUrl}" is not an absolute http(s) URL`, { where: flags.publicUrl ? "--public-url" : "ASHCAST_PUBLIC_URL", fix: "give the public address of the product base path, e.g. https://example.org/volcanicashforecast/0.1" });
  }
  const typeText = flags.defaultType ?? env.ASHCAST_DEFAULT_RUN_TYPE;
  let defaultRunType: RunType | undefined;
  if (typeText !== undefined && typeText !== "") {
    const parsed = RunType.safeParse(typeText);
    if (!parsed.success) {
      throw new UserError(`"${typeText}" is not a run type`, { where: flags.defaultType ? "--default-type" : "ASHCAST_DEFAULT_RUN_TYPE", fix: `use one of ${RUN_TYPES.map((t) => `"${t}"`).join(", ")}` });
    }
    defaultRunType = parsed.data;
  }
  return { runsDir, distDir, publicUrl, ...(defaultRunType ? { defaultRunType } : {}) };
}
