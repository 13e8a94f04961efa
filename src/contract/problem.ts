/** The one error body of the service: RFC 9457 problem details, `application/problem+json`. */
import { z } from "zod";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export const Problem = z.strictObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  detail: z.string(),
});
export type Problem = z.infer<typeof Problem>;
