/**
 * The map viewer's static files (issue 7), made from `templates/viewer/` and npm packages, never from
 * runs: Leaflet's prebuilt script and style sheet joined with ours, and offline coastlines (Natural Earth
 * land, from world-atlas). They are written once per content of their inputs into `dist/viewer/<hash>/`
 * (immutable, like a run directory) and every release that has the same inputs reuses that directory.
 * Assets carry their content hash in their names, so a cached page never mixes two versions.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { geoEquirectangular, geoStream } from "d3-geo";
import { feature } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import { RUN_ARTEFACTS_FILE, RUN_ARTEFACTS_FORMAT, RunArtefacts, type Artefact } from "../contract/releaseIndex.ts";
import { UserError } from "../errors.ts";
import { CONTENT_TYPES, jsonBody, writeArtefacts, type ArtefactDraft } from "./artefacts.ts";
import { VIEWER_DIR, writeStaged } from "./releaseStore.ts";

/** Bumped when this module changes what it makes from the same inputs. */
const VIEWER_FORMAT = 1;
/** Coastline coordinates are rounded to 0.01° (about 1 km): finer than the 1:50M data, and 20% fewer bytes. */
const COAST_DECIMALS = 2;

const TEMPLATE_DIR = fileURLToPath(new URL("../../templates/viewer/", import.meta.url));
const require = createRequire(import.meta.url);

export interface PublishedViewer {
  /** Its directory relative to the dist directory, e.g. `viewer/3f2a...`. */
  dir: string;
  /** Artefact key to artefact (keys are `viewer/<file>`). */
  artefacts: Record<string, Artefact>;
  /** File name under `/viewer/` to artefact key. */
  files: Record<string, string>;
}

interface Inputs {
  html: string;
  kml: string;
  /** Point and route queries (issue 16), between the KML reader and the viewer. */
  queries: string;
  js: string;
  css: string;
  leafletJs: string;
  leafletCss: string;
  land: Buffer;
}

async function readInputs(): Promise<Inputs> {
  const template = (name: string) => readFile(path.join(TEMPLATE_DIR, name), "utf8");
  try {
    const [html, kml, queries, js, css, leafletJs, leafletCss, land] = await Promise.all([
      template("index.html"),
      template("kml.js"),
      template("queries.js"),
      template("viewer.js"),
      template("viewer.css"),
      readFile(require.resolve("leaflet/dist/leaflet.js"), "utf8"),
      readFile(require.resolve("leaflet/dist/leaflet.css"), "utf8"),
      readFile(require.resolve("world-atlas/land-50m.json")),
    ]);
    return { html, kml, queries, js, css, leafletJs, leafletCss, land };
  } catch (error) {
    throw new UserError("the viewer's files cannot be read", { where: TEMPLATE_DIR, fix: "restore templates/viewer/ from the repository and run npm ci", cause: error });
  }
}

function inputsHash(inputs: Inputs): string {
  const hash = createHash("sha256").update(`viewer ${VIEWER_FORMAT}\0`);
  for (const [name, value] of Object.entries(inputs)) hash.update(`${name}\0`).update(value).update("\0");
  return hash.digest("hex");
}

/** The viewer of these templates: reused from `dist/viewer/<hash>/` when it was made before, else made now. */
export async function publishViewer(distDir: string): Promise<PublishedViewer> {
  const inputs = await readInputs();
  const name = inputsHash(inputs).slice(0, 16);
  const dir = path.posix.join(VIEWER_DIR, name);
  const existing = await readFile(path.join(distDir, dir, RUN_ARTEFACTS_FILE), "utf8").then(
    (text) => RunArtefacts.parse(JSON.parse(text)),
    () => undefined,
  );
  if (existing) return { dir, artefacts: existing.artefacts, files: existing.resources };

  const drafts = viewerDrafts(inputs);
  const files = Object.fromEntries(drafts.map((draft) => [draft.file, draft.key]));
  const artefacts = await writeStaged(distDir, VIEWER_DIR, async (staged) => {
    const written = await writeArtefacts(staged.dir, dir, drafts);
    // The run artefact list's format fits: `resources` maps the served file names to keys. Its reftime is unused.
    const list: RunArtefacts = { format: RUN_ARTEFACTS_FORMAT, reftime: "1970-01-01T00:00:00Z", artefacts: written, resources: files };
    await writeFile(path.join(staged.dir, RUN_ARTEFACTS_FILE), jsonBody(list));
    await staged.commit(name);
    return written;
  });
  return { dir, artefacts, files };
}

/** The four files: the page, one script (Leaflet, then our KML reader and viewer), one style sheet, the coastlines. */
function viewerDrafts(inputs: Inputs): ArtefactDraft[] {
  const js = Buffer.from(`${inputs.leafletJs}\n;\n${inputs.kml}\n${inputs.queries}\n${inputs.js}`);
  const css = Buffer.from(`${inputs.leafletCss}\n${inputs.css}`);
  const coast = jsonBody(coastlines(inputs.land));
  const named = (stem: string, ext: string, body: Buffer) => `${stem}.${createHash("sha256").update(body).digest("hex").slice(0, 10)}.${ext}`;
  const files = { js: named("viewer", "js", js), css: named("viewer", "css", css), coast: named("coastlines", "json", coast) };
  const html = Buffer.from(inputs.html.replaceAll("{{script}}", files.js).replaceAll("{{styles}}", files.css).replaceAll("{{coastlines}}", files.coast));
  const draft = (file: string, contentType: string, body: Buffer): ArtefactDraft => ({ key: `${VIEWER_DIR}/${file}`, file, contentType, body });
  return [
    draft("index.html", CONTENT_TYPES.html, html),
    draft(files.js, CONTENT_TYPES.js, js),
    draft(files.css, CONTENT_TYPES.css, css),
    draft(files.coast, CONTENT_TYPES.json, coast),
  ];
}

/**
 * Natural Earth 1:50M land as one GeoJSON MultiPolygon of single rings, cut at the antimeridian by
 * d3-geo's clipping (the merged land rings cross it, and a flat map would draw those crossings as lines
 * around the world; Antarctica is closed along the map's edge). Each ring is its own polygon: the viewer
 * fills them in one path with the even-odd rule, so lakes stay holes whatever ring they belong to.
 * Coordinates are rounded and repeated points dropped.
 */
function coastlines(topojson: Buffer): GeoJSON.FeatureCollection {
  const topology = JSON.parse(topojson.toString("utf8")) as Topology;
  const land = feature(topology, topology.objects.land as GeometryCollection);
  const scale = 10 ** COAST_DECIMALS;
  const rings: GeoJSON.Position[][] = [];
  let ring: GeoJSON.Position[] = [];
  // x = longitude and y = -latitude in degrees; precision 0: no resampling, only the antimeridian cut.
  const projection = geoEquirectangular().scale(180 / Math.PI).translate([0, 0]).precision(0);
  const sink = projection.stream({
    point(x, y) {
      const point = [Math.round(x * scale) / scale, Math.round(-y * scale) / scale];
      const last = ring.at(-1);
      if (!last || last[0] !== point[0] || last[1] !== point[1]) ring.push(point);
    },
    lineStart() {
      ring = [];
    },
    lineEnd() {
      // Rings that rounding shrank below a triangle are dropped (tiny islands and lakes).
      if (ring.length >= 3) rings.push([...ring, ring[0]!]);
    },
    polygonStart() {},
    polygonEnd() {},
    sphere() {},
  });
  geoStream(land, sink);
  return {
    type: "FeatureCollection",
    features: [{ type: "Feature", properties: { source: "Natural Earth 1:50M land (public domain), via world-atlas" }, geometry: { type: "MultiPolygon", coordinates: rings.map((r) => [r]) } }],
  };
}
