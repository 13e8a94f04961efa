/**
 * The entries the traffic file and the block list share: User-Agent patterns (regular expressions, case
 * ignored) and addresses or CIDR ranges, each checked at load with the entry's own problem.
 */
import { z } from "zod";
import { AddressList } from "./addressList.ts";

export const AgentPattern = z.string().min(1).max(200).superRefine((source, context) => {
  try {
    new RegExp(source, "i");
  } catch (error) {
    context.addIssue({ code: "custom", message: `not a regular expression: ${(error as Error).message}` });
  }
});

export const AddressEntry = z.string().superRefine((entry, context) => {
  const problem = AddressList.problem(entry);
  if (problem) context.addIssue({ code: "custom", message: problem });
});

/** One case-insensitive expression matching any of the patterns; undefined for none. */
export function anyOf(patterns: readonly string[]): RegExp | undefined {
  return patterns.length ? new RegExp(patterns.map((source) => `(?:${source})`).join("|"), "i") : undefined;
}
