/**
 * What openModelOutput needs from a NetCDF file, whatever its format: dimensions, variables with
 * their attributes, and reads of a whole small variable or of one index of the first dimension.
 * netcdf4.ts (HDF5 via h5wasm) and netcdf3.ts (classic via netcdfjs) implement it.
 */
import { UserError } from "../errors.ts";
import type { StepPlan } from "./netcdf4Steps.ts";

export type NumericArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array;

/** NetCDF type names (netCDF-4 spelling); "other" for anything that is not a number or text. */
export type NcType = "byte" | "ubyte" | "short" | "ushort" | "int" | "uint" | "int64" | "uint64" | "float" | "double" | "char" | "string" | "other";

/** Text attributes as strings; numeric attributes as arrays of numbers (one element for a scalar). */
export type AttributeValue = string | number[];

export interface SourceVariable {
  name: string;
  /** Dimension names, outermost first. */
  dimensions: string[];
  shape: number[];
  type: NcType;
  attributes: ReadonlyMap<string, AttributeValue>;
}

export interface NetcdfSource {
  /** "NetCDF-4/HDF5", "NetCDF-3 classic", "NetCDF-3 64-bit offset": for messages. */
  format: string;
  dimensions: ReadonlyMap<string, number>;
  variables: ReadonlyMap<string, SourceVariable>;
  globalAttributes: ReadonlyMap<string, AttributeValue>;
  /** The whole variable, row-major. The caller bounds its size first. */
  readWhole(name: string): Promise<NumericArray>;
  /** Index `index` of the first dimension, row-major: one time step of a (time, y, x) variable. */
  readStep(name: string, index: number): Promise<NumericArray>;
  /** How another thread can read the variable's steps from the file on its own, when this format can say. */
  stepPlan?(name: string): StepPlan | undefined;
  close(): void;
}

/**
 * A source as one thread opened it, for another thread to open the same file without describing it again
 * (the build's step workers: no h5wasm to load and no HDF5 structure to walk). Structured-cloneable.
 */
export interface SourceDescription {
  format: string;
  dimensions: Map<string, number>;
  variables: Map<string, SourceVariable>;
  globalAttributes: Map<string, AttributeValue>;
  /** The variables read whole while the file was opened (its axes): the same values, without reading them again. */
  wholes: Map<string, NumericArray>;
  /** The variables whose steps are read without the format's library (src/model/netcdf4Steps.ts). */
  stepPlans: Map<string, StepPlan>;
}

export function isNumericType(type: NcType): boolean {
  return type !== "char" && type !== "string" && type !== "other";
}

/** The text of an attribute, when it is text. */
export function textAttribute(attributes: ReadonlyMap<string, AttributeValue>, name: string): string | undefined {
  const value = attributes.get(name);
  return typeof value === "string" ? value : undefined;
}

/** The numbers of a numeric attribute, when it is numeric and not empty. */
export function numberAttribute(attributes: ReadonlyMap<string, AttributeValue>, name: string): number[] | undefined {
  const value = attributes.get(name);
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Text attributes as the readers decode them: byte by byte (netcdfjs, as signed bytes; h5wasm, as
 * Latin-1 for netCDF-C's ASCII-flagged strings). Files write UTF-8 (`µg/m³`), so bytes that form valid
 * UTF-8 are decoded as such; anything else is left as it was.
 */
export function recoverUtf8(text: string): string {
  if (!/[^\x00-\x7f]/.test(text)) return text;
  const bytes = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code > 0xff && code < 0xff80) return text; // a real character, not a byte
    bytes[index] = code & 0xff;
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    return text;
  }
}

/** `make`, made once per variable name. */
export function perVariable<T>(make: (name: string) => T): (name: string) => T {
  const made = new Map<string, T>();
  return (name) => {
    if (!made.has(name)) made.set(name, make(name));
    return made.get(name) as T;
  };
}

/** A damaged or unreadable file: the same `where` and fix for every format. */
export function damagedFile(where: string, detail: string, cause?: unknown): UserError {
  return new UserError(`the file cannot be read as NetCDF: ${detail}`, {
    where,
    fix: "the file is damaged or incomplete (for example a copy that stopped half-way): copy the model's output file again",
    cause,
  });
}

/** The deepest, most specific line of an HDF5 error stack, or the message of any other error. */
export function errorDetail(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split("\n").map((line) => line.trim()).filter(Boolean);
  // HDF5 stacks: "#006: /path/H5Fsuper.c line 577 in H5F__super_read(): truncated file: eof = ..."
  const frames = lines.filter((line) => /^#\d+:/.test(line));
  const last = frames.at(-1);
  if (last) {
    const match = /\(\):\s*(.*)$/.exec(last);
    return (match?.[1] ?? last).slice(0, 300);
  }
  return (lines[0] ?? "unknown error").slice(0, 300);
}
