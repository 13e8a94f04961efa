/**
 * NetCDF-3 files (classic `CDF\x01` and 64-bit offset `CDF\x02`) with netcdfjs parsing the header.
 *
 * netcdfjs wants the whole file in memory and reads a variable whole, as a JavaScript array of numbers.
 * Neither is acceptable for large model output, so it is given only the file's first bytes (the
 * header: at most MODEL_LIMITS.maxClassicHeaderBytes, first 1 MiB, then more only if the header is
 * longer), and data is read here, one record (time step) at a time, from the offsets the header gives.
 * Memory is bounded by the header limit plus one step, whatever the file size.
 *
 * CDF-5 (`CDF\x05`, 64-bit data) is recognised but refused with a fix: netcdfjs cannot parse it.
 */
import { closeSync, fstatSync, openSync, read } from "node:fs";
import { promisify } from "node:util";
import { NetCDFReader } from "netcdfjs";
import { MODEL_LIMITS } from "./limits.ts";
import { damagedFile, errorDetail, recoverUtf8, type AttributeValue, type NcType, type NetcdfSource, type NumericArray, type SourceVariable } from "./source.ts";
import { UserError } from "../errors.ts";

const readAt = promisify(read);
const FIRST_HEADER_READ = 1024 * 1024;
const STREAMING_RECORDS = 0xffffffff;

const TYPE_SIZES: Partial<Record<NcType, number>> = { byte: 1, char: 1, short: 2, int: 4, float: 4, double: 8 };

interface ClassicVariable {
  description: SourceVariable;
  record: boolean;
  begin: number;
  typeSize: number;
  /** Elements of one record (or of the whole variable when not a record variable) per index of the first dimension. */
  elementsPerIndex: number;
}

interface HeaderVariable {
  name: string;
  dimensions: number[];
  attributes: Array<{ name: string; type: string; value: unknown }>;
  type: string;
  size: number;
  offset: number;
  record: boolean;
}

export async function openNetcdf3(filePath: string, where: string): Promise<NetcdfSource> {
  const fd = openSync(filePath, "r");
  try {
    return await describe(fd, where);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

async function describe(fd: number, where: string): Promise<NetcdfSource> {
  const fileSize = fstatSync(fd).size;
  const head = Buffer.alloc(4);
  await readAt(fd, head, 0, 4, 0);
  const version = head[3];
  if (version === 5) {
    throw new UserError("the file is NetCDF-3 with 64-bit data (CDF-5), which ashcast cannot read", {
      where,
      fix: "write the model output as NetCDF-4, or convert it: `nccopy -k nc4 in.nc out.nc`",
    });
  }
  const reader = await parseHeader(fd, fileSize, where);
  const header = reader.header;
  const numberOfRecords = header.recordDimension.length;
  if (numberOfRecords === STREAMING_RECORDS) throw damagedFile(where, "its record count is the 'streaming' marker: the file was not closed by the program that wrote it");

  const dimensionList = header.dimensions ?? [];
  const dimensions = new Map<string, number>();
  dimensionList.forEach((dimension, index) => {
    dimensions.set(dimension.name, index === header.recordDimension.id ? numberOfRecords : dimension.size);
  });
  const headerVariables = (header.variables ?? []) as unknown as HeaderVariable[];
  const classic = new Map<string, ClassicVariable>();
  const variables = new Map<string, SourceVariable>();

  // The record size: every record variable's slab, padded to 4 bytes, except when there is only one.
  const recordVariables = headerVariables.filter((variable) => variable.record);
  let recordSize = 0;
  for (const variable of headerVariables) {
    const type = variable.type as NcType;
    const typeSize = TYPE_SIZES[type];
    if (typeSize === undefined) throw damagedFile(where, `variable ${variable.name} has an unknown data type`);
    const shape = variable.dimensions.map((id) => {
      const dimension = dimensionList[id];
      if (!dimension) throw damagedFile(where, `variable ${variable.name} refers to dimension number ${id}, which does not exist`);
      return id === header.recordDimension.id ? numberOfRecords : dimension.size;
    });
    const names = variable.dimensions.map((id) => dimensionList[id]!.name);
    const inner = shape.slice(1).reduce((product, size) => product * size, 1);
    const elementsPerIndex = variable.record || shape.length > 0 ? inner : 1;
    if (variable.record) recordSize += recordVariables.length === 1 ? inner * typeSize : Math.ceil((inner * typeSize) / 4) * 4;
    const description: SourceVariable = { name: variable.name, dimensions: names, shape, type, attributes: attributes(variable.attributes) };
    variables.set(variable.name, description);
    classic.set(variable.name, { description, record: variable.record, begin: variable.offset, typeSize, elementsPerIndex });
  }

  // Every variable's data must lie inside the file: a shorter file was cut off.
  for (const variable of classic.values()) {
    const slab = variable.elementsPerIndex * variable.typeSize;
    const indices = variable.description.shape[0] ?? 1;
    const end = variable.record
      ? numberOfRecords === 0
        ? 0 // no record written: nothing to read
        : variable.begin + (numberOfRecords - 1) * recordSize + slab
      : variable.begin + (variable.description.shape.length === 0 ? slab : indices * slab);
    if (end > fileSize) {
      throw damagedFile(where, `the file is ${fileSize} bytes but variable ${variable.description.name} needs ${end}: it is truncated`);
    }
  }

  const globalAttributes = attributes(header.globalAttributes as unknown as HeaderVariable["attributes"]);
  const version1 = header.version === 1;

  const readRange = async (variable: ClassicVariable, position: number, elements: number): Promise<NumericArray> => {
    const bytes = elements * variable.typeSize;
    const buffer = Buffer.allocUnsafeSlow(bytes);
    let done = 0;
    while (done < bytes) {
      const { bytesRead } = await readAt(fd, buffer, done, bytes - done, position + done);
      if (bytesRead === 0) throw damagedFile(where, `variable ${variable.description.name} ends before its data does: the file is truncated`);
      done += bytesRead;
    }
    return decode(buffer, variable.description.type);
  };

  const lookup = (name: string): ClassicVariable => {
    const variable = classic.get(name);
    if (!variable) throw damagedFile(where, `no variable ${name}`);
    return variable;
  };

  return {
    format: version1 ? "NetCDF-3 classic" : "NetCDF-3 64-bit offset",
    dimensions,
    variables,
    globalAttributes,
    async readWhole(name) {
      const variable = lookup(name);
      if (!variable.record) {
        const total = variable.description.shape.reduce((product, size) => product * size, 1);
        return readRange(variable, variable.begin, total);
      }
      const records = variable.description.shape[0]!;
      const parts: NumericArray[] = [];
      for (let index = 0; index < records; index++) parts.push(await readRange(variable, variable.begin + index * recordSize, variable.elementsPerIndex));
      const first = parts[0];
      if (!first) return new Float64Array(0);
      const Constructor = first.constructor as new (length: number) => NumericArray;
      const whole = new Constructor(records * variable.elementsPerIndex);
      parts.forEach((part, index) => whole.set(part as never, index * variable.elementsPerIndex));
      return whole;
    },
    async readStep(name, index) {
      const variable = lookup(name);
      const position = variable.record ? variable.begin + index * recordSize : variable.begin + index * variable.elementsPerIndex * variable.typeSize;
      return readRange(variable, position, variable.elementsPerIndex);
    },
    close() {
      closeSync(fd);
    },
  };
}

/** The header from the file's first bytes; more are read only when the header is longer. */
async function parseHeader(fd: number, fileSize: number, where: string): Promise<NetCDFReader> {
  let length = Math.min(fileSize, FIRST_HEADER_READ);
  for (;;) {
    const prefix = Buffer.allocUnsafeSlow(length);
    const { bytesRead } = await readAt(fd, prefix, 0, length, 0);
    try {
      return new NetCDFReader(prefix.subarray(0, bytesRead));
    } catch (error) {
      // Reading past the end of the prefix: the header goes on, or the file stops inside it.
      const pastEnd = error instanceof RangeError;
      if (pastEnd && length < fileSize && length < MODEL_LIMITS.maxClassicHeaderBytes) {
        length = Math.min(fileSize, MODEL_LIMITS.maxClassicHeaderBytes, length * 8);
        continue;
      }
      if (pastEnd && length >= MODEL_LIMITS.maxClassicHeaderBytes && length < fileSize) {
        throw damagedFile(where, `its header is longer than ${MODEL_LIMITS.maxClassicHeaderBytes} bytes (or its header is corrupt)`, error);
      }
      throw damagedFile(where, pastEnd ? "the file ends inside its header: it is truncated" : `its NetCDF-3 header is corrupt (${errorDetail(error)})`, error);
    }
  }
}

function attributes(list: HeaderVariable["attributes"] | undefined): Map<string, AttributeValue> {
  const result = new Map<string, AttributeValue>();
  for (const attribute of list ?? []) {
    const value = attribute.value;
    // netcdfjs reads NC_BYTE attributes as unsigned; NetCDF-3's byte is signed (a _FillValue of -1b is -1, not 255).
    const signed = attribute.type === "byte" ? (n: number) => (n > 127 ? n - 256 : n) : (n: number) => n;
    if (typeof value === "string") result.set(attribute.name, recoverUtf8(value.replace(/\0+$/, "")));
    else if (typeof value === "number") result.set(attribute.name, [signed(value)]);
    else if (Array.isArray(value) && value.length <= MODEL_LIMITS.maxAttributeElements && value.every((item) => typeof item === "number")) {
      result.set(attribute.name, (value as number[]).map(signed));
    }
  }
  return result;
}

/** Big-endian file bytes to a typed array of the host's order. */
function decode(buffer: Buffer, type: NcType): NumericArray {
  const { buffer: arrayBuffer, byteOffset, byteLength } = buffer;
  switch (type) {
    case "byte":
      return new Int8Array(arrayBuffer, byteOffset, byteLength);
    case "char":
      return new Uint8Array(arrayBuffer, byteOffset, byteLength);
    case "short":
      buffer.swap16();
      return new Int16Array(arrayBuffer, byteOffset, byteLength / 2);
    case "int":
      buffer.swap32();
      return new Int32Array(arrayBuffer, byteOffset, byteLength / 4);
    case "float":
      buffer.swap32();
      return new Float32Array(arrayBuffer, byteOffset, byteLength / 4);
    case "double":
      buffer.swap64();
      return new Float64Array(arrayBuffer, byteOffset, byteLength / 8);
    default:
      throw new TypeError(`cannot decode ${type}`);
  }
}
