/**
 * Reading a small JSON configuration file (the users file, the access rules): bounded in size, with
 * every failure a UserError that names the file and says how to fix it.
 */
import { open } from "node:fs/promises";
import { duplicateKeys } from "../formats/duplicateKeys.ts";
import { UserError } from "../errors.ts";

export interface ConfigFileText {
  /** e.g. "users file", used in messages: "the users file is not valid JSON". */
  what: string;
  maxBytes: number;
  sizeFix: string;
  readFix: string;
  syntaxFix: string;
  /** When given, a missing file is an error with this fix; otherwise it reads as undefined. */
  missingFix?: string;
}

/** The file's parsed JSON, or undefined when it does not exist and a missing file is allowed. */
export async function readConfigJson(file: string, text: ConfigFileText): Promise<unknown> {
  let content: string;
  try {
    const handle = await open(file, "r");
    try {
      const { size } = await handle.stat();
      if (size > text.maxBytes) throw new UserError(`the ${text.what} is ${size} bytes, more than the ${text.maxBytes} accepted`, { where: file, fix: text.sizeFix });
      content = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof UserError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    if (missing && text.missingFix === undefined) return undefined;
    throw new UserError(`cannot read the ${text.what}: ${(error as Error).message}`, { where: file, fix: missing ? text.missingFix! : text.readFix, cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    throw new UserError(`the ${text.what} is not valid JSON: ${(error as Error).message}`, { where: file, fix: text.syntaxFix });
  }
  // JSON.parse keeps the last of a repeated key without a word: in access rules or users, a second "role" would
  // change who may do what unseen.
  const [repeated] = duplicateKeys(content);
  if (repeated) {
    throw new UserError(`the ${text.what} gives ${repeated.path} a second time in the same object (line ${repeated.line}, column ${repeated.column})`, { where: file, fix: "keep one of the two and remove the other" });
  }
  return json;
}
