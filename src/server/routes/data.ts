/**
 * The data endpoints of the specification: the run (`/`, `/.json`, `/.png`), `/reftimes`, `/changelog`
 * and `/resources`, all answered from the published release.
 */
import type { Context, Hono } from "hono";
import { problemResponse } from "../problem.ts";
import { answerModified, locateResource, selectModel, selectRun, type ModelFormat, type Refusal } from "../select.ts";
import type { ReleaseView } from "../app.ts";
import { readOnlyRoutes, withSlash, type Responder } from "./respond.ts";

export const refuse = (refusal: Refusal): Response => problemResponse(refusal.status, refusal.detail);

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
      return respond.json([...Object.keys(release.index.resources), ...runNames], respond.policies.resourceNames(run?.reftime, pinned));
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
