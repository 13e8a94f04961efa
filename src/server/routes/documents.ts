/** `/healthz`, the terms of service and the OpenAPI document: made at start, not by a build. */
import type { Context, Hono } from "hono";
import { healthText } from "../health.ts";
import { CORS_HEADERS } from "../representation.ts";
import type { ReleaseView } from "../app.ts";
import { documentArtefact, readOnlyRoutes, type Document, type Responder } from "./respond.ts";

/** A document's Last-Modified is the start of the process that made it. */
export const sendDocument = (respond: Responder, startedAt: string) => (c: Context, document: Document) =>
  respond.send(c, document.artefact, startedAt, respond.policies.document, document.body);

export function documentRoutes(base: string, options: { source: ReleaseView; respond: Responder; startedAt: string; now: () => number; termsOfService: Buffer; openapi: Buffer }): Hono {
  const send = sendDocument(options.respond, options.startedAt);
  // Never compressed: they are small and rarely asked for.
  const termsOfService = documentArtefact(options.termsOfService, "text/html;charset=UTF-8");
  const openapi = documentArtefact(options.openapi, "application/json;charset=UTF-8");
  return readOnlyRoutes([
    [`${base}/healthz`, () => {
      const health = healthText(options.source, options.now());
      return new Response(health.text, { status: health.status, headers: { "content-type": "text/plain;charset=UTF-8", "cache-control": "no-store", ...CORS_HEADERS } });
    }],
    [`${base}/doc/TermsOfService`, (c) => send(c, termsOfService)],
    [`${base}/openapi.json`, (c) => send(c, openapi)],
  ]);
}
