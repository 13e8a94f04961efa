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
import { characterNotInXml } from "../formats/xmlCharacters.ts";
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
    throw new UserError(`"${options.name}" is not a usable folder name`, { where: "NAME", fix: "use ASCII letters (a-z, A-Z), digits, '-', '_' and '.', starting with a letter or digit and not ending .part, .tmp, .swp or ~, e.g. 2024-05-01-oraefajokull" });
  }
  // File systems take 255 bytes a name, and the folder is made as NAME.part first.
  if (options.name.length > MAX_NAME_LENGTH) {
    throw new UserError(`the folder name is ${options.name.length} characters long`, { where: "NAME", fix: `use at most ${MAX_NAME_LENGTH} characters, e.g. 2024-05-01-hekla` });
  }
  const character = characterNotInXml(options.volcano.name);
  if (character || options.volcano.name.trim() === "") {
    const what = character ? `contains ${character.name}, which XML does not allow` : "is empty";
    throw new UserError(`the volcano's name ${what}`, { where: "--volcano", fix: "give the volcano's name as text, e.g. --volcano Hekla" });
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
  if (t0 + 12 * 3_600_000 >= Date.UTC(10000, 0, 1)) throw new UserError(`"${options.reftime}" is too late: the template's last step, 12 hours on, would fall after the year 9999`, { where: "--reftime", fix: `give a reference time before 9999-12-31T12:00:00Z, as ${INSTANT_FORM}` });
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
  // NAME.part is also how a run is delivered (docs/runs.md): one being copied in is never removed or written into.
  const staging = `${target}.part`;
  if (await stat(staging).catch(() => undefined)) {
    throw new UserError("a folder of that name is being delivered (NAME.part exists)", { where: staging, fix: "wait until it is renamed to NAME and edit that, or choose another NAME; remove it only if no copy is under way" });
  }
  await mkdir(options.runsDir, { recursive: true });
  // Not recursive: a NAME.part made meanwhile by a delivery is refused here, not written into.
  await mkdir(staging);
  try {
    for (const file of await readdir(TEMPLATE_DIR)) {
      const template = await readFile(path.join(TEMPLATE_DIR, file), "utf8");
      const escape = file.endsWith(".json") ? (v: string) => JSON.stringify(v).slice(1, -1) : escapeXml;
      await writeFile(path.join(staging, file), template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => escape(values[key] ?? "")));
    }
    await rename(staging, target);
  } catch (error) {
    // Its own half-made NAME.part would be refused as a delivery by the next new-run.
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return target;
}

const MAX_NAME_LENGTH = 200;

/**
 * A counter-clockwise ring (KML's safe orientation) approximating an ellipse around a centre: longitudes
 * wrapped into -180..180 (a ring across the antimeridian is read the shorter way round), the centre moved
 * off a pole far enough that every latitude is one.
 */
function ring(lon: number, lat: number, halfWidth: number, halfHeight: number): string {
  const centreLat = Math.max(-89.9 + halfHeight, Math.min(89.9 - halfHeight, lat));
  const points: string[] = [];
  for (let i = 0; i <= 12; i++) {
    const angle = ((i % 12) / 12) * 2 * Math.PI;
    const x = lon + halfWidth * Math.cos(angle);
    const wrapped = x > 180 ? x - 360 : x < -180 ? x + 360 : x;
    points.push(`${wrapped.toFixed(3)},${(centreLat + halfHeight * Math.sin(angle)).toFixed(3)}`);
  }
  return points.join(" ");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
