/**
 * NetcdfSource over a file another thread described (SourceDescription): dimensions, variables and
 * attributes as they were, the variables read whole while it was opened, and the steps of chunked
 * variables read with Node's zlib (src/model/netcdf4Steps.ts). Anything else (a step plan cannot read, a
 * variable not read whole there) opens the file the usual way, once, on first need: a build worker then
 * loads h5wasm only for files whose layout our own reader does not know.
 */
import { inSharedMemory } from "../flow/sharedMemory.ts";
import { ChunkFile, type StepPlan, type StepReader } from "./netcdf4Steps.ts";
import { perVariable, type NetcdfSource, type NumericArray, type SourceDescription } from "./source.ts";

export function describedSource(description: SourceDescription, filePath: string, openFile: () => Promise<NetcdfSource>): NetcdfSource {
  let opened: Promise<NetcdfSource> | undefined;
  const file = (): Promise<NetcdfSource> => (opened ??= openFile());
  let chunkFile: ChunkFile | undefined;
  const reader = perVariable((name): StepReader | undefined => {
    const plan = description.stepPlans.get(name);
    if (!plan) return undefined;
    try {
      chunkFile ??= new ChunkFile(filePath);
      return chunkFile.stepsOf(plan);
    } catch {
      return undefined; // the file gone or unreadable: its own library says how
    }
  });
  const { format, dimensions, variables, globalAttributes } = description;
  return {
    format,
    dimensions,
    variables,
    globalAttributes,
    async readWhole(name): Promise<NumericArray> {
      return description.wholes.get(name) ?? (await file()).readWhole(name);
    },
    async readStep(name, index): Promise<NumericArray> {
      return reader(name)?.read(index) ?? (await file()).readStep(name, index);
    },
    stepPlan: (name) => description.stepPlans.get(name),
    close() {
      chunkFile?.close();
      void opened?.then((source) => source.close(), () => undefined);
    },
  };
}

/** What another thread needs to open the file as `source` opened it, after `wholes` were read from it, and read the steps of `fields`. */
export function describe(source: NetcdfSource, wholes: ReadonlyMap<string, NumericArray>, fields: readonly string[]): SourceDescription {
  const stepPlans = new Map<string, StepPlan>();
  for (const name of fields) {
    const plan = source.stepPlan?.(name);
    if (plan) stepPlans.set(name, plan);
  }
  // Sent with every task: a SNAP grid's 2-D coordinates are megabytes a message would otherwise copy each time.
  const shared = new Map([...wholes].map(([name, values]) => [name, inSharedMemory(values)]));
  return { format: source.format, dimensions: new Map(source.dimensions), variables: new Map(source.variables), globalAttributes: new Map(source.globalAttributes), wholes: shared, stepPlans };
}

/** The source, remembering what is read whole from it (for describe). */
export function recordingWholes(source: NetcdfSource): { source: NetcdfSource; wholes: Map<string, NumericArray> } {
  const wholes = new Map<string, NumericArray>();
  return {
    wholes,
    source: {
      format: source.format,
      dimensions: source.dimensions,
      variables: source.variables,
      globalAttributes: source.globalAttributes,
      async readWhole(name) {
        const values = await source.readWhole(name);
        wholes.set(name, values);
        return values;
      },
      readStep: (name, index) => source.readStep(name, index),
      ...(source.stepPlan ? { stepPlan: (name: string) => source.stepPlan!(name) } : {}),
      close: () => source.close(),
    },
  };
}
