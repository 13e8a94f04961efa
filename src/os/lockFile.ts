/**
 * A lock between processes: a file holding the holder's pid (and its start time, where Linux says it: a pid
 * reused by another process since does not hold the lock). It appears whole (written aside, then
 * hard-linked into place), so no reader ever sees it empty; a lock left by a dead process is moved aside
 * atomically, so two takers cannot both take it over.
 */
import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isProcessAlive, processStartTime } from "./processes.ts";

/** `takenOver`: the lock was left by a process that died, which may have left other things behind too. */
export type LockAttempt = { kind: "taken"; release: () => Promise<void>; takenOver: boolean } | { kind: "held"; pid: number };

/** Takes the lock at `lockPath` (its directory must exist), or says which live process holds it. */
export async function tryLock(lockPath: string, temporaryPrefix: string): Promise<LockAttempt> {
  const dir = path.dirname(lockPath);
  const tmpName = () => path.join(dir, `${temporaryPrefix}${process.pid}-${randomBytes(6).toString("hex")}`);
  const mine = `${process.pid} ${randomBytes(6).toString("hex")} ${processStartTime(process.pid) ?? "-"}\n`;
  const aside = tmpName();
  await writeFile(aside, mine);
  let takenOver = false;
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(aside, lockPath);
        return {
          kind: "taken",
          takenOver,
          release: async () => {
            // Only our own lock is removed, never one another taker took after ours was judged stale.
            if ((await readFile(lockPath, "utf8").catch(() => "")) === mine) await rm(lockPath, { force: true });
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const text = await readFile(lockPath, "utf8").catch(() => undefined);
      if (text === undefined) continue; // released in between: try again
      const holder = Number.parseInt(text, 10);
      // Our own pid in a lock we did not take is a leftover of an earlier process that had this pid; so is a
      // live pid that started at another time than the holder did.
      const started = text.trim().split(" ")[2];
      const startedNow = started === undefined || started === "-" ? undefined : processStartTime(holder);
      const sameProcess = startedNow === undefined || startedNow === started;
      if (Number.isInteger(holder) && holder !== process.pid && isProcessAlive(holder) && sameProcess) return { kind: "held", pid: holder };
      // Left by a process that was killed: move it aside, and put it back if it was not the one we judged.
      const stale = tmpName();
      try {
        await rename(lockPath, stale);
      } catch {
        continue; // another taker moved it first
      }
      if ((await readFile(stale, "utf8").catch(() => "")) !== text) await rename(stale, lockPath).catch(() => {});
      else {
        await rm(stale, { force: true });
        takenOver = true;
      }
    }
    return { kind: "held", pid: Number.NaN };
  } finally {
    await rm(aside, { force: true });
  }
}

/**
 * Waits for the lock up to `waitMs`, trying every few milliseconds; tells `onWait` once who holds it.
 * Returns the release function, or the holder's pid when the wait ran out.
 */
export async function waitForLock(lockPath: string, temporaryPrefix: string, options: { waitMs: number; onWait?: (pid: number) => void }): Promise<LockAttempt> {
  const deadline = Date.now() + options.waitMs;
  let told = false;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    const attempt = await tryLock(lockPath, temporaryPrefix);
    if (attempt.kind === "taken" || Date.now() >= deadline) return attempt;
    if (!told) options.onWait?.(attempt.pid);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
