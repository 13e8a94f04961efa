/** The run types of the specification (AshMetaModel.type), without zod: the CLI names them in --help. */
export const RUN_TYPES = ["Exercise", "Rehearsal", "Real Eruption"] as const;
export type RunType = (typeof RUN_TYPES)[number];

export const isRunType = (text: string): text is RunType => (RUN_TYPES as readonly string[]).includes(text);
