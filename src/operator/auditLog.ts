/**
 * The operators' audit log: one JSON line per operator action (who, what, when, outcome), appended in
 * order, never rewritten. A failure to write it fails the action's answer loudly rather than silently.
 */
import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";

export interface AuditEntry {
  /** The signed-in user. */
  who: string;
  /** e.g. `withdraw`. */
  action: string;
  /** What the action was about, e.g. a reftime. */
  target: string;
  outcome: "done" | "refused" | "failed";
  detail?: string;
}

export interface AuditLog {
  readonly file: string;
  record(entry: AuditEntry): Promise<void>;
}

export function createAuditLog(file: string, now: () => Date = () => new Date()): AuditLog {
  const resolved = path.resolve(file);
  let last: Promise<void> = mkdir(path.dirname(resolved), { recursive: true }).then(() => undefined);
  return {
    file: resolved,
    record(entry) {
      // One write at a time, in the order the actions happened.
      const line = `${JSON.stringify({ time: now().toISOString(), ...entry })}\n`;
      last = last.catch(() => undefined).then(() => appendFile(resolved, line, { mode: 0o600 }));
      return last;
    },
  };
}
