/**
 * Cache tags: what each public answer depends on, named so that a shared cache (Varnish xkey, a CDN's
 * Surrogate-Key) can drop exactly the answers a publish changed. The server tags its answers with these
 * names; the publisher compares two release indexes and purges the names whose content changed. Both
 * read only the published index, so they agree by construction.
 */
import type { ReleaseIndex } from "./releaseIndex.ts";

/** Tags of the answers that do not depend on one run. */
export const TAG = {
  /** Which run is the latest: `/`, `/.json`, `/.png` without reftime, `/resources` without name. */
  latest: "latest",
  reftimes: "reftimes",
  changelog: "changelog",
  /** The list of the release's shared resource names (`/resources` without name). */
  resources: "resources",
  /** The viewer's files (`/viewer/`). */
  viewer: "viewer",
  /** Documents made at start (terms, OpenAPI, /config): changed by a deploy, never by a publish. */
  documents: "documents",
} as const;

/** Every answer a published run makes (its JSON, PNG and resources). */
export const runTag = (reftime: string): string => `run:${reftime}`;

/**
 * One named resource. Tags are separated by spaces (and commas, for xkey), so those and `%` are
 * percent-encoded; the names the build makes have none.
 */
export const resourceTag = (name: string): string => `resource:${name.replace(/[%\s,]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`)}`;

/** The answers a 204 "nothing published" stands for: all of them change with the first publish. */
export const NOTHING_PUBLISHED_TAGS = `${TAG.latest} ${TAG.reftimes} ${TAG.changelog} ${TAG.resources}`;

/**
 * The tags whose answers differ between two releases: a run added, changed or withdrawn, another latest
 * run, changed lists, shared resources or viewer. Empty when the releases serve the same bytes.
 */
export function changedTags(before: ReleaseIndex | undefined, after: ReleaseIndex): string[] {
  if (before === undefined) return [...new Set([...NOTHING_PUBLISHED_TAGS.split(" "), TAG.viewer, ...after.reftimes.map(runTag), ...Object.keys(after.resources).map(resourceTag)])];
  const tags: string[] = [];
  if (before.reftimes[0] !== after.reftimes[0]) tags.push(TAG.latest);
  const etagOf = (index: ReleaseIndex, key: string | undefined) => (key === undefined ? undefined : index.artefacts[key]?.sha256);
  if (etagOf(before, before.lists.reftimes) !== etagOf(after, after.lists.reftimes)) tags.push(TAG.reftimes);
  if (etagOf(before, before.lists.changelog) !== etagOf(after, after.lists.changelog)) tags.push(TAG.changelog);
  for (const reftime of new Set([...before.reftimes, ...after.reftimes])) {
    if (before.runs[reftime]?.contentSha256 !== after.runs[reftime]?.contentSha256) tags.push(runTag(reftime));
  }
  const beforeNames = Object.keys(before.resources);
  const afterNames = Object.keys(after.resources);
  if (beforeNames.length !== afterNames.length || beforeNames.some((name) => !Object.hasOwn(after.resources, name))) tags.push(TAG.resources);
  for (const name of new Set([...beforeNames, ...afterNames])) {
    if (etagOf(before, before.resources[name]) !== etagOf(after, after.resources[name])) tags.push(resourceTag(name));
  }
  const viewerOf = (index: ReleaseIndex) => JSON.stringify(Object.entries(index.viewer ?? {}).map(([file, key]) => [file, index.artefacts[key]?.sha256]));
  if (viewerOf(before) !== viewerOf(after)) tags.push(TAG.viewer);
  return tags;
}
