/**
 * Opens dispersion model output as the pipeline sees it (types.ts), whatever the format and layout:
 *
 * - Format by magic bytes: `\x89HDF\r\n\x1a\n` NetCDF-4/HDF5 (h5wasm, netcdf4.ts); `CDF\x01` classic and
 *   `CDF\x02` 64-bit offset NetCDF-3 (netcdfjs header, netcdf3.ts); `CDF\x05` is recognised and refused
 *   with a fix.
 * - Layout from the variables: EEMEP has MAX6h_ASH_fl... on (time, lat, lon) with 1-D `lat`/`lon`;
 *   SNAP has them on (time, y, x) with 2-D `latitude`/`longitude` and a grid mapping (`projection`),
 *   possibly a rotated pole. A SNAP file with a rotated pole but without the 2-D arrays gets them
 *   computed from the pole and its 1-D rotated axes.
 * - Everything declared is checked against MODEL_LIMITS before anything is allocated; a field is read
 *   one time step at a time, never a whole variable.
 * - Values: `_FillValue` / `missing_value` (and NaN) are missing (NaN), and without `_FillValue` netCDF's
 *   default fill of the type (not for bytes, as netCDF's own rule); `_Unsigned = "true"` reads a classic
 *   file's signed integers as unsigned; `scale_factor` / `add_offset` are applied, a packed value within
 *   half a packing step of 0 being 0; units are converted to mg/m³ (units.ts); a negative or infinite
 *   concentration, or one beyond what a point-query grid holds (MAX_CODED_MG_M3), is an error naming the
 *   variable and the time step. `valid_min`/`valid_max`/`valid_range` do not make values missing (the
 *   error then names them, for the file to say so with `_FillValue`).
 * - Every problem with the file is a UserError whose `where` is the display path, with a fix.
 */
import { open } from "node:fs/promises";
import { InternalError, UserError, UserErrors } from "../errors.ts";
import { MAX_CODED_MG_M3 } from "../formats/concentrationCodes.ts";
import { formatInstant, normaliseInstant } from "../time/instant.ts";
import { cfTimeProblem, cfTimeToMs, parseCfTimeUnits } from "./cfTime.ts";
import { axesOf2dGrid, type RotatedPole } from "./gridAxes.ts";
import { curvilinearGrid, isStrictlyMonotonic, regularGrid, rotatedToGeographic, unwrapAxis } from "./gridMapping.ts";
import { describeField } from "./fieldMeaning.ts";
import { MODEL_LIMITS } from "./limits.ts";
import { describe, describedSource, recordingWholes } from "./describedSource.ts";
import { isNumericType, numberAttribute, textAttribute, type NetcdfSource, type NumericArray, type SourceDescription, type SourceVariable } from "./source.ts";
import { FLIGHT_LEVEL_BANDS, type FieldCells, type ModelGrid, type ModelOutput, type ModelVariable } from "./types.ts";
import { CONCENTRATION_UNITS_EXAMPLES, concentrationToMgPerM3 } from "./units.ts";

const HDF5_MAGIC = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];
const CDF_MAGIC = [0x43, 0x44, 0x46];
/**
 * netCDF's default fill values: what an unwritten cell reads as when no _FillValue is set (netcdf.h NC_FILL_*).
 * Not for byte and ubyte: netCDF's rule is that their default fill is a value like any other.
 */
const DEFAULT_FILL: Partial<Record<string, number>> = {
  short: -32767,
  ushort: 65535,
  int: -2147483647,
  uint: 4294967295,
  int64: Number(-9223372036854775806n),
  uint64: Number(18446744073709551614n),
  float: 9.969209968386869e36,
  double: 9.969209968386869e36,
};
/** Bits of the signed integer types `_Unsigned = "true"` reads as unsigned. */
const INTEGER_BITS: Partial<Record<string, number>> = { byte: 8, short: 16, int: 32 };
const REPLACE_FIX = "replace the file with the model's complete output";

export type ModelFileFormat = "netcdf4" | "netcdf3" | "cdf5";

/** The format the first bytes announce, or undefined when they are not NetCDF. */
export function modelFileFormat(head: Uint8Array): ModelFileFormat | undefined {
  if (head.length >= 8 && HDF5_MAGIC.every((byte, index) => head[index] === byte)) return "netcdf4";
  if (head.length >= 4 && CDF_MAGIC.every((byte, index) => head[index] === byte)) {
    if (head[3] === 1 || head[3] === 2) return "netcdf3";
    if (head[3] === 5) return "cdf5";
  }
  return undefined;
}

/** True when the first bytes of a file are those of NetCDF-4/HDF5 or NetCDF-3 (classic, 64-bit offset, CDF-5). */
export function isModelOutputFile(head: Buffer): boolean {
  return modelFileFormat(head) !== undefined;
}

/**
 * Opens a model output file and checks its whole structure (variables, dimensions, time axis, grid).
 * Field values are checked as they are read (readField). `displayPath` is what errors name.
 * `pointGeometry: false` leaves out the grid's axes for point queries (ModelGrid.geometry), which a grid
 * given as 2-D arrays finds by rotating every centre: the build's step workers only read fields.
 */
export async function openModelOutput(filePath: string, displayPath: string, options: { pointGeometry?: boolean; described?: SourceDescription } = {}): Promise<ModelOutput> {
  const where = displayPath;
  if (options.described) {
    // Opened already on another thread (ModelOutput.description): checked again here, but nothing is walked or loaded.
    const source = describedSource(options.described, filePath, () => openSource(filePath, where));
    return closedOnError(source, () => interpret(source, where, options.pointGeometry ?? true, () => options.described!));
  }
  const { source, wholes } = recordingWholes(await openSource(filePath, where));
  return closedOnError(source, () => interpret(source, where, options.pointGeometry ?? true, (fields) => describe(source, wholes, fields)));
}

async function closedOnError(source: NetcdfSource, open: () => Promise<ModelOutput>): Promise<ModelOutput> {
  try {
    return await open();
  } catch (error) {
    source.close();
    throw error;
  }
}

async function openSource(filePath: string, where: string): Promise<NetcdfSource> {
  const head = await readHead(filePath, where);
  const format = modelFileFormat(head);
  if (!format) {
    throw new UserError(`not a NetCDF file: it starts with ${describeBytes(head)}, not the bytes of NetCDF-4 (\\x89HDF) or NetCDF-3 (CDF)`, {
      where,
      fix: "give the model's NetCDF output file (.nc) as the model wrote it",
    });
  }
  // Loaded on first use: h5wasm compiles its WebAssembly as it loads, which a build worker reading a described file never needs.
  if (format === "netcdf4") return (await import("./netcdf4.ts")).openNetcdf4(filePath, where);
  return (await import("./netcdf3.ts")).openNetcdf3(filePath, where);
}

async function readHead(filePath: string, where: string): Promise<Buffer> {
  try {
    const handle = await open(filePath, "r");
    try {
      const buffer = Buffer.alloc(8);
      const { bytesRead } = await handle.read(buffer, 0, 8, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new UserError(`the file cannot be opened (${code})`, { where, fix: "check that the file exists and is readable by ashcast", cause: error });
  }
}

function describeBytes(head: Buffer): string {
  if (head.length === 0) return "nothing (the file is empty)";
  const text = [...head].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`)).join("");
  return `"${text}"`;
}

interface FieldVariable extends ModelVariable {
  factor: number;
  scale: number;
  offset: number;
  fills: number[];
  /** Whether the file packs the values (scale_factor or add_offset): within half a step of 0 is 0. */
  packed: boolean;
  /** 2^bits when `_Unsigned = "true"` on a signed integer type: negative stored values are read plus this. */
  unsignedSpan: number;
  /** valid_min / valid_range's lower end, to name when a value below it is refused. */
  validMin: number | undefined;
  /** The netCDF type the values are stored as. */
  storedType: string;
}

async function interpret(source: NetcdfSource, where: string, pointGeometry: boolean, description: (fields: string[]) => SourceDescription): Promise<ModelOutput> {
  const fail = (message: string, fix: string): never => {
    throw new UserError(message, { where, fix });
  };

  // The flight-level variables, and their common dimensions.
  const present = FLIGHT_LEVEL_BANDS.filter((band) => source.variables.has(band.variable));
  if (present.length === 0) {
    const names = [...source.variables.keys()];
    const found = names.length === 0 ? "it has no variables" : `its variables: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", ..." : ""}`;
    fail(
      `no flight-level variable: expected at least one of ${FLIGHT_LEVEL_BANDS.map((band) => band.variable).join(", ")} (${found})`,
      "give the model output that holds the MAX6h_ASH_fl... variables (EEMEP writes them; for SNAP, the output after its MAX6h post-processing)",
    );
  }
  // Each variable's problems are collected and reported together: a forecaster mends the file once.
  const problems: Array<{ message: string; fix: string }> = [];
  const collect = (message: string, fix: string): void => {
    problems.push({ message, fix });
  };
  const failCollected = (): void => {
    if (problems.length > 0) throw new UserErrors(problems.splice(0), { where });
  };
  const first = source.variables.get(present[0]!.variable)!;
  for (const band of present) {
    const variable = source.variables.get(band.variable)!;
    if (variable.dimensions.length !== 3) {
      collect(
        `variable ${variable.name} has ${variable.dimensions.length} dimension${variable.dimensions.length === 1 ? "" : "s"} (${variable.dimensions.join(", ")}), expected 3: (time, lat, lon) or (time, y, x)`,
        variable.dimensions.length === 4
          ? `give one 2-D field per time step: drop a dimension of length 1 (e.g. \`ncwa -O -a ${variable.dimensions[1]} in.nc out.nc\`), or give the model's MAX6h_ASH_fl... variables as written`
          : "give the model's MAX6h_ASH_fl... variables as written by the model: one 2-D field per time step",
      );
    } else if (variable.dimensions.join(",") !== first.dimensions.join(",")) {
      collect(`variable ${variable.name} has dimensions (${variable.dimensions.join(", ")}) but ${first.name} has (${first.dimensions.join(", ")})`, "give all flight-level variables the same (time, lat, lon) or (time, y, x) dimensions");
    }
    if (!isNumericType(variable.type)) collect(`variable ${variable.name} holds ${variable.type} values, not numbers`, REPLACE_FIX);
  }
  failCollected();
  const [timeDimension, yDimension, xDimension] = first.dimensions as [string, string, string];

  // The time coordinate must be the first dimension.
  const timeVariable = timeCoordinate(source, timeDimension);
  if (!timeVariable) {
    const misplaced = first.dimensions.find((dimension) => timeCoordinate(source, dimension));
    if (misplaced) {
      fail(
        `variable ${first.name} has dimensions (${first.dimensions.join(", ")}): time must come first, as (time, lat, lon) or (time, y, x)`,
        `reorder the dimensions, e.g. \`ncpdq -a ${[misplaced, ...first.dimensions.filter((dimension) => dimension !== misplaced)].join(",")} in.nc out.nc\``,
      );
    }
    fail(
      `variable ${first.name}'s first dimension "${timeDimension}" has no time coordinate (a 1-D variable ${timeDimension} with units like "hours since 2019-03-22 00:00:00")`,
      "give the model output with its time coordinate variable",
    );
  }
  const timeProblem = cfTimeProblem(textAttribute(timeVariable!.attributes, "units"), textAttribute(timeVariable!.attributes, "calendar"), timeVariable!.name);
  if (timeProblem) fail(timeProblem.message, timeProblem.fix);

  // Sizes, before anything is allocated.
  const steps = source.dimensions.get(timeDimension) ?? 0;
  const ny = source.dimensions.get(yDimension) ?? 0;
  const nx = source.dimensions.get(xDimension) ?? 0;
  if (steps > MODEL_LIMITS.maxTimeSteps) {
    fail(`dimension ${timeDimension} has ${steps} time steps, more than the ${MODEL_LIMITS.maxTimeSteps} ashcast reads`, "this is not a plausible forecast (real runs have up to a few hundred steps): check the file, or split the run into several files");
  }
  if (nx * ny > MODEL_LIMITS.maxCellsPerField) {
    fail(
      `variable ${first.name} is declared on a grid of ${nx} × ${ny} = ${nx * ny} cells, more than the ${MODEL_LIMITS.maxCellsPerField} ashcast reads per field`,
      "this is not a plausible model grid (the largest real ones have a few million cells): check the file, or cut the domain (e.g. `ncks -d lat,...`)",
    );
  }
  if (steps === 0) fail(`dimension ${timeDimension} has no time steps`, REPLACE_FIX);
  if (nx < 2 || ny < 2) fail(`variable ${first.name} is on a grid of ${nx} × ${ny} cells; at least 2 × 2 are needed`, REPLACE_FIX);
  for (const band of present) {
    const variable = source.variables.get(band.variable)!;
    const [t, y, x] = variable.shape as [number, number, number];
    if (t !== steps || y !== ny || x !== nx) {
      collect(`variable ${variable.name} holds ${t} × ${y} × ${x} values, but its dimensions are ${steps} × ${ny} × ${nx}: the file is incomplete`, REPLACE_FIX);
    }
  }
  if (timeVariable!.shape[0] !== steps) collect(`variable ${timeVariable!.name} holds ${timeVariable!.shape[0]} times for ${steps} steps: the file is incomplete`, REPLACE_FIX);
  failCollected();

  // Units, fill values and packing of each flight-level variable.
  const fieldVariables: FieldVariable[] = present.map((band) => {
    const variable = source.variables.get(band.variable)!;
    const units = textAttribute(variable.attributes, "units");
    const factor = units === undefined ? undefined : concentrationToMgPerM3(units);
    if (units === undefined) {
      collect(`variable ${variable.name} has no units attribute`, `give ${variable.name} its units, e.g. units = "ug/m3" as EEMEP writes (accepted: ${CONCENTRATION_UNITS_EXAMPLES})`);
    } else if (factor === undefined) {
      collect(`variable ${variable.name} has units "${units}", which ashcast cannot convert to mg/m³`, `write the units as a mass concentration ashcast knows: ${CONCENTRATION_UNITS_EXAMPLES}`);
    }
    const fill = numberAttribute(variable.attributes, "_FillValue")?.[0] ?? DEFAULT_FILL[variable.type];
    const missing = numberAttribute(variable.attributes, "missing_value") ?? [];
    const fills = [...(fill === undefined ? [] : [fill]), ...missing].flatMap((value) => [value, Math.fround(value)]);
    const scale = numberAttribute(variable.attributes, "scale_factor")?.[0];
    const offset = numberAttribute(variable.attributes, "add_offset")?.[0];
    const bits = INTEGER_BITS[variable.type];
    return {
      name: variable.name,
      band,
      units: units!,
      meaning: describeField(variable.name, { long_name: textAttribute(variable.attributes, "long_name"), cell_methods: textAttribute(variable.attributes, "cell_methods") }, band.label),
      factor: factor!,
      scale: scale ?? 1,
      offset: offset ?? 0,
      fills: [...new Set(fills)],
      packed: scale !== undefined || offset !== undefined,
      unsignedSpan: bits !== undefined && textAttribute(variable.attributes, "_Unsigned")?.trim().toLowerCase() === "true" ? 2 ** bits : 0,
      validMin: numberAttribute(variable.attributes, "valid_min")?.[0] ?? numberAttribute(variable.attributes, "valid_range")?.[0],
      storedType: variable.type,
    };
  });
  failCollected();

  // Only now read anything: the time axis and the grid's coordinates.
  const times = await readTimes(source, timeVariable!, fail);
  const { grid, layout } = await readGrid(source, first, yDimension, xDimension, nx, ny, pointGeometry, fail);

  const title = textAttribute(source.globalAttributes, "title")?.trim();
  const simulationStart = simulationStartOf(textAttribute(source.globalAttributes, "SIMULATION_START_DATE"));
  let closed = false;
  const readFieldCells = async (name: string, timeIndex: number): Promise<FieldCells> => {
    if (closed) throw new InternalError(`readField(${name}) after close()`);
    const variable = fieldVariables.find((candidate) => candidate.name === name);
    if (!variable) throw new InternalError(`readField: ${name} is not a flight-level variable of ${where}`);
    if (!Number.isInteger(timeIndex) || timeIndex < 0 || timeIndex >= steps) throw new InternalError(`readField: time index ${timeIndex} outside 0..${steps - 1}`);
    const raw = await source.readStep(name, timeIndex);
    if (raw.length !== nx * ny) fail(`variable ${name} gave ${raw.length} values at time index ${timeIndex}, expected ${nx * ny}`, REPLACE_FIX);
    return toMgPerM3(raw, variable, timeIndex, times[timeIndex]!, nx, fail);
  };

  return {
    layout,
    times,
    grid,
    variables: fieldVariables.map(({ name, band, units, meaning }) => ({ name, band, units, meaning })),
    unpublishedVariables: [...source.variables.keys()].filter((name) => /^MAX6h_ASH_fl\d+-\d+$/.test(name) && !FLIGHT_LEVEL_BANDS.some((band) => band.variable === name)),
    ...(simulationStart ? { simulationStart } : {}),
    ...(title ? { title } : {}),
    readFieldCells,
    description: () => description(fieldVariables.map(({ name }) => name)),
    async readField(name: string, timeIndex: number): Promise<Float32Array> {
      return (await readFieldCells(name, timeIndex)).values;
    },
    close() {
      if (closed) return;
      closed = true;
      source.close();
    },
  };
}

type Fail = (message: string, fix: string) => never;

/** A 1-D variable over `dimension` whose units are a CF time (or that names the dimension and has units "... since ..."). */
function timeCoordinate(source: NetcdfSource, dimension: string): SourceVariable | undefined {
  const variable = source.variables.get(dimension);
  if (!variable || variable.dimensions.length !== 1 || variable.dimensions[0] !== dimension || !isNumericType(variable.type)) return undefined;
  const units = textAttribute(variable.attributes, "units") ?? "";
  return /\bsince\b/i.test(units) || textAttribute(variable.attributes, "standard_name") === "time" || variable.name === "time" ? variable : undefined;
}

async function readTimes(source: NetcdfSource, variable: SourceVariable, fail: Fail): Promise<string[]> {
  const axis = parseCfTimeUnits(textAttribute(variable.attributes, "units")!)!;
  const values = await source.readWhole(variable.name);
  const fill = numberAttribute(variable.attributes, "_FillValue")?.[0];
  const scale = numberAttribute(variable.attributes, "scale_factor")?.[0] ?? 1;
  const offset = numberAttribute(variable.attributes, "add_offset")?.[0] ?? 0;
  const times: string[] = [];
  let previous = -Infinity;
  for (let index = 0; index < values.length; index++) {
    const raw = values[index]!;
    if (!Number.isFinite(raw) || raw === fill || raw === DEFAULT_FILL[variable.type]) {
      fail(`variable ${variable.name} has no valid value at index ${index}`, "give every time step its time: the file is incomplete or damaged");
    }
    const ms = cfTimeToMs(raw * scale + offset, axis);
    if (!(ms >= Date.UTC(1000, 0, 1) && ms < Date.UTC(10000, 0, 1))) {
      fail(`variable ${variable.name} value ${raw} at index ${index} is not a time between the years 1000 and 9999`, `check ${variable.name}:units and the values`);
    }
    if (ms <= previous) {
      fail(`variable ${variable.name} is not increasing: index ${index} (${formatInstant(ms)}) is not after index ${index - 1} (${formatInstant(previous)})`, "give the time steps in order, each once");
    }
    previous = ms;
    times.push(formatInstant(ms));
  }
  return times;
}

const LATITUDE_UNITS = /^degrees?_?n(orth)?$/i;
const LONGITUDE_UNITS = /^degrees?_?e(ast)?$/i;

function isLatitude(variable: SourceVariable): boolean {
  const standardName = textAttribute(variable.attributes, "standard_name");
  if (standardName !== undefined) return standardName === "latitude";
  return /^(lat|latitude)$/i.test(variable.name) || LATITUDE_UNITS.test(textAttribute(variable.attributes, "units") ?? "");
}

function isLongitude(variable: SourceVariable): boolean {
  const standardName = textAttribute(variable.attributes, "standard_name");
  if (standardName !== undefined) return standardName === "longitude";
  return /^(lon|long|longitude)$/i.test(variable.name) || LONGITUDE_UNITS.test(textAttribute(variable.attributes, "units") ?? "");
}

async function readGrid(
  source: NetcdfSource,
  field: SourceVariable,
  yDimension: string,
  xDimension: string,
  nx: number,
  ny: number,
  pointGeometry: boolean,
  fail: Fail,
): Promise<{ grid: ModelGrid; layout: ModelOutput["layout"] }> {
  const numeric = [...source.variables.values()].filter((variable) => isNumericType(variable.type));
  const onGrid = (variable: SourceVariable) => variable.dimensions.length === 2 && variable.dimensions[0] === yDimension && variable.dimensions[1] === xDimension;
  const gridMapping = gridMappingOf(source, field);
  const snapLike = gridMapping !== undefined || (yDimension === "y" && xDimension === "x");
  const axis = (dimension: string) => {
    const variable = source.variables.get(dimension);
    return variable && variable.dimensions.length === 1 && variable.dimensions[0] === dimension && isNumericType(variable.type) ? variable : undefined;
  };

  // SNAP: 2-D latitude and longitude on (y, x).
  const latitude2d = numeric.find((variable) => onGrid(variable) && isLatitude(variable));
  const longitude2d = numeric.find((variable) => onGrid(variable) && isLongitude(variable));
  if (latitude2d && longitude2d) {
    const lat = await readCoordinates(source, latitude2d, fail);
    const lon = await readCoordinates(source, longitude2d, fail);
    for (let k = 0; k < lat.length; k++) {
      if (Math.abs(lat[k]!) > 90) fail(`variable ${latitude2d.name} has ${lat[k]} at index ${k}, outside -90..90`, REPLACE_FIX);
    }
    const grid = curvilinearGrid(lon, lat, nx, ny);
    if (!pointGeometry) return { grid, layout: "SNAP" };
    // For point queries: the axes the 2-D arrays are a product of (SNAP's latitude_longitude, or rotated by the
    // pole), as the file writes them when its x/y agree with its arrays (x/y may be bare indices).
    const pole = rotatedPoleOf(gridMapping);
    const geometry = axesOf2dGrid(lon, lat, nx, ny, pole, await fileAxesOf(source, axis(yDimension), axis(xDimension), fail));
    if (geometry) return { grid: { ...grid, geometry }, layout: "SNAP" };
    const poleMissing = gridMapping && !pole && textAttribute(gridMapping.attributes, "grid_mapping_name") === "rotated_latitude_longitude";
    const noGeometry = poleMissing
      ? {
          message: `its grid mapping ${gridMapping.name} is rotated_latitude_longitude without grid_north_pole_latitude and grid_north_pole_longitude, ${NO_LOOKUP}`,
          fix: `add grid_north_pole_latitude and grid_north_pole_longitude to ${gridMapping.name} as the model defines its pole`,
        }
      : {
          message: `its 2-D ${latitude2d.name}/${longitude2d.name} are not a product of two axes${pole ? " in its rotated pole's coordinates" : ""}, ${NO_LOOKUP}`,
          fix: "for point queries, give the output on a regular latitude/longitude or rotated-pole grid (e.g. regridded with cdo remapbil)",
        };
    return { grid: { ...grid, noGeometry }, layout: "SNAP" };
  }

  // EEMEP: 1-D latitude over y and longitude over x.
  const yAxis = axis(yDimension);
  const xAxis = axis(xDimension);
  if (yAxis && xAxis && isLongitude(yAxis) && isLatitude(xAxis)) {
    fail(
      `variable ${field.name} has dimensions (${field.dimensions.join(", ")}): longitude before latitude, expected (time, lat, lon)`,
      `reorder the dimensions, e.g. \`ncpdq -a ${field.dimensions[0]},${xDimension},${yDimension} in.nc out.nc\``,
    );
  }
  if (yAxis && xAxis && isLatitude(yAxis) && isLongitude(xAxis)) {
    const lat = await readCoordinates(source, yAxis, fail);
    const lon = await readCoordinates(source, xAxis, fail);
    if (!isStrictlyMonotonic(lat) || lat.some((value) => Math.abs(value) > 90)) {
      fail(`variable ${yAxis.name} is not a latitude axis (strictly increasing or decreasing, within -90..90)`, REPLACE_FIX);
    }
    if (!isStrictlyMonotonic(unwrapAxis(lon)) || Math.abs(lon[lon.length - 1]! - lon[0]!) > 360 + 1e-6) {
      fail(`variable ${xAxis.name} is not a longitude axis (strictly increasing or decreasing)`, REPLACE_FIX);
    }
    return { grid: regularGrid(lon, lat), layout: snapLike ? "SNAP" : "EEMEP" };
  }

  // SNAP with a rotated pole and only its rotated axes: compute the 2-D arrays.
  if (gridMapping && textAttribute(gridMapping.attributes, "grid_mapping_name") === "rotated_latitude_longitude" && yAxis && xAxis) {
    const pole = rotatedPoleOf(gridMapping);
    if (pole === undefined) {
      fail(`variable ${gridMapping.name} (rotated_latitude_longitude) lacks grid_north_pole_latitude or grid_north_pole_longitude`, REPLACE_FIX);
    }
    // Without 2-D arrays the rotated axes alone place the grid: they must be in degrees (x/y as bare cell
    // indices, which some writers store, would put the ash thousands of kilometres away).
    for (const [rotated, name] of [[xAxis, "grid_longitude"], [yAxis, "grid_latitude"]] as const) {
      const units = textAttribute(rotated.attributes, "units")?.trim();
      // UDUNITS' spellings of degrees; without units, CF's standard_name says the same.
      const inDegrees = units === undefined ? textAttribute(rotated.attributes, "standard_name") === name : /^(degrees?|deg|arc_?degrees?|°)(_?[ne](ast|orth)?)?$/i.test(units);
      if (!inDegrees) {
        fail(
          `variable ${rotated.name} has units ${units === undefined ? "(none)" : `"${units}"`}, not degrees, and the file has no 2-D latitude/longitude: the rotated grid cannot be placed`,
          `give ${rotated.name} as the rotated ${name === "grid_longitude" ? "longitudes" : "latitudes"} of the cell centres in degrees (standard_name = "${name}", units = "degrees"), or add the 2-D latitude and longitude variables SNAP writes`,
        );
      }
    }
    const rlat = await readCoordinates(source, yAxis, fail);
    const rlon = await readCoordinates(source, xAxis, fail);
    const lat = new Float64Array(nx * ny);
    const lon = new Float64Array(nx * ny);
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        const [longitude, latitude] = rotatedToGeographic(rlon[i]!, rlat[j]!, pole!.poleLat, pole!.poleLon, pole!.northPoleGridLon);
        lon[j * nx + i] = longitude;
        lat[j * nx + i] = latitude;
      }
    }
    const grid = curvilinearGrid(lon, lat, nx, ny);
    const axes = await fileAxesOf(source, yAxis, xAxis, fail);
    if (axes) return { grid: { ...grid, geometry: { kind: "rotated", ...axes, ...pole! } }, layout: "SNAP" };
    const noGeometry = { message: `its rotated axes ${xAxis.name} and ${yAxis.name} are not strictly monotonic, ${NO_LOOKUP}`, fix: `write ${xAxis.name} and ${yAxis.name} as the rotated longitudes and latitudes of the cell centres, in order` };
    return { grid: { ...grid, noGeometry }, layout: "SNAP" };
  }

  return fail(
    `cannot find where the grid of ${field.name} lies: no 1-D latitude/longitude over (${yDimension}, ${xDimension}) (EEMEP) nor 2-D latitude/longitude on (${yDimension}, ${xDimension}) (SNAP)`,
    "give the model output with its coordinate variables (lat and lon, or latitude and longitude)",
  );
}

const NO_LOOKUP = "so /point and /route cannot look places up in its grid (its maps and ash areas are published)";

/** The 1-D axes of cell centres as the file writes them (x longitudes, unwrapped); undefined without both, or when not strictly monotonic. */
async function fileAxesOf(source: NetcdfSource, yAxis: SourceVariable | undefined, xAxis: SourceVariable | undefined, fail: Fail): Promise<{ x: number[]; y: number[] } | undefined> {
  if (!yAxis || !xAxis) return undefined;
  const y = await readCoordinates(source, yAxis, fail);
  const x = unwrapAxis(await readCoordinates(source, xAxis, fail));
  if (!isStrictlyMonotonic(y) || !isStrictlyMonotonic(x)) return undefined;
  return { x: Array.from(x), y: Array.from(y) };
}

/** The pole of a `rotated_latitude_longitude` grid mapping; undefined for any other mapping or without its pole. */
function rotatedPoleOf(gridMapping: SourceVariable | undefined): RotatedPole | undefined {
  if (!gridMapping || textAttribute(gridMapping.attributes, "grid_mapping_name") !== "rotated_latitude_longitude") return undefined;
  const poleLat = numberAttribute(gridMapping.attributes, "grid_north_pole_latitude")?.[0];
  const poleLon = numberAttribute(gridMapping.attributes, "grid_north_pole_longitude")?.[0];
  if (poleLat === undefined || poleLon === undefined) return undefined;
  return { poleLat, poleLon, northPoleGridLon: numberAttribute(gridMapping.attributes, "north_pole_grid_longitude")?.[0] ?? 0 };
}

/** The grid-mapping variable: the field's `grid_mapping` attribute, else a variable `projection` with a grid_mapping_name. */
function gridMappingOf(source: NetcdfSource, field: SourceVariable): SourceVariable | undefined {
  const named = textAttribute(field.attributes, "grid_mapping")?.trim();
  const candidate = source.variables.get(named || "projection");
  return candidate && textAttribute(candidate.attributes, "grid_mapping_name") ? candidate : undefined;
}

async function readCoordinates(source: NetcdfSource, variable: SourceVariable, fail: Fail): Promise<Float64Array> {
  const count = variable.shape.reduce((product, size) => product * size, 1);
  if (count > MODEL_LIMITS.maxCoordinateElements) fail(`variable ${variable.name} has ${count} values, more than the ${MODEL_LIMITS.maxCoordinateElements} ashcast reads`, REPLACE_FIX);
  const raw = await source.readWhole(variable.name);
  const scale = numberAttribute(variable.attributes, "scale_factor")?.[0] ?? 1;
  const offset = numberAttribute(variable.attributes, "add_offset")?.[0] ?? 0;
  const fill = numberAttribute(variable.attributes, "_FillValue")?.[0];
  const values = new Float64Array(raw.length);
  for (let k = 0; k < raw.length; k++) {
    const value = raw[k]!;
    if (!Number.isFinite(value) || value === fill || (fill !== undefined && value === Math.fround(fill)) || value === DEFAULT_FILL[variable.type]) {
      fail(`variable ${variable.name} has a missing or non-finite value at index ${k}`, "give every grid cell its coordinates: the file is incomplete or damaged");
    }
    values[k] = value * scale + offset;
  }
  return values;
}

/**
 * toMgPerM3 for float fields (what EEMEP and SNAP write), three times as fast: one array type, and the
 * zero cells (most of a field) skipped, and the others listed as they go (FieldCells.nonZero). The same
 * arithmetic, so the same values; undefined at the first value that is not a concentration, for toMgPerM3 to report.
 */
function float32ToMgPerM3(raw: Float32Array, variable: FieldVariable): FieldCells | undefined {
  const { scale, offset, factor, fills } = variable;
  if (fills.length > 4 || variable.packed) return undefined;
  const [fill1 = Number.NaN, fill2 = Number.NaN, fill3 = Number.NaN, fill4 = Number.NaN] = fills;
  // 0 converts to 0 (and -0 to 0) when nothing is added to it: left as the new array has it, unless 0 is a fill value.
  const skipZero = offset === 0 && !fills.includes(0);
  const field = new Float32Array(raw.length);
  const nonZero = nonZeroScratch(raw.length);
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let count = 0;
  let missing = 0;
  for (let block = 0; block < raw.length; block += ZERO_BLOCK) {
    const end = Math.min(raw.length, block + ZERO_BLOCK);
    // Most of a field is +0 (all bits clear): a block of them is passed over by one native comparison.
    if (skipZero && ZERO_BYTES.compare(bytes, block * 4, end * 4, 0, (end - block) * 4) === 0) continue;
    for (let k = block; k < end; k++) {
      const value = raw[k]!;
      if (value === 0 && skipZero) continue;
      nonZero[count++] = k;
      if (value !== value || value === fill1 || value === fill2 || value === fill3 || value === fill4) {
        field[k] = Number.NaN;
        missing++;
        continue;
      }
      const converted = Math.fround((value * scale + offset) * factor);
      if (!(converted >= 0 && converted <= MAX_CODED_MG_M3)) return undefined;
      field[k] = converted + 0;
    }
  }
  return { values: field, nonZero: nonZero.slice(0, count), missing };
}

/** Cells compared at once with ZERO_BYTES: about a row of a regional grid. */
const ZERO_BLOCK = 1024;
const ZERO_BYTES = Buffer.alloc(ZERO_BLOCK * 4);

/** The cells of a converted field that are not 0 (missing ones included). */
function cellsOf(field: Float32Array): FieldCells {
  const nonZero = nonZeroScratch(field.length);
  let count = 0;
  let missing = 0;
  for (let k = 0; k < field.length; k++) {
    const value = field[k]!;
    if (value === 0) continue;
    nonZero[count++] = k;
    if (value !== value) missing++;
  }
  return { values: field, nonZero: nonZero.slice(0, count), missing };
}

/** Scratch for a field's cells that are not 0, grown to the largest field seen on this thread; copied out before anything is awaited. */
let nonZeroCells = new Uint32Array(0);
function nonZeroScratch(length: number): Uint32Array {
  if (nonZeroCells.length < length) nonZeroCells = new Uint32Array(length);
  return nonZeroCells;
}

/** `2019-03-22_15:32:01` (and ISO spellings) to a normalised instant; undefined when absent or unreadable. */
function simulationStartOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const match = /^\s*(\d{4})-(\d{2})-(\d{2})[_T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?\s*(Z|UTC)?\s*$/i.exec(text);
  if (match) return normaliseInstant(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}Z`);
  return normaliseInstant(text);
}

/** ncatted's name of a netCDF type, for an attribute of the variable's own type. */
const NCATTED_TYPES: Partial<Record<string, string>> = { byte: "b", ubyte: "ub", short: "s", ushort: "us", int: "l", uint: "ul", int64: "ll", uint64: "ull", float: "f", double: "d" };

function toMgPerM3(raw: NumericArray, variable: FieldVariable, timeIndex: number, time: string, nx: number, fail: Fail): FieldCells {
  if (raw instanceof Float32Array) {
    const field = float32ToMgPerM3(raw, variable);
    if (field) return field;
  }
  const { scale, offset, factor, fills, packed, unsignedSpan } = variable;
  const [fill1 = Number.NaN, fill2 = Number.NaN, fill3 = Number.NaN, fill4 = Number.NaN] = fills;
  const manyFills = fills.length > 4;
  // A packed value is only known to half a packing step: one that close to 0 is 0 (-9e-13 from 0 packed with an offset).
  const zeroWithin = packed ? Math.abs(scale) / 2 : 0;
  const field = new Float32Array(raw.length);
  for (let k = 0; k < raw.length; k++) {
    const stored = raw[k]!;
    // Fill values are compared as stored (a _FillValue has the variable's own type, signed in a classic file).
    if (stored !== stored || stored === fill1 || stored === fill2 || stored === fill3 || stored === fill4 || (manyFills && fills.includes(stored))) {
      field[k] = Number.NaN;
      continue;
    }
    const value = unsignedSpan && stored < 0 ? stored + unsignedSpan : stored;
    const unpacked = value * scale + offset;
    const converted = unpacked < 0 && unpacked > -zeroWithin ? 0 : Math.fround(unpacked * factor);
    if (converted >= 0 && converted <= MAX_CODED_MG_M3) {
      field[k] = converted + 0; // -0 to 0
      continue;
    }
    const at = `at time index ${timeIndex} (${time}), row ${Math.floor(k / nx)}, column ${k % nx}`;
    const asStored = packed || unsignedSpan ? `; stored as ${stored}` : "";
    if (converted < 0) {
      const invalid = variable.validMin !== undefined && value < variable.validMin;
      fail(
        `variable ${variable.name} has a negative concentration (${unpacked} ${variable.units}${asStored}) ${at}${invalid ? `, below its valid_min ${variable.validMin}` : ""}`,
        invalid
          ? `ashcast reads missing cells from _FillValue or missing_value only: set ${variable.name}:missing_value to the value the model writes there (e.g. \`ncatted -a missing_value,${variable.name},o,${NCATTED_TYPES[variable.storedType] ?? "d"},${stored} in.nc\`)`
          : "concentrations cannot be negative: check scale_factor/add_offset and how the file was written, or replace it with the model's own output",
      );
    }
    fail(
      `variable ${variable.name} has an infinite or unrepresentable concentration (${unpacked} ${variable.units}${asStored}) ${at}: ashcast reads up to ${MAX_CODED_MG_M3.toPrecision(6)} mg/m³`,
      "replace the file with the model's own output (use _FillValue for missing cells)",
    );
  }
  return cellsOf(field);
}
