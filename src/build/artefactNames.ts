/**
 * Names of published artefacts. An artefact key is what the release index is keyed by;
 * a resource name is what `/resources?name=` accepts; a timestep url points at a resource.
 * Pure: the server never builds names, it only looks them up in the index.
 */
import { createHash } from "node:crypto";
import { compactInstant } from "../time/instant.ts";

export const runJsonKey = (reftime: string): string => `runs/${reftime}/model.json`;
export const runPngKey = (reftime: string): string => `runs/${reftime}/model.png`;

export const kmlResourceName = (reftime: string, slug: string): string => `${reftime}/${slug}.kml`;
export const kmlTimeResourceName = (reftime: string, slug: string, time: string): string => `${reftime}/${slug}/${time}.kml`;
export const resourceKey = (name: string): string => `resources/${name}`;

/** File of a KML artefact inside its run directory (colon-free, so any file system takes it). */
export const kmlFile = (slug: string, time?: string): string => (time ? `kml/${slug}/${compactInstant(time)}.kml` : `kml/${slug}.kml`);

/**
 * The url of a resource, relative to the product base path, as the public product does (`./...`):
 * it resolves against `{base_url}/` and `{base_url}/.json` alike, whatever host or CDN serves it.
 * `:` and `/` are legal in a query (RFC 3986) and left readable.
 */
export function resourceUrl(name: string): string {
  return `./resources?name=${encodeURIComponent(name).replace(/%3A/g, ":").replace(/%2F/g, "/")}`;
}

/** A name for files and urls from a file or layer name: lower case letters, digits and dashes. */
export function slugify(text: string): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length <= MAX_SLUG) return slug || "layer";
  // File names end up inside longer ones (`kml/<slug>.geojson.gz`, 255 bytes at most): long names are cut and
  // told apart by a hash of the whole.
  return `${slug.slice(0, MAX_SLUG - 9).replace(/-+$/, "")}-${createHash("sha256").update(slug).digest("hex").slice(0, 8)}`;
}
/** The longest slug: well inside a file name's 255 bytes with the suffixes artefacts add. */
const MAX_SLUG = 100;
