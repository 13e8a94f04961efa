/**
 * The operators' audit log: one JSON line per operator action (who, what, when, outcome), appended in
 * order, never rewritten. A failure to write it fails the action's answer loudly rather than silently.
 */
import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { oneAtATime } from "../flow/oneAtATime.ts";

export interface AuditEntry {
  /** The signed-in user. */
  who: string;
  /** e.g. `withdraw`. */
  action: string;
  /** What the action was about, e.g. a reftime. */
  target: string;
  /** `started`: written before an action that cannot be undone (a withdrawal, an upload), so none happens unrecorded. */
  outcome: "started" | "done" | "refused" | "failed" | "cancelled";
  detail?: string;
}

export interface AuditLog {
  readonly file: string;
  record(entry: AuditEntry): Promise<void>;
}

export function createAuditLog(file: string, now: () => Date = () => new Date()): AuditLog {
  const resolved = path.resolve(file);
  const ready = mkdir(path.dirname(resolved), { recursive: true });
  ready.catch(() => {}); // awaited by every write, which then fails with the reason
  // One write at a time, in the order the actions happened.
  const inTurn = oneAtATime();
  return {
    file: resolved,
    record(entry) {
      const line = `${JSON.stringify({ time: now().toISOString(), ...entry })}\n`;
      return inTurn(async () => {
        await ready;
        await appendFile(resolved, line, { mode: 0o600 });
      });
    },
  };
}
