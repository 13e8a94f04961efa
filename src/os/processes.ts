import { readFileSync } from "node:fs";

/** Whether a process of this machine is alive (signal 0 probes without sending anything). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * When a process started, as Linux counts it (field 22 of /proc/<pid>/stat, clock ticks since boot); undefined
 * where there is no /proc or no such process. A pid and its start time name one process: a pid alone may have
 * been given to another since (after a reboot or a container restart).
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
