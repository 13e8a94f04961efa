/**
 * Reftime and resource selection on a served release, as plain results: the Hono routes turn them into
 * responses, the node fast path answers the ones it can from memory. No I/O.
 */
import { reftimeOfResource, type ListArtefact, type PublishedRun } from "../contract/releaseIndex.ts";
import { INSTANT_FORM, normaliseInstant } from "../time/instant.ts";
import { prefersPng } from "./http.ts";
import type { ServedRelease } from "./releaseSource.ts";

/** Seconds a response may be reused by a client or a CDN, per kind of resource. */
export const CACHE_SECONDS = { latest: 60, pinned: 300, lists: 60, resources: 300, documents: 3600, viewerAssets: 86400 } as const;

export interface Refusal {
  kind: "problem";
  status: 400 | 404;
  detail: string;
}

export type ModelFormat = "json" | "png" | "negotiate";

export type ModelSelection =
  | Refusal
  | { kind: "nothing published" }
  | { kind: "run"; run: PublishedRun; key: string; pinned: boolean; varyAccept: boolean };

/** The normalised `reftime` parameter (all its values, as the query gave them), undefined when absent. */
export function reftimeParameter(values: readonly string[] | undefined): string | undefined | Refusal {
  if (!values) return undefined;
  if (values.length > 1) return { kind: "problem", status: 400, detail: "give the reftime parameter once" };
  // A `+` of a zone offset arrives as a space when the client did not percent-encode it.
  const reftime = normaliseInstant(values[0]!.replace(/ (\d{2}:?\d{2})$/, "+$1"));
  return reftime ?? { kind: "problem", status: 400, detail: `reftime "${values[0]!.slice(0, 100)}" is not a date-time: expected ${INSTANT_FORM}` };
}

/** The run a request selects, `reftime` (any ISO 8601 spelling) or the latest; undefined when nothing is published. */
export function selectRun(release: ServedRelease | undefined, reftimeValues: readonly string[] | undefined, base: string): PublishedRun | Refusal | undefined {
  const reftime = reftimeParameter(reftimeValues);
  // A malformed request is answered as such, published runs or not.
  if (typeof reftime === "object") return reftime;
  if (!release?.latest) return undefined;
  if (reftime === undefined) return release.index.runs[release.latest]!;
  if (!Object.hasOwn(release.index.runs, reftime)) return { kind: "problem", status: 404, detail: `no run is published for reftime ${reftime}; ${base}/reftimes lists those that are` };
  return release.index.runs[reftime]!;
}

/** What `/`, `/.json` and `/.png` answer: the artefact key of the selected run's JSON or PNG. */
export function selectModel(release: ServedRelease | undefined, reftimeValues: readonly string[] | undefined, format: ModelFormat, accept: string | undefined, base: string): ModelSelection {
  const run = selectRun(release, reftimeValues, base);
  if (run === undefined) return { kind: "nothing published" };
  if ("kind" in run) return run;
  const png = format === "png" || (format === "negotiate" && run.png !== undefined && prefersPng(accept));
  if (png && !run.png) return { kind: "problem", status: 404, detail: `the run ${run.reftime} has no PNG map yet; its JSON form is ${base}/.json?reftime=${run.reftime}` };
  // Vary: Accept only where Accept chooses: `/` of a run that has a PNG.
  return { kind: "run", run, key: png ? run.png! : run.json, pinned: reftimeValues !== undefined, varyAccept: format === "negotiate" && run.png !== undefined };
}

/**
 * Last-Modified of an answer about a run: the run's own date when pinned (`?reftime=`); unpinned, also no earlier
 * than the last change of the reftimes list, since the latest can fall back to an older run (one withdrawn)
 * whose own date precedes what a client already holds, and an If-Modified-Since would then keep it on the
 * withdrawn run (RFC 9110 §8.8.2: the date is the representation's, not the run's).
 */
export function answerModified(release: ServedRelease, run: PublishedRun, pinned: boolean): string {
  if (pinned) return run.modified;
  const list = release.index.artefacts[release.index.lists.reftimes]!.modified;
  // Same spelling (YYYY-MM-DDTHH:MM:SSZ): the later sorts last.
  return list > run.modified ? list : run.modified;
}

/** Where a named resource lives: a shared resource of the release, or a run's (its name carries the reftime). */
export function locateResource(release: ServedRelease, name: string): { kind: "shared"; artefact: ListArtefact } | { kind: "run"; run: PublishedRun } | undefined {
  // Allowlist lookups in the published lists: never a path join, so `../`, NUL or an absolute path cannot reach a file.
  if (Object.hasOwn(release.index.resources, name)) return { kind: "shared", artefact: release.index.artefacts[release.index.resources[name]!]! };
  const reftime = reftimeOfResource(name);
  if (reftime === undefined || !Object.hasOwn(release.index.runs, reftime)) return undefined;
  return { kind: "run", run: release.index.runs[reftime]! };
}

/**
 * A file of the viewer (`""` is its page): the artefact, and whether it is the page, which changes with
 * each viewer version like the lists; the assets carry their content hash in their names.
 */
export function selectViewerFile(release: ServedRelease, file: string): { artefact: ListArtefact; page: boolean } | undefined {
  const name = file === "" ? "index.html" : file;
  const files = release.index.viewer;
  // An allowlist lookup, as for resources: a file name is never joined to a path.
  if (files === undefined || !Object.hasOwn(files, name)) return undefined;
  const artefact = release.index.artefacts[files[name]!];
  return artefact && { artefact, page: name === "index.html" };
}
