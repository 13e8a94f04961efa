/** What operators see of the purges a publishing process sent to shared caches (`GET /datasets`, and a job's record). */
import { z } from "zod";
import { BuildReport } from "./buildReport.ts";

export const CachePurge = z.strictObject({
  /** The release whose publication the purge announces. */
  release: z.string(),
  /** The cache's purge address (without credentials). */
  cache: z.string(),
  tags: z.array(z.string()),
  state: z.enum(["sending", "done", "failed"]),
  attempts: z.number().int().nonnegative(),
  /** How many more times the batch now being sent is tried if it keeps failing; 0 once done or failed. */
  retriesLeft: z.number().int().nonnegative(),
  /** When the last attempt ended (or the purge was queued), ISO 8601 UTC. */
  at: z.string().meta({ format: "date-time" }),
  /** The last failure: what the cache answered, or why it could not be reached. */
  error: z.string().optional(),
});
export type CachePurge = z.infer<typeof CachePurge>;

/** `GET /datasets`: the build report, and the recent cache purges when this process publishes with --purge. */
export const DatasetsBody = BuildReport.extend({ cachePurges: z.array(CachePurge).optional() });
export type DatasetsBody = z.infer<typeof DatasetsBody>;
