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

/** A bug in ashcast: an invariant did not hold. */
export class InternalError extends AshcastError {
  override name = "InternalError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message.startsWith("Internal error:") ? message : `Internal error: ${message}`, options);
  }
}

/** Turns any thrown value into the text a person should read: the cause chain, and a stack only for bugs. */
export function formatError(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    const prefix = depth === 0 ? "" : "caused by: ";
    if (current instanceof UserError) {
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
