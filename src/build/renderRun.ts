/**
 * The artefacts of one valid run: its AshModel JSON and its KML layers (whole, and one per timestep).
 * Each renderer is a function of the assembled run alone, so bytes are the same for the same inputs.
 * Runs with model output also get KML ash areas per band and the PNG maps (renderModelOutput.ts).
 */
import { AshModel } from "../contract/ashModel.ts";
import { InternalError } from "../errors.ts";
import { CONTENT_TYPES, jsonBody, type ArtefactDraft } from "./artefacts.ts";
import { kmlFile, kmlResourceName, kmlTimeResourceName, resourceKey, runJsonKey } from "./artefactNames.ts";
import type { AssembledRun } from "./assembleRun.ts";
import { renderModelKml, renderModelMaps } from "./renderModelOutput.ts";
import { renderPointGrids } from "./pointGrids.ts";
import { renderAshGeoJson, renderForecasterGeoJson } from "./renderGeoJson.ts";

export type RunRenderer = (run: AssembledRun) => ArtefactDraft[] | Promise<ArtefactDraft[]>;

export function renderModelJson(run: AssembledRun): ArtefactDraft[] {
  // The schema is the contract: a model that does not pass it is our bug, never published.
  const checked = AshModel.safeParse(run.model);
  if (!checked.success) throw new InternalError(`the AshModel of ${run.model.meta.reftime} breaks the contract: ${checked.error.message}`);
  return [{ key: runJsonKey(run.model.meta.reftime), file: "model.json", contentType: CONTENT_TYPES.json, body: jsonBody(run.model) }];
}

export function renderKmlLayers(run: AssembledRun): ArtefactDraft[] {
  const reftime = run.model.meta.reftime;
  return run.kmlLayers.flatMap((layer) => {
    const wholeName = kmlResourceName(reftime, layer.slug);
    const whole: ArtefactDraft = { key: resourceKey(wholeName), file: kmlFile(layer.slug), contentType: CONTENT_TYPES.kml, body: layer.kml.whole, resourceName: wholeName };
    if (layer.kml.times.length === 0) return [whole];
    return [
      whole,
      ...layer.times.map((time) => {
        const name = kmlTimeResourceName(reftime, layer.slug, time);
        return { key: resourceKey(name), file: kmlFile(layer.slug, time), contentType: CONTENT_TYPES.kml, body: layer.kml.forTime(time), resourceName: name };
      }),
    ];
  });
}

// Issue 16, apart from the per-step drawing of renderModelOutput.ts: the point-query grids and the GeoJSON twins of
// every KML ash-area resource (model output's and forecasters'). The model JSON first: updateRun takes the first draft as the run's JSON.
export const RUN_RENDERERS: readonly RunRenderer[] = [renderModelJson, renderKmlLayers, renderModelKml, renderModelMaps, renderPointGrids, renderAshGeoJson, renderForecasterGeoJson];

/** Started before the others: they hand their work to the build's worker threads (src/build/stepPool.ts), which draw while this thread renders the rest. */
const STARTED_FIRST: ReadonlySet<RunRenderer> = new Set([renderModelMaps]);

/**
 * The drafts of every renderer, in the renderers' order; `rendered` gets each renderer's drafts as soon
 * as it has them (the build starts compressing text then, while maps are still drawn).
 */
export async function renderRun(run: AssembledRun, renderers: readonly RunRenderer[] = RUN_RENDERERS, rendered?: (drafts: ArtefactDraft[]) => void): Promise<ArtefactDraft[]> {
  const results = new Array<Promise<ArtefactDraft[]>>(renderers.length);
  const start = (i: number): void => {
    const result = Promise.resolve(renderers[i]!(run));
    results[i] = rendered
      ? result.then((drafts) => {
          rendered(drafts);
          return drafts;
        })
      : result;
  };
  try {
    for (const [i, render] of renderers.entries()) if (STARTED_FIRST.has(render)) start(i);
    for (const [i, render] of renderers.entries()) if (!STARTED_FIRST.has(render)) start(i);
  } finally {
    // A renderer that threw leaves the others' work unread: let it end without an unhandled rejection.
    for (const result of results) result?.catch(() => {});
  }
  return (await Promise.all(results)).flat();
}
