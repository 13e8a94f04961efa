/**
 * The machine-readable build report written into every release (`report.json`), and read by
 * `/healthz` and by operators. One entry per run folder, with every problem found.
 */
import { z } from "zod";
import { PublishedInstant, RunType } from "./ashModel.ts";

export const RUN_STATUSES = [
  "published", // built from its current files and served
  "kept-last-good", // its current files are invalid or incomplete; the last good version is still served
  "invalid", // never published: see issues
  "waiting", // files still arriving (*.part); nothing published yet
  "duplicate", // same content as another folder with the same reftime; ignored
  "variant-conflict", // same reftime as another folder with other content; the other one won
] as const;
export const RunStatus = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatus>;

export const ReportIssue = z.strictObject({
  severity: z.enum(["error", "warning"]),
  file: z.string(),
  field: z.string().optional(),
  message: z.string(),
  fix: z.string(),
});

export const RunReport = z.strictObject({
  folder: z.string(),
  status: RunStatus,
  reftime: PublishedInstant.optional(),
  type: RunType.optional(),
  /** Why this run was rebuilt in this build; absent when it was reused unchanged. */
  rebuilt: z.string().optional(),
  note: z.string().optional(),
  issues: z.array(ReportIssue),
});
export type RunReport = z.infer<typeof RunReport>;

export const BuildReport = z.strictObject({
  release: z.string(),
  built: PublishedInstant,
  durationMs: z.number().nonnegative(),
  counts: z.strictObject({
    folders: z.number().int(),
    published: z.number().int(),
    rebuilt: z.number().int(),
    errors: z.number().int(),
    warnings: z.number().int(),
  }),
  runs: z.array(RunReport),
  withdrawn: z.array(PublishedInstant),
});
export type BuildReport = z.infer<typeof BuildReport>;
