/**
 * Settings an operator may change while the service runs (POST /config), persisted in a small JSON file so
 * a restart keeps them; POST /config/reset removes the file and the defaults apply again. Only the keys of
 * RuntimeSettings can be set, each within its range; anything else is refused with the key and the range.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { UserError } from "../errors.ts";
import { oneAtATime } from "../flow/oneAtATime.ts";
import { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "./upload/receive.ts";

/** Each setting with its allowed range (whole numbers). */
const RANGES = {
  /** Bytes of an upload, unpacked. */
  uploadMaxBytes: [1024, 64 * 1024 ** 3],
  /** Files in one uploaded run. */
  uploadMaxFiles: [1, 1000],
} as const;

type SettingKey = keyof typeof RANGES;
export const SETTING_KEYS = Object.keys(RANGES) as SettingKey[];

const setting = (key: SettingKey) => z.number().int().min(RANGES[key][0]).max(RANGES[key][1]).optional();
export const RuntimeSettings = z.strictObject({ uploadMaxBytes: setting("uploadMaxBytes"), uploadMaxFiles: setting("uploadMaxFiles") });
export type RuntimeSettings = z.infer<typeof RuntimeSettings>;

/** Why a settings object is refused, one sentence per problem, naming each key and its allowed range. */
export function settingsProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") return `${issue.keys.join(", ")} ${issue.keys.length === 1 ? "is not a setting" : "are not settings"}; the settings are ${SETTING_KEYS.join(", ")}`;
    const key = String(issue.path[0] ?? "");
    if (Object.hasOwn(RANGES, key)) return `${key} must be a whole number from ${RANGES[key as SettingKey][0]} to ${RANGES[key as SettingKey][1]}`;
    return `the settings must be a JSON object of ${SETTING_KEYS.join(", ")}`;
  });
}

export class SettingsStore {
  private current: RuntimeSettings;
  /** Changes are written one at a time, in the order they came. */
  private readonly inTurn = oneAtATime();

  readonly file: string;

  private constructor(file: string, stored: RuntimeSettings) {
    this.file = file;
    this.current = stored;
  }

  /** Reads the settings file; none yet means no change from the defaults. A broken file stops the start. */
  static async open(file: string): Promise<SettingsStore> {
    const resolved = path.resolve(file);
    const text = await readFile(resolved, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw new UserError(`cannot read the settings file: ${error.message}`, { where: resolved, cause: error });
    });
    if (text === undefined) return new SettingsStore(resolved, {});
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new UserError("the settings file is not JSON", { where: resolved, fix: "fix it, or delete it to return to the defaults (POST /config/reset does that too)", cause: error });
    }
    const parsed = RuntimeSettings.safeParse(json);
    if (!parsed.success) throw new UserError(`the settings file is not valid: ${settingsProblems(parsed.error).join("; ")}`, { where: resolved, fix: "fix it, or delete it to return to the defaults" });
    return new SettingsStore(resolved, parsed.data);
  }

  /** What an operator set (only the keys changed from the defaults). */
  get stored(): RuntimeSettings {
    return this.current;
  }

  get uploadLimits(): UploadLimits {
    return { maxBytes: this.current.uploadMaxBytes ?? DEFAULT_UPLOAD_LIMITS.maxBytes, maxFiles: this.current.uploadMaxFiles ?? DEFAULT_UPLOAD_LIMITS.maxFiles };
  }

  /** Applies a validated change and persists it (written aside, then renamed). */
  change(patch: RuntimeSettings): Promise<RuntimeSettings> {
    return this.inTurn(async () => {
      const next = RuntimeSettings.parse({ ...this.current, ...patch });
      await mkdir(path.dirname(this.file), { recursive: true });
      const aside = `${this.file}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(aside, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
      await rename(aside, this.file);
      this.current = next;
      return next;
    });
  }

  /** Back to the defaults: the file goes. */
  reset(): Promise<RuntimeSettings> {
    return this.inTurn(async () => {
      await rm(this.file, { force: true });
      this.current = {};
      return this.current;
    });
  }
}
