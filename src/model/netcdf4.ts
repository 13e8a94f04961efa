/**
 * NetCDF-4 (HDF5) files through h5wasm: EEMEP writes these, compressed with deflate and often shuffle.
 *
 * - h5wasm's Node build reads the file from disk as HDF5 asks for blocks: nothing is loaded whole.
 * - HDF5 errors become exceptions (the library's "throwing error handler"), so a damaged file is an
 *   error here rather than a silent empty file; the caller has checked the magic bytes first.
 * - Dimension names come from the dimension scales netCDF-4 attaches to each variable; datasets that
 *   are only a dimension (netCDF-C writes them for dimensions without a coordinate variable) are
 *   dimensions, not variables.
 * - Only datasets of the root group are variables. Links to other files, virtual datasets and
 *   attributes longer than MODEL_LIMITS.maxAttributeElements are ignored.
 */
import { basename, resolve } from "node:path";
import h5wasm from "h5wasm/node";
import type { Dataset, Metadata } from "h5wasm/node";
import { MODEL_LIMITS } from "./limits.ts";
import { ChunkFile, type StepPlan, type StepReader } from "./netcdf4Steps.ts";
import { damagedFile, errorDetail, perVariable, recoverUtf8, type AttributeValue, type NcType, type NetcdfSource, type NumericArray, type SourceVariable } from "./source.ts";

type H5Module = Awaited<typeof h5wasm.ready>;

let modulePromise: Promise<H5Module> | undefined;

/** h5wasm, ready, with HDF5 errors thrown as exceptions (not printed to stderr). */
export function h5wasmReady(): Promise<H5Module> {
  modulePromise ??= h5wasm.ready.then((module) => {
    module.activate_throwing_error_handler();
    return module;
  });
  return modulePromise;
}

/** Attributes of the netCDF-4 and HDF5 dimension-scale machinery, not of the data. */
const HIDDEN_ATTRIBUTES = new Set(["CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "_Netcdf4Dimid", "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict", "_SuperblockVersion", "_IsNetcdf4"]);
const DIMENSION_ONLY = "This is a netCDF dimension but not a netCDF variable";
const H5T_INTEGER = 0;
const H5T_FLOAT = 1;
const H5T_STRING = 3;
/** Elements per read when a variable is read whole, so that the WebAssembly heap stays small. */
const BLOCK_ELEMENTS = 1 << 20;

export async function openNetcdf4(filePath: string, where: string): Promise<NetcdfSource> {
  const module = await h5wasmReady();
  let file: InstanceType<typeof h5wasm.File>;
  try {
    file = new h5wasm.File(resolve(filePath), "r");
  } catch (error) {
    throw damagedFile(where, `HDF5 could not open it (${errorDetail(error)})`, error);
  }
  try {
    return describe(file, module, new ChunkFile(resolve(filePath)), where);
  } catch (error) {
    file.close();
    throw error;
  }
}

function describe(file: InstanceType<typeof h5wasm.File>, module: H5Module, chunkFile: ChunkFile, where: string): NetcdfSource {
  const datasets = new Map<string, Dataset>();
  const dimensions = new Map<string, number>();
  const variables = new Map<string, SourceVariable>();
  let globalAttributes: Map<string, AttributeValue>;
  try {
    globalAttributes = readAttributes(file);
    for (const name of file.keys()) {
      if (file.get_type(name) !== module.H5G_DATASET) continue; // groups, links to other files, named types
      const dataset = new h5wasm.Dataset(file.file_id, `/${name}`);
      const metadata = dataset.metadata;
      if (metadata.virtual_sources?.length) continue; // a virtual dataset reads other files
      const shape = metadata.shape ?? [];
      const scaleName = dataset.get_scale_name();
      if (scaleName !== null && scaleName.startsWith(DIMENSION_ONLY)) {
        noteDimension(dimensions, name, shape[0] ?? 0);
        continue;
      }
      const dimensionNames = shape.map((size, index) => {
        if (scaleName !== null && shape.length === 1) return name; // a coordinate variable is its own dimension
        const scale = dataset.get_attached_scales(index)[0];
        return scale ? basename(scale) : `phony_dim_${size}`;
      });
      dimensionNames.forEach((dimension, index) => noteDimension(dimensions, dimension, shape[index]!));
      datasets.set(name, dataset);
      variables.set(name, { name, dimensions: dimensionNames, shape, type: ncType(metadata), attributes: readAttributes(dataset) });
    }
  } catch (error) {
    chunkFile.close();
    throw damagedFile(where, `its HDF5 structure is unreadable (${errorDetail(error)})`, error);
  }

  const dataset = (name: string): Dataset => {
    const found = datasets.get(name);
    if (!found) throw damagedFile(where, `no variable ${name}`);
    return found;
  };
  /** How to read the variable's steps without h5wasm, or why not (see netcdf4Steps.ts). */
  const stepPlan = perVariable((name): StepPlan | string => {
    const source = dataset(name);
    const metadata = source.metadata;
    return metadata.vlen ? "variable-length values" : chunkFile.stepPlan(objectAddress(source), metadata.shape ?? [], metadata);
  });
  const stepReader = perVariable((name): StepReader | string => {
    const plan = stepPlan(name);
    return typeof plan === "string" ? plan : chunkFile.stepsOf(plan);
  });
  return {
    format: "NetCDF-4/HDF5",
    dimensions,
    variables,
    globalAttributes,
    async readWhole(name) {
      const source = dataset(name);
      const shape = source.metadata.shape ?? [];
      if (shape.length === 0) return toNumeric(read(source, [], name, where));
      const rowElements = shape.slice(1).reduce((product, size) => product * size, 1);
      const rowsPerBlock = Math.max(1, Math.floor(BLOCK_ELEMENTS / Math.max(1, rowElements)));
      let result: NumericArray | undefined;
      for (let row = 0; row < shape[0]!; row += rowsPerBlock) {
        const block = toNumeric(read(source, [[row, Math.min(shape[0]!, row + rowsPerBlock)]], name, where));
        result ??= newLike(block, shape[0]! * rowElements);
        result.set(block as never, row * rowElements);
      }
      return result ?? new Float64Array(0);
    },
    async readStep(name, index) {
      const reader = stepReader(name);
      const values = typeof reader === "string" ? undefined : reader.read(index);
      return values ?? toNumeric(read(dataset(name), [[index, index + 1]], name, where));
    },
    stepPlan(name) {
      const plan = stepPlan(name);
      return typeof plan === "string" ? undefined : plan;
    },
    close() {
      chunkFile.close();
      file.close();
    },
  };
}

/** Where the dataset's object header lies: an HDF5 object reference is that address (8 bytes, little-endian). */
function objectAddress(dataset: Dataset): number {
  const reference = Uint8Array.from(dataset.create_reference().ref_data); // h5wasm gives a plain array
  return reference.length === 8 ? Number(new DataView(reference.buffer).getBigUint64(0, true)) : -1;
}

function read(dataset: Dataset, ranges: Array<[number, number]>, name: string, where: string): unknown {
  try {
    return ranges.length === 0 ? dataset.value : dataset.slice(ranges);
  } catch (error) {
    const at = ranges[0] ? ` at index ${ranges[0][0]} of its first dimension` : "";
    throw damagedFile(where, `variable ${name} cannot be read${at} (${errorDetail(error)})`, error);
  }
}

function noteDimension(dimensions: Map<string, number>, name: string, size: number): void {
  // An unlimited dimension is as long as its longest variable.
  dimensions.set(name, Math.max(dimensions.get(name) ?? 0, size));
}

function ncType(metadata: Metadata): NcType {
  if (metadata.type === H5T_FLOAT) return metadata.size === 4 ? "float" : metadata.size === 8 ? "double" : "other";
  if (metadata.type === H5T_INTEGER) {
    const types: Record<number, [NcType, NcType]> = { 1: ["byte", "ubyte"], 2: ["short", "ushort"], 4: ["int", "uint"], 8: ["int64", "uint64"] };
    const pair = types[metadata.size];
    return pair ? (metadata.signed ? pair[0] : pair[1]) : "other";
  }
  if (metadata.type === H5T_STRING) return metadata.size === 1 && !metadata.vlen ? "char" : "string";
  return "other";
}

function readAttributes(owner: InstanceType<typeof h5wasm.File> | Dataset): Map<string, AttributeValue> {
  const attributes = new Map<string, AttributeValue>();
  const all = owner.attrs;
  for (const name of Object.keys(all)) {
    if (HIDDEN_ATTRIBUTES.has(name)) continue;
    const attribute = all[name]!;
    const metadata = attribute.metadata;
    if (metadata.total_size > MODEL_LIMITS.maxAttributeElements) continue;
    if (metadata.type !== H5T_INTEGER && metadata.type !== H5T_FLOAT && metadata.type !== H5T_STRING) continue;
    const value = attributeValue(attribute.value);
    if (value !== undefined) attributes.set(name, value);
  }
  return attributes;
}

function attributeValue(value: unknown): AttributeValue | undefined {
  if (typeof value === "string") return recoverUtf8(value.replace(/\0+$/, ""));
  if (typeof value === "number") return [value];
  if (typeof value === "bigint") return [Number(value)];
  if (typeof value === "boolean") return [value ? 1 : 0];
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>, Number);
  }
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === "string")) return recoverUtf8(value.join("").replace(/\0+$/, ""));
    if (value.every((item) => typeof item === "number" || typeof item === "bigint")) return value.map(Number);
  }
  return undefined;
}

function toNumeric(value: unknown): NumericArray {
  if (value instanceof BigInt64Array || value instanceof BigUint64Array) return Float64Array.from(value, Number);
  if (
    value instanceof Float32Array ||
    value instanceof Float64Array ||
    value instanceof Int8Array ||
    value instanceof Uint8Array ||
    value instanceof Int16Array ||
    value instanceof Uint16Array ||
    value instanceof Int32Array ||
    value instanceof Uint32Array
  ) {
    return value;
  }
  if (typeof value === "number" || typeof value === "bigint") return Float64Array.of(Number(value));
  throw new TypeError("not numeric data");
}

function newLike(array: NumericArray, length: number): NumericArray {
  const Constructor = array.constructor as new (length: number) => NumericArray;
  return new Constructor(length);
}
