/**
 * Shared by the model-output tests: temporary directories, ncgen/ncdump, a small EEMEP-shaped CDL
 * that tests bend into every kind of bad file, and an assertion on the errors a file must give.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { UserError } from "../../src/errors.ts";
import type { Position } from "../../src/geo/types.ts";

/** ncgen and ncdump (Debian netcdf-bin) are there: scripts/setup-test-env.sh installs them. */
export const HAS_NETCDF_BIN = spawnSync("ncgen", ["-h"], { stdio: "ignore" }).error === undefined && spawnSync("ncdump", [], { stdio: "ignore" }).error === undefined;
export const NO_NETCDF_BIN = "ncgen/ncdump missing: install Debian netcdf-bin (scripts/setup-test-env.sh does)";

const dirs: string[] = [];

export async function tempDir(prefix = "ashcast-model-"): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export type NcgenKind = "classic" | "64-bit-offset" | "nc4" | "cdf5";

/** Writes `cdl` next to `out` and runs `ncgen -k <kind> -o out`. */
export async function ncgen(cdl: string, out: string, kind: NcgenKind = "classic"): Promise<string> {
  const cdlPath = `${out}.cdl`;
  await writeFile(cdlPath, cdl);
  execFileSync("ncgen", ["-k", kind, "-o", out, cdlPath], { stdio: ["ignore", "ignore", "pipe"] });
  return out;
}

export function ncdump(args: string[]): string {
  return execFileSync("ncdump", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

export interface FieldSpec {
  name: string;
  type?: "float" | "double" | "short" | "int" | "byte";
  dims?: string;
  attributes?: string[];
  /** CDL data (values, `_` for fill); omitted: no data section for it (fill values). */
  data?: string;
}

export interface CdlSpec {
  /** Extra dimension lines, e.g. `x = 2 ;`. */
  dimensions?: string;
  lat?: number[];
  lon?: number[];
  /** `time = UNLIMITED` unless a size is given. */
  timeSize?: number;
  times?: number[];
  /** Full CDL attribute lines of the time variable, e.g. `time:units = "hours since 2019-03-22"`. */
  timeAttributes?: string[];
  /** Omit the time variable. */
  noTimeVariable?: boolean;
  /** Omit lat/lon coordinate variables. */
  noCoordinates?: boolean;
  fields?: FieldSpec[];
  globals?: string[];
  /** Extra variable declarations and data, verbatim. */
  extraVariables?: string;
  extraData?: string;
}

export const SMALL_LAT = [60, 61, 62];
export const SMALL_LON = [-20, -19, -18, -17];

/**
 * A small EEMEP-shaped CDL: time (half hours, as EEMEP hourly means in some files), lat 3, lon 4, and the
 * given flight-level fields. Defaults give one float field in ug/m3 with a _FillValue.
 */
export function eemepCdl(spec: CdlSpec = {}): string {
  const lat = spec.lat ?? SMALL_LAT;
  const lon = spec.lon ?? SMALL_LON;
  const times = spec.times ?? [1 / 48, 3 / 48];
  const fields = spec.fields ?? [
    { name: "MAX6h_ASH_fl000-200", attributes: ['units = "ug/m3"', "_FillValue = -1.f"], data: Array.from({ length: times.length * lat.length * lon.length }, (_, k) => k * 100).join(", ") },
  ];
  const lines = [
    "netcdf small {",
    "dimensions:",
    `  time = ${spec.timeSize ?? "UNLIMITED"} ;`,
    `  lat = ${lat.length} ;`,
    `  lon = ${lon.length} ;`,
    ...(spec.dimensions ? [`  ${spec.dimensions}`] : []),
    "variables:",
  ];
  if (!spec.noTimeVariable) {
    lines.push("  double time(time) ;", ...(spec.timeAttributes ?? ['time:units = "days since 2019-03-22 00:00:00"']).map((attribute) => `    ${attribute} ;`));
  }
  if (!spec.noCoordinates) {
    lines.push("  float lat(lat) ;", '    lat:units = "degrees_north" ;', "  float lon(lon) ;", '    lon:units = "degrees_east" ;');
  }
  for (const field of fields) {
    lines.push(`  ${field.type ?? "float"} ${field.name}(${field.dims ?? "time, lat, lon"}) ;`);
    for (const attribute of field.attributes ?? []) lines.push(`    ${field.name}:${attribute} ;`);
  }
  if (spec.extraVariables) lines.push(spec.extraVariables);
  for (const global of spec.globals ?? ['title = "small EEMEP-shaped test file"', 'SIMULATION_START_DATE = "2019-03-22_00:00:00"']) lines.push(`  :${global} ;`);
  lines.push("data:");
  if (!spec.noTimeVariable) lines.push(`  time = ${times.join(", ")} ;`);
  if (!spec.noCoordinates) lines.push(`  lat = ${lat.join(", ")} ;`, `  lon = ${lon.join(", ")} ;`);
  for (const field of fields) if (field.data !== undefined) lines.push(`  ${field.name} = ${field.data} ;`);
  if (spec.extraData) lines.push(spec.extraData);
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

export interface Grid2dSpec {
  /** The grid's own coordinates of the columns and rows (rotated degrees for a rotated pole). */
  xs: number[];
  ys: number[];
  /** Where a column and row lie: the 2-D longitude and latitude written. */
  toLonLat: (x: number, y: number) => [number, number];
  /** Attribute lines of a `projection` grid mapping the field names; none without. */
  mapping?: string[];
  /** 1-D x/y variables with these values and attribute lines (e.g. `x:standard_name = "longitude"`). */
  axes?: { x: number[]; y: number[]; attributes: string[] };
  /** Hourly steps (1 by default); the field's value at index k of (time, y, x) is `value(k)`, k by default. */
  steps?: number;
  value?: (k: number) => number;
}

/** A small SNAP-shaped CDL on (y, x) with 2-D `latitude`/`longitude` and one field, MAX6h_ASH_fl000-200 in ug/m3. */
export function grid2dCdl(spec: Grid2dSpec): string {
  const { xs, ys, mapping, axes } = spec;
  const steps = spec.steps ?? 1;
  const cells = ys.flatMap((y) => xs.map((x) => spec.toLonLat(x, y)));
  const lines = ["netcdf grid2d {", "dimensions:", "  time = UNLIMITED ;", `  x = ${xs.length} ;`, `  y = ${ys.length} ;`, "variables:", "  double time(time) ;", '    time:units = "hours since 2019-04-03 00:00:00" ;'];
  if (axes) lines.push("  double x(x) ;", "  double y(y) ;", ...axes.attributes.map((line) => `    ${line} ;`));
  if (mapping) lines.push("  int projection ;", ...mapping.map((line) => `    projection:${line} ;`));
  lines.push("  double latitude(y, x) ;", '    latitude:units = "degrees_north" ;', "  double longitude(y, x) ;", '    longitude:units = "degrees_east" ;');
  lines.push("  float MAX6h_ASH_fl000-200(time, y, x) ;", '    MAX6h_ASH_fl000-200:units = "ug/m3" ;');
  if (mapping) lines.push('    MAX6h_ASH_fl000-200:grid_mapping = "projection" ;');
  lines.push("data:", `  time = ${Array.from({ length: steps }, (_, t) => t + 1).join(", ")} ;`);
  if (axes) lines.push(`  x = ${axes.x.join(", ")} ;`, `  y = ${axes.y.join(", ")} ;`);
  lines.push(`  latitude = ${cells.map((c) => c[1]).join(", ")} ;`, `  longitude = ${cells.map((c) => c[0]).join(", ")} ;`);
  lines.push(`  MAX6h_ASH_fl000-200 = ${Array.from({ length: steps * cells.length }, (_, k) => (spec.value ?? ((i: number) => i))(k)).join(", ")} ;`, "}");
  return `${lines.join("\n")}\n`;
}

/** Asserts that `action` rejects with a UserError naming `where`, matching `message`, with a fix. */
export async function expectUserError(action: Promise<unknown> | (() => Promise<unknown>), where: string, message: RegExp): Promise<UserError> {
  let caught: unknown;
  try {
    await (typeof action === "function" ? action() : action);
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected an error").toBeInstanceOf(UserError);
  const error = caught as UserError;
  expect(error.where).toBe(where);
  expect(error.message).toMatch(message);
  expect(error.fix ?? "").not.toBe("");
  return error;
}

const DEG = Math.PI / 180;

/**
 * The rotated pole as a rotation of unit vectors, independent of the trigonometric formulas under
 * test: tilt the pole by 90° − poleLat about the y axis, then turn by poleLon + 180° about the z axis,
 * so that the grid's north pole lands on (poleLon, poleLat) and grid (0, 0) on (poleLon + 180, 90 − poleLat).
 */
export function rotatedByVectors(rlon: number, rlat: number, poleLat: number, poleLon: number): Position {
  const theta = (90 - poleLat) * DEG;
  const x0 = Math.cos(rlat * DEG) * Math.cos(rlon * DEG);
  const y0 = Math.cos(rlat * DEG) * Math.sin(rlon * DEG);
  const z0 = Math.sin(rlat * DEG);
  // Ry(-theta)
  const x1 = x0 * Math.cos(theta) - z0 * Math.sin(theta);
  const z1 = x0 * Math.sin(theta) + z0 * Math.cos(theta);
  const y1 = y0;
  // Rz(poleLon + 180)
  const phi = (poleLon + 180) * DEG;
  const x2 = x1 * Math.cos(phi) - y1 * Math.sin(phi);
  const y2 = x1 * Math.sin(phi) + y1 * Math.cos(phi);
  return [Math.atan2(y2, x2) / DEG, Math.asin(Math.max(-1, Math.min(1, z1))) / DEG];
}

