/**
 * Writes realistic, synthetic dispersion-model output as NetCDF-4 (HDF5 through h5wasm), readable by
 * ncdump and by openModelOutput. Deterministic: the same arguments give the same bytes (HDF5 object
 * timestamps are pinned to the reference time while writing).
 *
 * - `eemep`: `eemep_hour_<YYYYMMDDTHHMMSS>.nc` as EEMEP writes it: 1-D `lat`/`lon`, `time` in
 *   `days since <reference date>`, MAX6h_ASH_fl000-200/fl200-350/fl350-550 (time, lat, lon) in ug/m3,
 *   COLUMN_ASH_kmax in ug/m2; plus `volcano.xml` beside it (the shape SnapPy writes).
 * - `snap`: `snap_<YYYYMMDDTHHMMSS>.nc` as SNAP writes it: dims `x`/`y` (rotated degrees), a
 *   `projection` grid mapping (`rotated_latitude_longitude`), 2-D `latitude`/`longitude`, `time` in
 *   `hours since <reference time>`, the same variables on (time, y, x). `--volcano-xml` adds volcano.xml.
 *   `--snap-grid latitude_longitude` writes the EEMEP grid that way instead (SNAP's other grid mapping).
 *
 * The plume: puffs released every 20 minutes at the vent, carried by a westerly wind veering slowly
 * to north-westerly, faster and more northerly with height (wind shear), each spreading with age
 * (narrower in the higher bands) and losing mass to fallout. Peak values cross 200, 2000 and 4000 µg/m³
 * (0.2, 2 and 4 mg/m³) in every band at many steps.
 *
 * Grid: EEMEP cell centres at lat0 + j·res, lon0 + i·res. SNAP: a rotated grid of the same size and
 * resolution (rotated degrees) centred on the same geographic point. The default pole
 * (grid_north_pole_latitude 22, grid_north_pole_longitude 140) is MET Norway's rotation "south pole at
 * 22°S 40°W" written the CF way: CF names the grid's NORTH pole, and with 140 the grid's centre
 * (rotated 0, 0) falls at 68°N 40°W; the -40 sometimes quoted is the south pole's longitude.
 *
 * Files are written one time step at a time (unlimited `time`, one chunk per step, deflate level 4):
 * memory holds one field per variable, whatever the number of steps. h5wasm sets one filter per
 * dataset, so the shuffle filter that EEMEP often adds is not written here (the reader's shuffle path
 * is tested with ncgen-made files).
 *
 * Usage (Node 24, as npm scripts run it; from a shell, node_modules/.bin/node):
 *   node scripts/make-model-output.ts --layout eemep|snap --out DIR [--nx 150 --ny 70
 *   --steps 24 --res 0.5 --lat0 40 --lon0 -45 --reftime 2019-03-22T12:00:00Z --volcano Hekla
 *   --vlat 63.98 --vlon -19.7 --altitude 1491 --top 12000 --pole-lat 22 --pole-lon 140 --volcano-xml
 *   --snap-grid rotated|rotated-index-axes|latitude_longitude]
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type h5wasmModule from "h5wasm/node";
import { geographicToRotated, rotatedToGeographic } from "../src/model/gridMapping.ts";
import { FLIGHT_LEVEL_BANDS } from "../src/model/types.ts";
import { compactInstant, formatInstant, parseInstant } from "../src/time/instant.ts";

export interface GeneratorOptions {
  /** Directory to write into (created when missing). */
  outDir: string;
  /** Columns, rows, hourly steps, resolution in degrees (rotated degrees for SNAP). */
  nx: number;
  ny: number;
  steps: number;
  res: number;
  /** South-west cell centre of the EEMEP grid; the SNAP grid is centred where the EEMEP one would be. */
  lat0: number;
  lon0: number;
  /** Model start (ISO 8601 with zone): the file-name stamp, SIMULATION_START_DATE, eruption start. */
  reftime: string;
  volcano: { name: string; lat: number; lon: number; altitude: number };
  /** Top of the ash column, metres above the vent. */
  plumeTopM: number;
  /** CF grid_north_pole_latitude / grid_north_pole_longitude of the SNAP grid. */
  poleLat: number;
  poleLon: number;
  /** Write volcano.xml beside the file (always for EEMEP). */
  volcanoXml: boolean;
  /**
   * SNAP's grid: `rotated` (x/y in rotated degrees), `rotated-index-axes` (the same grid with x/y written as
   * bare cell indices), or `latitude_longitude` (the EEMEP grid's geographic axes as x/y, no rotation).
   */
  snapGrid: "rotated" | "rotated-index-axes" | "latitude_longitude";
}

export const DEFAULT_OPTIONS: Omit<GeneratorOptions, "outDir"> = {
  nx: 150,
  ny: 70,
  steps: 24,
  res: 0.5,
  lat0: 40,
  lon0: -45,
  reftime: "2019-03-22T12:00:00Z",
  volcano: { name: "Hekla", lat: 63.98, lon: -19.7, altitude: 1491 },
  plumeTopM: 12000,
  poleLat: 22,
  poleLon: 140,
  volcanoXml: false,
  snapGrid: "rotated",
};

export interface WrittenOutput {
  /** The NetCDF file written. */
  file: string;
  /** volcano.xml, when written. */
  volcanoXml?: string;
  /** Normalised instants of the time axis. */
  times: string[];
}

/** Thickness of each flight-level band in metres (FL × 100 ft), for the column load. */
const BAND_DEPTH_M = [6096, 4572, 6096];
const FILL = Math.fround(9.96921e36);
const HOUR_MS = 3_600_000;
const KM_PER_DEGREE = 111.2;

/** One band's plume: wind (speed, heading), spreading and fallout. */
interface BandPlume {
  /** Wind speed in km/h. */
  speed: number;
  /** Heading (direction the ash moves to) at the start, degrees counter-clockwise from east, and its change per hour. */
  heading0: number;
  veerPerHour: number;
  /** Puff width in km at release and its growth per hour of age. */
  sigma0: number;
  sigmaGrowth: number;
  /** Peak concentration of one puff at release, µg/m³, and fallout e-folding time in hours. */
  amplitude: number;
  fallout: number;
}

const PLUMES: BandPlume[] = [
  { speed: 45, heading0: -8, veerPerHour: -1.1, sigma0: 16, sigmaGrowth: 5, amplitude: 8000, fallout: 30 },
  { speed: 70, heading0: 2, veerPerHour: -1.0, sigma0: 12, sigmaGrowth: 3.6, amplitude: 9500, fallout: 40 },
  { speed: 95, heading0: 10, veerPerHour: -0.9, sigma0: 9, sigmaGrowth: 2.6, amplitude: 11000, fallout: 50 },
];
const RELEASE_EVERY_H = 1 / 3;

/** The grid the plume is computed on: the file's own axes (geographic or rotated), with km per degree. */
export interface PlumeGrid {
  axisX: Float64Array;
  axisY: Float64Array;
  /** Geographic lon/lat to the grid's axes. */
  toAxes(lon: number, lat: number): [number, number];
}

/** Options with defaults filled in and checked. */
export function resolveOptions(options: Partial<GeneratorOptions> & { outDir: string }): GeneratorOptions {
  const resolved: GeneratorOptions = { ...DEFAULT_OPTIONS, ...options, volcano: { ...DEFAULT_OPTIONS.volcano, ...options.volcano } };
  const positiveInteger = (name: string, value: number) => {
    if (!Number.isInteger(value) || value < 2) throw new Error(`--${name} must be an integer of at least 2, got ${value}`);
  };
  positiveInteger("nx", resolved.nx);
  positiveInteger("ny", resolved.ny);
  if (!Number.isInteger(resolved.steps) || resolved.steps < 1 || resolved.steps > 1000) throw new Error(`--steps must be an integer from 1 to 1000, got ${resolved.steps}`);
  if (!(resolved.res > 0 && resolved.res <= 10)) throw new Error(`--res must be a resolution in degrees, more than 0 and at most 10, got ${resolved.res}`);
  if (parseInstant(resolved.reftime) === undefined) throw new Error(`--reftime must be an ISO 8601 instant with a zone, got ${resolved.reftime}`);
  if (resolved.lat0 < -90 || resolved.lat0 + (resolved.ny - 1) * resolved.res > 90) throw new Error("the grid goes beyond a pole: check --lat0, --ny and --res");
  if (resolved.nx * resolved.ny > 5_000_000) throw new Error(`the grid has ${resolved.nx * resolved.ny} cells; the generator writes at most 5,000,000 per field`);
  return resolved;
}

/** Writes EEMEP-layout output and volcano.xml; returns the paths. */
export async function writeEemepOutput(options: Partial<GeneratorOptions> & { outDir: string }): Promise<WrittenOutput> {
  const resolved = resolveOptions(options);
  const start = parseInstant(resolved.reftime)!;
  const grid = plumeGrid("eemep", resolved);
  const { axisX: lon, axisY: lat } = grid;
  const midnight = Math.floor(start / 86_400_000) * 86_400_000;
  const times = Array.from({ length: resolved.steps }, (_, k) => start + (k + 1) * HOUR_MS);
  const file = path.join(resolved.outDir, `eemep_hour_${stamp(start)}.nc`);

  await writeNetcdf(file, start, (out) => {
    globalText(out, "Conventions", "CF-1.0");
    globalText(out, "model", "EMEP MSC-W eEMEP (synthetic output of ashcast scripts/make-model-output.ts)");
    globalText(out, "title", `${resolved.volcano.name} ${formatInstant(start)}`);
    globalText(out, "SIMULATION_START_DATE", simulationStartDate(start));
    globalText(out, "history", "synthetic: made by ashcast scripts/make-model-output.ts, not a forecast");

    const time = out.create_dataset({ name: "time", data: Float64Array.from(times, (ms) => (ms - midnight) / 86_400_000), maxshape: [null], chunks: [1024], track_order: true });
    text(time, "long_name", "time at middle of period");
    text(time, "units", `days since ${formatInstant(midnight).slice(0, 10)} 00:00:00`);
    text(time, "calendar", "proleptic_gregorian");
    time.make_scale("time");
    const latitude = out.create_dataset({ name: "lat", data: Float32Array.from(lat), track_order: true });
    text(latitude, "long_name", "latitude");
    text(latitude, "units", "degrees_north");
    text(latitude, "standard_name", "latitude");
    latitude.make_scale("lat");
    const longitude = out.create_dataset({ name: "lon", data: Float32Array.from(lon), track_order: true });
    text(longitude, "long_name", "longitude");
    text(longitude, "units", "degrees_east");
    text(longitude, "standard_name", "longitude");
    longitude.make_scale("lon");
    return { dims: ["time", "lat", "lon"], attributes: () => undefined };
  }, resolved, grid, times);

  const volcanoXml = path.join(resolved.outDir, "volcano.xml");
  await writeFile(volcanoXml, volcanoXmlText(resolved, start));
  return { file, volcanoXml, times: times.map(formatInstant) };
}

/** Writes SNAP-layout output on a rotated-pole grid (and volcano.xml when asked); returns the paths. */
export async function writeSnapOutput(options: Partial<GeneratorOptions> & { outDir: string }): Promise<WrittenOutput> {
  const resolved = resolveOptions(options);
  const start = parseInstant(resolved.reftime)!;
  const { poleLat, poleLon, snapGrid } = resolved;
  const geographic = snapGrid === "latitude_longitude";
  const grid = plumeGrid(geographic ? "eemep" : "snap", resolved);
  const { axisX: rlon, axisY: rlat } = grid;
  const toGeographic = (x: number, y: number): [number, number] => (geographic ? [x, y] : rotatedToGeographic(x, y, poleLat, poleLon));
  const times = Array.from({ length: resolved.steps }, (_, k) => start + (k + 1) * HOUR_MS);
  const file = path.join(resolved.outDir, `snap_${stamp(start)}.nc`);

  await writeNetcdf(file, start, (out) => {
    globalText(out, "Conventions", "CF-1.0");
    globalText(out, "institution", "Norwegian Meteorological Institute, met.no (synthetic output of ashcast scripts/make-model-output.ts)");
    globalText(out, "title", `${resolved.volcano.name} ${formatInstant(start)}`);
    globalText(out, "summary", `SNAP volcanic ash run for ${resolved.volcano.name} (synthetic, not a forecast)`);
    globalText(out, "SIMULATION_START_DATE", simulationStartDate(start));

    const time = out.create_dataset({ name: "time", data: Float64Array.from(times, (ms) => (ms - start) / HOUR_MS), maxshape: [null], chunks: [1024], track_order: true });
    text(time, "long_name", "time");
    text(time, "units", `hours since ${formatInstant(start).slice(0, 10)} ${formatInstant(start).slice(11, 19)}`);
    text(time, "calendar", "standard");
    time.make_scale("time");
    const indexAxes = snapGrid === "rotated-index-axes";
    for (const [name, values, standard, long, units] of [
      ["x", rlon, geographic ? "longitude" : "grid_longitude", geographic ? "longitude" : "longitude in rotated pole grid", geographic ? "degrees_east" : "degrees"],
      ["y", rlat, geographic ? "latitude" : "grid_latitude", geographic ? "latitude" : "latitude in rotated pole grid", geographic ? "degrees_north" : "degrees"],
    ] as const) {
      const axis = out.create_dataset({ name, data: indexAxes ? Float32Array.from(values, (_, i) => i) : Float32Array.from(values), track_order: true });
      if (indexAxes) text(axis, "long_name", `${name} index`);
      else {
        text(axis, "standard_name", standard);
        text(axis, "long_name", long);
        text(axis, "units", units);
      }
      axis.make_scale(name);
    }
    const projection = out.create_dataset({ name: "projection", data: Int32Array.of(0), shape: [], track_order: true });
    if (geographic) text(projection, "grid_mapping_name", "latitude_longitude");
    else {
      text(projection, "grid_mapping_name", "rotated_latitude_longitude");
      projection.create_attribute("grid_north_pole_latitude", Float64Array.of(poleLat));
      projection.create_attribute("grid_north_pole_longitude", Float64Array.of(poleLon));
    }
    projection.create_attribute("earth_radius", Float64Array.of(6_371_000));

    const nx = resolved.nx;
    const latitude = new Float32Array(nx * resolved.ny);
    const longitude = new Float32Array(nx * resolved.ny);
    for (let j = 0; j < resolved.ny; j++) {
      for (let i = 0; i < nx; i++) {
        const [lonValue, latValue] = toGeographic(rlon[i]!, rlat[j]!);
        longitude[j * nx + i] = lonValue;
        latitude[j * nx + i] = latValue;
      }
    }
    for (const [name, values, units] of [["latitude", latitude, "degrees_north"], ["longitude", longitude, "degrees_east"]] as const) {
      const coordinate = out.create_dataset({ name, data: values, shape: [resolved.ny, nx], chunks: [resolved.ny, nx], compression: "gzip", compression_opts: 4, track_order: true });
      coordinate.attach_scale(0, "/y");
      coordinate.attach_scale(1, "/x");
      text(coordinate, "units", units);
      text(coordinate, "standard_name", name);
      text(coordinate, "long_name", name);
    }
    return {
      dims: ["time", "y", "x"],
      attributes: (variable) => {
        text(variable, "grid_mapping", "projection");
        text(variable, "coordinates", "longitude latitude");
      },
    };
  }, resolved, grid, times);

  let volcanoXml: string | undefined;
  if (resolved.volcanoXml) {
    volcanoXml = path.join(resolved.outDir, "volcano.xml");
    await writeFile(volcanoXml, volcanoXmlText(resolved, start));
  }
  return { file, ...(volcanoXml ? { volcanoXml } : {}), times: times.map(formatInstant) };
}

type H5File = InstanceType<typeof h5wasmModule.File>;
type H5Dataset = ReturnType<H5File["create_dataset"]>;

/**
 * Creates the file (as `<file>.part`, renamed when complete), lets `setup` write coordinates and
 * global attributes, then writes the ash variables one time step at a time.
 */
async function writeNetcdf(
  file: string,
  pinnedNow: number,
  setup: (out: H5File) => { dims: [string, string, string]; attributes: (variable: H5Dataset) => void },
  options: GeneratorOptions,
  grid: PlumeGrid,
  times: number[],
): Promise<void> {
  // Loaded here, not at the top: a command line with bad arguments fails without loading HDF5.
  const { h5wasmReady } = await import("../src/model/netcdf4.ts");
  const h5wasm = (await import("h5wasm/node")).default;
  await h5wasmReady();
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.part`;
  await rm(partial, { force: true });
  // HDF5 stamps objects with the current time: pin it, so that the same arguments give the same bytes.
  const realNow = Date.now;
  Date.now = () => pinnedNow;
  try {
    const out = new h5wasm.File(path.resolve(partial), "w", { track_order: true });
    try {
      const { dims, attributes } = setup(out);
      const { nx, ny } = options;
      const create = (name: string, units: string, longName: string) => {
        const variable = out.create_dataset({
          name,
          data: new Float32Array(0),
          shape: [0, ny, nx],
          maxshape: [null, ny, nx],
          dtype: "<f4",
          chunks: [1, ny, nx],
          compression: "gzip",
          compression_opts: 4,
          track_order: true,
        });
        dims.forEach((dim, index) => variable.attach_scale(index, `/${dim}`));
        text(variable, "long_name", longName);
        text(variable, "units", units);
        variable.create_attribute("_FillValue", Float32Array.of(FILL));
        attributes(variable);
        return variable;
      };
      const bands = FLIGHT_LEVEL_BANDS.map((band) => create(band.variable, "ug/m3", `maximum of 6-hour mean ash concentration, ${band.label}`));
      const column = create("COLUMN_ASH_kmax", "ug/m2", "ash column load");
      const start = parseInstant(options.reftime)!;
      for (let t = 0; t < times.length; t++) {
        const hours = (times[t]! - start) / HOUR_MS;
        const load = new Float32Array(nx * ny);
        for (let b = 0; b < bands.length; b++) {
          const field = plumeField(options, grid, b, hours);
          for (let k = 0; k < field.length; k++) load[k]! += field[k]! * BAND_DEPTH_M[b]!;
          appendStep(bands[b]!, t, field, ny, nx);
        }
        appendStep(column, t, load, ny, nx);
      }
    } finally {
      out.close();
    }
  } finally {
    Date.now = realNow;
  }
  await rename(partial, file);
}

function appendStep(variable: H5Dataset, t: number, field: Float32Array, ny: number, nx: number): void {
  variable.resize([t + 1, ny, nx]);
  variable.write_slice([[t, t + 1], [], []], field);
}

/**
 * The concentration of band `band` (0, 1, 2) in µg/m³ at `hours` after the eruption start, on the
 * grid's cells (row-major, y then x). Exported so tests know the values written.
 */
export function plumeField(options: GeneratorOptions, grid: PlumeGrid, band: number, hours: number): Float32Array {
  const plume = PLUMES[band]!;
  const { axisX, axisY } = grid;
  const nx = axisX.length;
  const ny = axisY.length;
  const sum = new Float64Array(nx * ny);
  const gx = new Float64Array(nx);
  const gy = new Float64Array(ny);
  const stepX = axisX[1]! - axisX[0]!;
  const stepY = axisY[1]! - axisY[0]!;
  const releases = Math.floor(hours / RELEASE_EVERY_H + 1e-9);
  for (let r = 0; r <= releases; r++) {
    const released = r * RELEASE_EVERY_H;
    const age = hours - released;
    // The puff's centre: carried from the vent in one-hour (or shorter) legs of the veering wind.
    let lon = options.volcano.lon;
    let lat = options.volcano.lat;
    for (let clock = released; clock < hours - 1e-9; ) {
      const leg = Math.min(1, hours - clock);
      const heading = ((plume.heading0 + plume.veerPerHour * (clock + leg / 2)) * Math.PI) / 180;
      const km = plume.speed * leg;
      lat += (km * Math.sin(heading)) / KM_PER_DEGREE;
      lon += (km * Math.cos(heading)) / (KM_PER_DEGREE * Math.cos((lat * Math.PI) / 180));
      clock += leg;
    }
    const sigma = plume.sigma0 + plume.sigmaGrowth * age;
    const pulse = 0.75 + 0.25 * Math.cos((2 * Math.PI * released) / 9);
    const amplitude = plume.amplitude * pulse * (plume.sigma0 / sigma) ** 2 * Math.exp(-age / plume.fallout);
    const [cx, cy] = grid.toAxes(lon, lat);
    const sigmaX = sigma / (KM_PER_DEGREE * Math.cos((cy * Math.PI) / 180));
    const sigmaY = sigma / KM_PER_DEGREE;
    // Cells within 4 sigma only: the rest adds nothing visible.
    const i0 = Math.max(0, Math.floor((cx - 4 * sigmaX - axisX[0]!) / stepX));
    const i1 = Math.min(nx - 1, Math.ceil((cx + 4 * sigmaX - axisX[0]!) / stepX));
    const j0 = Math.max(0, Math.floor((cy - 4 * sigmaY - axisY[0]!) / stepY));
    const j1 = Math.min(ny - 1, Math.ceil((cy + 4 * sigmaY - axisY[0]!) / stepY));
    if (i0 > i1 || j0 > j1) continue;
    for (let i = i0; i <= i1; i++) gx[i] = Math.exp(-0.5 * ((axisX[i]! - cx) / sigmaX) ** 2);
    for (let j = j0; j <= j1; j++) gy[j] = amplitude * Math.exp(-0.5 * ((axisY[j]! - cy) / sigmaY) ** 2);
    for (let j = j0; j <= j1; j++) {
      const row = j * nx;
      const wy = gy[j]!;
      for (let i = i0; i <= i1; i++) sum[row + i]! += wy * gx[i]!;
    }
  }
  const field = new Float32Array(nx * ny);
  // Below 1 µg/m³ is nothing: zeros compress well, as in real output.
  for (let k = 0; k < field.length; k++) field[k] = sum[k]! < 1 ? 0 : sum[k]!;
  return field;
}

/** The plume grid of the EEMEP or SNAP file these options give (for tests: plumeField on it). */
export function plumeGrid(layout: "eemep" | "snap", options: GeneratorOptions): PlumeGrid {
  if (layout === "eemep") {
    return {
      axisX: Float64Array.from({ length: options.nx }, (_, i) => round6(options.lon0 + i * options.res)),
      axisY: Float64Array.from({ length: options.ny }, (_, j) => round6(options.lat0 + j * options.res)),
      toAxes: (lon, lat) => [lon, lat],
    };
  }
  const [centreX, centreY] = geographicToRotated(options.lon0 + ((options.nx - 1) * options.res) / 2, options.lat0 + ((options.ny - 1) * options.res) / 2, options.poleLat, options.poleLon);
  const x0 = round6(centreX - ((options.nx - 1) * options.res) / 2);
  const y0 = round6(centreY - ((options.ny - 1) * options.res) / 2);
  return {
    axisX: Float64Array.from({ length: options.nx }, (_, i) => round6(x0 + i * options.res)),
    axisY: Float64Array.from({ length: options.ny }, (_, j) => round6(y0 + j * options.res)),
    toAxes: (lon, lat) => geographicToRotated(lon, lat, options.poleLat, options.poleLon),
  };
}

/** Mass eruption rate from the plume height (Mastin et al. 2009), kg/s. */
export function mastinRate(plumeTopM: number): number {
  return Math.round(2500 * (0.5 * (plumeTopM / 1000)) ** (1 / 0.241));
}

function volcanoXmlText(options: GeneratorOptions, start: number): string {
  const { volcano } = options;
  const end = formatInstant(start + options.steps * HOUR_MS);
  const attribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<volcanic_eruption_run run_time_hours="${options.steps}" output_directory="${attribute(path.basename(path.resolve(options.outDir)))}">`,
    '<model_setup use_restart_file="restart">',
    `   <weather_forecast reference_date="best" model_start_time="${formatInstant(start)}"/>`,
    "</model_setup>",
    `<volcano name="${attribute(volcano.name)}" lat="${volcano.lat}" lon="${volcano.lon}" altitude="${volcano.altitude}" />`,
    "<eruptions>",
    "<!-- bottom and top of ash-cloud in m above ground -->",
    "<!-- rate in kg/s -->",
    `<eruption start="${formatInstant(start)}" end="${end}" bottom="0" top="${options.plumeTopM}" rate="${mastinRate(options.plumeTopM)}" m63="0.05"/>`,
    "</eruptions>",
    "",
    "</volcanic_eruption_run>",
    "",
  ].join("\n");
}

/** Fixed-length string attributes: what netCDF-C reads as text. */
function text(variable: H5Dataset, name: string, value: string): void {
  variable.create_attribute(name, value, null, `S${Math.max(1, Buffer.byteLength(value))}`);
}

function globalText(out: H5File, name: string, value: string): void {
  out.create_attribute(name, value, null, `S${Math.max(1, Buffer.byteLength(value))}`);
}

/** `%Y-%m-%d_%H:%M:%S`, as EEMEP and SNAP write SIMULATION_START_DATE. */
function simulationStartDate(ms: number): string {
  return formatInstant(ms).replace("T", "_").replace("Z", "");
}

/** `YYYYMMDDTHHMMSS`, the stamp of EEMEP file names. */
function stamp(ms: number): string {
  return compactInstant(formatInstant(ms)).replace("Z", "");
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** `--lon0 -45` as `--lon0=-45`: parseArgs would take the negative number for an option. */
function joinNegativeValues(argv: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    if (/^--[a-z0-9-]+$/.test(arg) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: joinNegativeValues(argv),
    options: {
      layout: { type: "string" },
      out: { type: "string" },
      nx: { type: "string" },
      ny: { type: "string" },
      steps: { type: "string" },
      res: { type: "string" },
      lat0: { type: "string" },
      lon0: { type: "string" },
      reftime: { type: "string" },
      volcano: { type: "string" },
      vlat: { type: "string" },
      vlon: { type: "string" },
      altitude: { type: "string" },
      top: { type: "string" },
      "pole-lat": { type: "string" },
      "pole-lon": { type: "string" },
      "volcano-xml": { type: "boolean" },
      "snap-grid": { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  const layout = values.layout ?? "eemep";
  if (layout !== "eemep" && layout !== "snap") throw new Error(`--layout must be eemep or snap, got ${layout}`);
  if (!values.out) throw new Error("--out DIR is required");
  const number = (name: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value)) throw new Error(`--${name} must be a number, got ${text}`);
    return value;
  };
  const given: Partial<GeneratorOptions> & { outDir: string } = { outDir: values.out };
  const set = <K extends keyof GeneratorOptions>(key: K, value: GeneratorOptions[K] | undefined) => {
    if (value !== undefined) given[key] = value;
  };
  set("nx", number("nx", values.nx));
  set("ny", number("ny", values.ny));
  set("steps", number("steps", values.steps));
  set("res", number("res", values.res));
  set("lat0", number("lat0", values.lat0));
  set("lon0", number("lon0", values.lon0));
  set("reftime", values.reftime);
  set("plumeTopM", number("top", values.top));
  set("poleLat", number("pole-lat", values["pole-lat"]));
  set("poleLon", number("pole-lon", values["pole-lon"]));
  set("volcanoXml", values["volcano-xml"]);
  const snapGrid = values["snap-grid"];
  if (snapGrid !== undefined && snapGrid !== "rotated" && snapGrid !== "rotated-index-axes" && snapGrid !== "latitude_longitude") throw new Error(`--snap-grid must be rotated, rotated-index-axes or latitude_longitude, got ${snapGrid}`);
  set("snapGrid", snapGrid);
  given.volcano = {
    ...DEFAULT_OPTIONS.volcano,
    ...(values.volcano !== undefined ? { name: values.volcano } : {}),
    ...(values.vlat !== undefined ? { lat: number("vlat", values.vlat)! } : {}),
    ...(values.vlon !== undefined ? { lon: number("vlon", values.vlon)! } : {}),
    ...(values.altitude !== undefined ? { altitude: number("altitude", values.altitude)! } : {}),
  };
  const written = layout === "eemep" ? await writeEemepOutput(given) : await writeSnapOutput(given);
  console.log(written.file);
  if (written.volcanoXml) console.log(written.volcanoXml);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`make-model-output: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  });
}
