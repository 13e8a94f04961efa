/**
 * The map viewer's static files (issue 7), made from `templates/viewer/` and npm packages, never from
 * runs: Leaflet's prebuilt script and style sheet joined with ours, and offline coastlines (Natural Earth
 * land, from world-atlas, as the base maps keep it: src/render/naturalEarthData.ts). They are written once
 * per content of their inputs into `dist/viewer/<hash>/` (immutable, like a run directory) and every release
 * that has the same inputs reuses that directory.
 * Assets carry their content hash in their names, so a cached page never mixes two versions.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_ARTEFACTS_FILE, RUN_ARTEFACTS_FORMAT, RunArtefacts, type Artefact } from "../contract/releaseIndex.ts";
import { UserError } from "../errors.ts";
import { CONTENT_TYPES, jsonBody, writeArtefacts, type ArtefactDraft } from "./artefacts.ts";
import { VIEWER_DIR, writeStaged } from "./releaseStore.ts";
import { bufferOf, runStepTask } from "./stepPool.ts";
import { coastlinesBody } from "./viewerCoastlines.ts";

/** Bumped when this module changes what it makes from the same inputs. */
const VIEWER_FORMAT = 1;

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
  /** src/render/natural-earth-50m.bin, whose land the coastlines are. */
  naturalEarth50m: Buffer;
}

async function readInputs(): Promise<Inputs> {
  const template = (name: string) => readFile(path.join(TEMPLATE_DIR, name), "utf8");
  try {
    const [html, kml, queries, js, css, leafletJs, leafletCss, naturalEarth50m] = await Promise.all([
      template("index.html"),
      template("kml.js"),
      template("queries.js"),
      template("viewer.js"),
      template("viewer.css"),
      readFile(require.resolve("leaflet/dist/leaflet.js"), "utf8"),
      readFile(require.resolve("leaflet/dist/leaflet.css"), "utf8"),
      readFile(new URL("../render/natural-earth-50m.bin", import.meta.url)),
    ]);
    return { html, kml, queries, js, css, leafletJs, leafletCss, naturalEarth50m };
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

  // The coastlines (~0.1 s of projecting Natural Earth) in a build worker: at a build's start they wait for their first task.
  const coast = bufferOf(await runStepTask("viewerCoastlines", inputs.naturalEarth50m, "the viewer's coastlines", async () => coastlinesBody(inputs.naturalEarth50m)));
  const drafts = viewerDrafts(inputs, coast);
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
function viewerDrafts(inputs: Inputs, coast: Buffer): ArtefactDraft[] {
  const js = Buffer.from(`${inputs.leafletJs}\n;\n${inputs.kml}\n${inputs.queries}\n${inputs.js}`);
  const css = Buffer.from(`${inputs.leafletCss}\n${inputs.css}`);
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

