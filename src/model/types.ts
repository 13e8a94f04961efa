/**
 * Model output as the pipeline sees it, whatever the file format (NetCDF-4/HDF5 or NetCDF-3) and
 * layout (EEMEP regular lat/lon, SNAP with a rotated-pole grid mapping).
 */
import type { GridGeometry } from "../geo/gridCells.ts";
import type { GridToLonLat } from "../geo/types.ts";
import type { FieldMeaning } from "./fieldMeaning.ts";
import type { SourceDescription } from "./source.ts";

/** The flight-level bands of Volcanic Ash Advisory Centres, and the model variable of each. */
export const FLIGHT_LEVEL_BANDS = [
  { id: "fl000-200", label: "SFC/FL200", variable: "MAX6h_ASH_fl000-200" },
  { id: "fl200-350", label: "FL200/350", variable: "MAX6h_ASH_fl200-350" },
  { id: "fl350-550", label: "FL350/550", variable: "MAX6h_ASH_fl350-550" },
] as const;
export type FlightLevelBand = (typeof FLIGHT_LEVEL_BANDS)[number];

/** Default concentration thresholds in mg/m³ (defined with the class table). */
export { DEFAULT_THRESHOLDS_MG_M3 } from "../contract/ashClasses.ts";

export interface ModelGrid {
  /** Columns (x) and rows (y); a field is row-major: values[y * nx + x]. */
  nx: number;
  ny: number;
  /** "regular": 1-D lat/lon axes; "curvilinear": 2-D latitude/longitude (e.g. a rotated pole). */
  kind: "regular" | "curvilinear";
  /** Fractional grid coordinates to lon/lat (bilinear between cell centres). */
  toLonLat: GridToLonLat;
  /** The model domain: extreme longitudes and latitudes of the cell centres. */
  domain: { north: number; south: number; east: number; west: number };
  /** Typical cell size in degrees of latitude (for simplification tolerances and drawing). */
  cellDegrees: number;
  /**
   * The axes of cell centres for point queries (regular lat/lon, or rotated pole with its 1-D rotated
   * axes, from the file's axes or its 2-D arrays: src/model/gridAxes.ts); absent for any other curvilinear grid.
   */
  geometry?: GridGeometry;
  /** Why a grid has no geometry, and how to give it one (the build warns with it). */
  noGeometry?: { message: string; fix: string };
}

export interface ModelVariable {
  name: string;
  band: FlightLevelBand;
  /** Units as written in the file (e.g. `ug/m3`); fields are always returned in mg/m³. */
  units: string;
  /** What the field is (a mean over hours, a maximum over the band ...), from the file's attributes and name. */
  meaning: FieldMeaning;
}

export interface ModelOutput {
  layout: "EEMEP" | "SNAP";
  /** Normalised instants of the time axis. */
  times: string[];
  grid: ModelGrid;
  /** The flight-level variables present (MAX6h_ASH_fl...), in band order. */
  variables: ModelVariable[];
  /** Variables named as flight-level ash (MAX6h_ASH_fl<lower>-<upper>) for a band the product does not have, e.g. fl550-650. */
  unpublishedVariables: string[];
  /** SIMULATION_START_DATE, normalised, when the file has it. */
  simulationStart?: string;
  /** The `title` global attribute, when present. */
  title?: string;
  /**
   * One time step of one variable in mg/m³, row-major (values[y * nx + x]); missing values are NaN.
   * Reads only that step from the file: memory does not grow with the number of steps.
   */
  readField(variable: string, timeIndex: number): Promise<Float32Array>;
  /** readField, with the cells a pass over the field must visit: most cells of a model's field hold no ash. */
  readFieldCells(variable: string, timeIndex: number): Promise<FieldCells>;
  /** The file as opened here, for another thread to open it without describing it again (openModelOutput's `described`). */
  description(): SourceDescription;
  close(): void;
}

export interface FieldCells {
  /** What readField gives. */
  values: Float32Array;
  /** Every cell whose value is not 0 (missing ones included), perhaps a few that are, ascending. */
  nonZero: Uint32Array;
  /** The cells without a value (NaN in `values`). */
  missing: number;
}
