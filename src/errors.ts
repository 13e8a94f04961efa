/**
 * One error base class for the whole project. A user error names the file or parameter and the fix;
 * an internal error is a bug and says so ("Internal error: ..."); only internal errors show a stack.
 */
export class AshcastError extends Error {
  override name = "AshcastError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A problem with something a person gave us: a run file, a flag, a configuration value. */
export class UserError extends AshcastError {
  override name = "UserError";
  /** The file, field or parameter at fault, when there is one. */
  readonly where: string | undefined;
  /** How to fix it, in one sentence. */
  readonly fix: string | undefined;
  constructor(message: string, options: { where?: string; fix?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.where = options.where;
    this.fix = options.fix;
  }
}

/** Several problems of one input found together, each with its fix: reported one by one (the error's own message is the first). */
export class UserErrors extends UserError {
  override name = "UserErrors";
  readonly problems: ReadonlyArray<{ message: string; fix: string }>;
  constructor(problems: ReadonlyArray<{ message: string; fix: string }>, options: { where?: string } = {}) {
    if (problems.length === 0) throw new InternalError("UserErrors without a problem");
    super(problems[0]!.message, { ...options, fix: problems[0]!.fix });
    this.problems = problems;
  }
}

/** A bug in ashcast: an invariant did not hold. */
export class InternalError extends AshcastError {
  override name = "InternalError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message.startsWith("Internal error:") ? message : `Internal error: ${message}`, options);
  }
}

const OUT_OF_SPACE = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

/**
 * A write that failed because the disk (or a quota, or a file size limit) is full is not a bug in ashcast:
 * the same error as a UserError that says so and what to do; undefined for any other error.
 * @example outOfSpace(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }))?.fix
 */
export function outOfSpace(error: unknown): UserError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!(error instanceof Error) || code === undefined || !OUT_OF_SPACE.has(code)) return undefined;
  const file = (error as NodeJS.ErrnoException).path;
  return new UserError(`no space left to write the output: the disk, a quota or a file size limit is full (${error.message})`, {
    ...(file === undefined ? {} : { where: file }),
    fix: "free space on the file system that holds the output (dist/) and build again; the release served before stays served",
    cause: error,
  });
}

/**
 * A file the operating system refused (permission denied, a read-only file system) is not a bug in ashcast
 * either: said with the path and what to change; undefined for any other error.
 */
export function refusedByFileSystem(error: unknown): UserError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!(error instanceof Error) || (code !== "EACCES" && code !== "EPERM" && code !== "EROFS")) return undefined;
  const file = (error as NodeJS.ErrnoException).path;
  const readOnly = code === "EROFS";
  return new UserError(readOnly ? `the file system is read-only (${error.message})` : `permission denied (${error.message})`, {
    ...(file === undefined ? {} : { where: file }),
    fix: readOnly
      ? "mount the file system that holds it read-write (dist/ must be writable to publish); the release served before stays served"
      : "give the user ashcast runs as access to it (dist/ must be writable, runs/ and the config files readable)",
    cause: error,
  });
}

/** Turns any thrown value into the text a person should read: the cause chain, and a stack only for bugs. */
export function formatError(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = outOfSpace(error) ?? refusedByFileSystem(error) ?? error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    const prefix = depth === 0 ? "" : "caused by: ";
    if (current instanceof UserErrors) {
      for (const problem of current.problems) lines.push(`${prefix}${current.where ? `${current.where}: ` : ""}${problem.message}`, `  fix: ${problem.fix}`);
    } else if (current instanceof UserError) {
      lines.push(`${prefix}${current.where ? `${current.where}: ` : ""}${current.message}`);
      if (current.fix) lines.push(`  fix: ${current.fix}`);
    } else if (current instanceof Error) {
      // Anything that is not one of our user errors is a bug at the top level: say so, with its stack.
      const isBug = depth === 0 && !(current instanceof AshcastError && !(current instanceof InternalError));
      const message = isBug && !current.message.startsWith("Internal error:") ? `Internal error: ${current.message}` : current.message;
      lines.push(`${prefix}${message}`);
      if (isBug && current.stack) lines.push(current.stack.split("\n").slice(1).join("\n"));
    } else {
      lines.push(`${prefix}${depth === 0 ? "Internal error: " : ""}${String(current)}`);
    }
    current = current instanceof Error ? current.cause : undefined;
  }
  return lines.join("\n");
}
