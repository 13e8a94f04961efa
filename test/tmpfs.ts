/** A small tmpfs for tests of a full disk (Linux, as root: as CI runs). */
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";

/** Mounts a tmpfs of `bytes` at a new directory; a reason when this machine does not allow it. */
export function tryMountTmpfs(bytes: number, what: string): { dir: string } | { reason: string } {
  if (process.platform !== "linux") return { reason: `tmpfs needs Linux, this is ${process.platform}` };
  const dir = execFileSync("mktemp", ["-d", path.join(os.tmpdir(), "ashcast-fulldisk-XXXXXX")], { encoding: "utf8" }).trim();
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", dir], { stdio: "pipe" });
    return { dir };
  } catch (error) {
    execFileSync("rmdir", [dir]);
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
    return { reason: `cannot mount a tmpfs for ${what} (${stderr || (error as Error).message}); run as root, as CI does` };
  }
}

/** Unmounts and removes a directory tryMountTmpfs made. */
export function unmountTmpfs(dir: string): void {
  execFileSync("umount", [dir]);
  execFileSync("rmdir", [dir]);
}
