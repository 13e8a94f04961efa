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
    return;
  }
  const hazard = backtrackingHazard(source);
  if (hazard) context.addIssue({ code: "custom", message: `${hazard}: every request's User-Agent is matched against it, and such a pattern can take seconds on a crafted one (write it without the nesting, e.g. ^a+$ for ^(a+)+$)` });
});

/**
 * Why a pattern could take exponential time on a crafted input, or undefined: a backreference (also
 * renumbered when patterns are joined), or a repeated group that itself holds a repetition or an
 * alternative ((a+)+, (a|aa)*: star height above one, which JavaScript's backtracking engine explores
 * exponentially). Conservative: some harmless patterns such as (ab|cd)+ are refused too.
 */
export function backtrackingHazard(source: string): string | undefined {
  const groups: Array<{ repeats: boolean; alternates: boolean }> = [{ repeats: false, alternates: false }];
  let closed: { repeats: boolean; alternates: boolean } | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    const atom = closed;
    closed = undefined;
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return `"${source}" holds a backreference (\\${next})`;
      i++;
    } else if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
    } else if (c === "(") {
      groups.push({ repeats: false, alternates: false });
      if (source[i + 1] === "?") i += source[i + 2] === "<" && source[i + 3] !== "=" && source[i + 3] !== "!" ? source.indexOf(">", i) - i : source[i + 2] === "<" ? 3 : 2;
    } else if (c === ")") {
      const group = groups.pop()!;
      const parent = groups[groups.length - 1]!;
      parent.repeats ||= group.repeats;
      closed = group;
    } else if (c === "|") {
      groups[groups.length - 1]!.alternates = true;
    } else if (c === "*" || c === "+" || c === "?" || (c === "{" && /^\{\d+(,\d*)?\}/.test(source.slice(i)))) {
      const optional = c === "?" || /^\{0,1\}/.test(source.slice(i));
      if (c === "{") i = source.indexOf("}", i);
      if (source[i + 1] === "?") i++; // lazy: the same repetition
      // An optional group is tried at most twice; a repeated one, each way for each repetition.
      if (!optional && atom && (atom.repeats || atom.alternates)) return `"${source}" repeats a group that ${atom.repeats ? "itself repeats" : "holds alternatives"}`;
      groups[groups.length - 1]!.repeats = true;
    }
  }
  return undefined;
}

export const AddressEntry = z.string().superRefine((entry, context) => {
  const problem = AddressList.problem(entry);
  if (problem) context.addIssue({ code: "custom", message: problem });
});

/** How much of a User-Agent its patterns are matched against: enough for any real agent, a bound for a crafted one. */
export const MATCHED_AGENT_CHARS = 512;

/** The part of a User-Agent its patterns are matched against. */
export const matchedAgent = (agent: string): string => (agent.length > MATCHED_AGENT_CHARS ? agent.slice(0, MATCHED_AGENT_CHARS) : agent);

/** One case-insensitive expression matching any of the patterns; undefined for none. */
export function anyOf(patterns: readonly string[]): RegExp | undefined {
  return patterns.length ? new RegExp(patterns.map((source) => `(?:${source})`).join("|"), "i") : undefined;
}
