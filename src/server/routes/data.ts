/**
 * The data endpoints of the specification: the run (`/`, `/.json`, `/.png`), `/reftimes`, `/changelog`
 * and `/resources`, all answered from the published release.
 */
import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import { problemResponse } from "../problem.ts";
import { answerModified, locateResource, selectModel, selectRun, type ModelFormat, type Refusal } from "../select.ts";
import type { ReleaseView } from "../app.ts";
import type { ServedRelease } from "../releaseSource.ts";
import { readOnlyRoutes, withSlash, type Responder } from "./respond.ts";

export const refuse = (refusal: Refusal): Response => problemResponse(refusal.status, refusal.detail);

/** A release's shared resource names, a digest of them and their latest date: made once per release. */
const sharedOf = new WeakMap<ServedRelease, { names: string[]; digest: string; modified: string }>();
function sharedNames(release: ServedRelease): { names: string[]; digest: string; modified: string } {
  let shared = sharedOf.get(release);
  if (shared === undefined) {
    const names = Object.keys(release.index.resources);
    // Same spelling (YYYY-MM-DDTHH:MM:SSZ): the later sorts last.
    const modified = names.map((name) => release.index.artefacts[release.index.resources[name]!]!.modified).reduce((a, b) => (b > a ? b : a), "");
    sharedOf.set(release, (shared = { names, digest: createHash("sha256").update(names.join("\n")).digest("base64url").slice(0, 16), modified }));
  }
  return shared;
}

export function dataRoutes(base: string, source: ReleaseView, respond: Responder): Hono {
  async function model(c: Context, format: ModelFormat): Promise<Response> {
    const selected = selectModel(source.current, c.req.queries("reftime"), format, c.req.header("accept"), base);
    if (selected.kind === "problem") return refuse(selected);
    if (selected.kind === "nothing published") return respond.noContent();
    const list = await source.runArtefacts(selected.run);
    return respond.send(c, list.artefacts[selected.key]!, answerModified(source.current!, selected.run, selected.pinned), respond.policies.model(selected.run.reftime, selected.pinned, selected.varyAccept));
  }

  async function resources(c: Context): Promise<Response> {
    const release = source.current;
    if (!release) return respond.noContent();
    const names = c.req.queries("name");
    if (!names) {
      // The shared resources, and those of one run (the latest, or ?reftime=): never all runs at once.
      const pinned = c.req.queries("reftime") !== undefined;
      const run = selectRun(release, c.req.queries("reftime"), base);
      if (run && "kind" in run) return refuse(run);
      const runNames = run ? Object.keys((await source.runArtefacts(run)).resources) : [];
      const shared = sharedNames(release);
      // The names change with the run's directory (content-addressed) and the release's shared names only.
      const modified = run ? answerModified(release, run, pinned) : release.index.artefacts[release.index.lists.reftimes]!.modified;
      const validators = { etag: `"names:${run ? run.dir : "none"}:${shared.digest}"`, modified: shared.modified > modified ? shared.modified : modified };
      return respond.json(c, [...shared.names, ...runNames], respond.policies.resourceNames(run?.reftime, pinned), validators);
    }
    if (names.length > 1) return problemResponse(400, "give the name parameter once");
    const name = names[0]!;
    const missing = () => problemResponse(404, `no resource is named "${name.slice(0, 200)}"; ${base}/resources lists the names`);
    const located = locateResource(release, name);
    if (!located) return missing();
    if (located.kind === "shared") return respond.sendList(c, located.artefact, respond.policies.resource(name, undefined));
    const list = await source.runArtefacts(located.run);
    if (!Object.hasOwn(list.resources, name)) return missing();
    return respond.send(c, list.artefacts[list.resources[name]!]!, located.run.modified, respond.policies.resource(name, located.run.reftime));
  }

  /** A list of the release (`reftimes`, `changelog`). */
  const list = (which: "reftimes" | "changelog") => (c: Context) => {
    const release = source.current;
    return release ? respond.sendList(c, release.index.artefacts[release.index.lists[which]]!, respond.policies[which]) : respond.noContent();
  };

  return readOnlyRoutes([
    // Without the slash, the relative timestep urls (`./resources?...`) would resolve one level up.
    [base, withSlash(base)],
    [`${base}/`, (c) => model(c, "negotiate")],
    [`${base}/.json`, (c) => model(c, "json")],
    [`${base}/.png`, (c) => model(c, "png")],
    [`${base}/reftimes`, list("reftimes")],
    [`${base}/changelog`, list("changelog")],
    [`${base}/resources`, resources],
  ]);
}
