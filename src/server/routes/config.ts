/**
 * `/config`: the effective configuration, public and without secrets (GET); a validated change of the
 * settings an operator may change (POST, protected by the access rules), persisted; and back to the
 * defaults (POST /config/reset).
 */
import { Hono, type Context } from "hono";
import { RuntimeSettings, settingsProblems } from "../../operator/settings.ts";
import { signedInUser } from "../accessControl.ts";
import { readSmallJson } from "../jsonBody.ts";
import { problemResponse } from "../problem.ts";
import { CORS_HEADERS } from "../representation.ts";
import { CACHE_SECONDS } from "../select.ts";
import type { OperatorOptions } from "../app.ts";
import { formatInstant, parseInstant } from "../../time/instant.ts";
import { documentArtefact, READ_ALLOW, readOnlyRoutes, type Responder } from "./respond.ts";

export interface ConfigOptions {
  respond: Responder;
  startedAt: string;
  removedVersions: readonly string[];
  /** What GET /config shows besides the base path, removed versions and cache lifetimes. */
  effectiveConfig: Record<string, unknown> | undefined;
  operator: OperatorOptions | undefined;
}

export function configRoutes(base: string, options: ConfigOptions): Hono {
  // Last-Modified: the start, then each change, at least a second later (the date a client revalidates with).
  let modified = options.startedAt;
  const send = (c: Context, current: typeof document) => options.respond.send(c, current.artefact, modified, options.respond.policies.config, current.body);
  const settings = options.operator?.settings;
  // Made again only when an operator changes a setting.
  const makeDocument = () => {
    const runtime = settings ? { uploadLimits: settings.uploadLimits, changedSettings: settings.stored } : {};
    return documentArtefact(
      Buffer.from(`${JSON.stringify({ base, removedVersions: options.removedVersions, cacheSeconds: CACHE_SECONDS, ...options.effectiveConfig, ...runtime }, null, 2)}\n`),
      "application/json;charset=UTF-8",
    );
  };
  let document = makeDocument();

  const change = async (c: Context, action: "config" | "config-reset") => {
    const who = signedInUser(c.req.raw) ?? "(not signed in)";
    if (!settings || !options.operator) return problemResponse(503, "settings can be changed only where the service runs with ashcast start");
    const { audit } = options.operator;
    let patch: RuntimeSettings = {};
    if (action === "config") {
      const body = await readSmallJson(c, `{"uploadMaxBytes": 536870912}`);
      if (body instanceof Response) return body;
      const parsed = RuntimeSettings.safeParse(body.json);
      if (!parsed.success) {
        const detail = settingsProblems(parsed.error).join("; ");
        await audit.record({ who, action, target: "settings", outcome: "refused", detail });
        return problemResponse(400, detail);
      }
      patch = parsed.data;
    }
    const stored = action === "config" ? await settings.change(patch) : await settings.reset();
    document = makeDocument();
    modified = formatInstant(Math.max(Date.now(), parseInstant(modified)! + 1000));
    await audit.record({ who, action, target: "settings", outcome: "done", detail: JSON.stringify(stored) });
    return new Response(JSON.stringify({ uploadLimits: settings.uploadLimits, changedSettings: stored }), { headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
  };

  const group = new Hono();
  group.post(`${base}/config`, (c) => change(c, "config"));
  group.post(`${base}/config/reset`, (c) => change(c, "config-reset"));
  group.all(`${base}/config/reset`, () => problemResponse(405, "only POST is allowed here", { allow: "POST" }));
  return readOnlyRoutes([[`${base}/config`, (c) => send(c, document)]], () => `${READ_ALLOW}, POST`, group);
}
