/**
 * Typed arrays copied into shared memory: a structured clone (a worker's message) then passes the same
 * memory instead of copying it, so data sent with every task is copied once, not once per task.
 */
type TypedArray = Uint8Array | Uint8ClampedArray | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

export function inSharedMemory<T extends TypedArray>(values: T): T {
  const Constructor = values.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Constructor(new SharedArrayBuffer(values.byteLength));
  copy.set(values as never);
  return copy;
}
