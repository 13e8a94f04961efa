/**
 * `ashcast new-run`: a run folder from templates/run, valid as created, for a forecaster to edit.
 * Written as `<name>.part` and renamed, so a watcher never sees it half-made.
 */
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { isRunFolderName } from "../contract/runFolderNames.ts";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RunType } from "../contract/ashModel.ts";
import { UserError } from "../errors.ts";
import { formatInstant, normaliseInstant, parseInstant, INSTANT_FORM } from "../time/instant.ts";

export const TEMPLATE_DIR = fileURLToPath(new URL("../../templates/run/", import.meta.url));

export interface NewRunOptions {
  runsDir: string;
  name: string;
  type: RunType;
  reftime?: string;
  volcano: { name: string; lat: number; lon: number };
  now?: () => Date;
}

export async function newRun(options: NewRunOptions): Promise<string> {
  // The names a build skips (editor temporaries, .part): a run made under one would never be published.
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(options.name) || !isRunFolderName(options.name)) {
    throw new UserError(`"${options.name}" is not a usable folder name`, { where: "NAME", fix: "use letters, digits, '-', '_' and '.', not ending .part, .tmp, .swp or ~, e.g. 2024-05-01-hekla" });
  }
  // The runs directory's parent must exist: a mistyped --runs is refused, not created with every folder above it.
  const runsStat = await stat(options.runsDir).catch(() => undefined);
  if (runsStat !== undefined && !runsStat.isDirectory()) throw new UserError("the runs directory is not a directory", { where: options.runsDir, fix: "point --runs (ASHCAST_RUNS) at the folder of run folders" });
  if (runsStat === undefined && !(await stat(path.dirname(path.resolve(options.runsDir))).then((parent) => parent.isDirectory(), () => false))) {
    throw new UserError("neither the runs directory nor the folder it would be made in exists", { where: options.runsDir, fix: "check the --runs (ASHCAST_RUNS) path, or create its parent folder first" });
  }
  const reftime = options.reftime === undefined ? formatInstant(Math.floor((options.now ?? (() => new Date()))().getTime() / 3_600_000) * 3_600_000) : normaliseInstant(options.reftime);
  if (!reftime) throw new UserError(`"${options.reftime}" is not a date-time`, { where: "--reftime", fix: `write it as ${INSTANT_FORM}` });
  const target = path.join(options.runsDir, options.name);
  if (await stat(target).catch(() => undefined)) {
    throw new UserError("the run folder exists already", { where: target, fix: "choose another NAME, or edit that folder" });
  }
  const t0 = parseInstant(reftime)!;
  const { lat, lon, name } = options.volcano;
  const values: Record<string, string> = {
    type: options.type,
    reftime,
    volcano: name,
    lat: String(lat),
    lon: String(lon),
    t0: reftime,
    t6: formatInstant(t0 + 6 * 3_600_000),
    t12: formatInstant(t0 + 12 * 3_600_000),
    ring0: ring(lon, lat, 0.6, 0.4),
    ring6: ring(lon + 1.5, lat + 0.3, 1.6, 0.8),
  };
  const staging = `${target}.part`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  for (const file of await readdir(TEMPLATE_DIR)) {
    const template = await readFile(path.join(TEMPLATE_DIR, file), "utf8");
    const escape = file.endsWith(".json") ? (v: string) => JSON.stringify(v).slice(1, -1) : escapeXml;
    await writeFile(path.join(staging, file), template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => escape(values[key] ?? "")));
  }
  await rename(staging, target);
  return target;
}

/** A counter-clockwise ring (KML's safe orientation) approximating an ellipse around a centre. */
function ring(lon: number, lat: number, halfWidth: number, halfHeight: number): string {
  const points: string[] = [];
  for (let i = 0; i <= 12; i++) {
    const angle = ((i % 12) / 12) * 2 * Math.PI;
    points.push(`${(lon + halfWidth * Math.cos(angle)).toFixed(3)},${(lat + halfHeight * Math.sin(angle)).toFixed(3)}`);
  }
  return points.join(" ");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
