/** The one error body of the service: RFC 9457 problem details, `application/problem+json`. */
import { z } from "zod";
import { RunReport } from "./buildReport.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export const Problem = z.strictObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  detail: z.string(),
});
export type Problem = z.infer<typeof Problem>;

/** 422 to an upload whose run is not valid: the problem, and the run's validation report (RFC 9457 extension member). */
export const InvalidUploadProblem = Problem.extend({ report: RunReport });
export type InvalidUploadProblem = z.infer<typeof InvalidUploadProblem>;
