/**
 * The ash-area files of a run's model layers, the KML (renderModelKml) and its GeoJSON twin (renderAshGeoJson)
 * alike: per layer the whole run's file, then one per step, from the same contoured polygons.
 */
import type { AshKmlInput } from "../geo/ashKml.ts";
import { pauseEvery } from "../flow/pauses.ts";
import type { ArtefactDraft } from "./artefacts.ts";
import type { AssembledRun } from "./assembleRun.ts";
import type { ModelLayerOutput } from "./assembleModelOutput.ts";
import { MAIN_THREAD_PAUSE_MS } from "./stepPool.ts";

/** One file of a layer: the whole run's (`time` undefined) or one step's. */
export type AshAreaDraft = (layer: ModelLayerOutput, input: AshKmlInput, time?: string) => ArtefactDraft;

/**
 * Every layer's drafts, in order: the whole run's, then each step's. Made steps first, with pauses between
 * them, so that the build's workers are fed meanwhile (src/flow/pauses.ts) and the whole run's file reuses
 * the text its steps' polygons got (src/geo/ashKml.ts).
 */
export async function ashAreaDrafts(run: AssembledRun, draft: AshAreaDraft): Promise<ArtefactDraft[]> {
  const reftime = run.model.meta.reftime;
  const volcano = run.volcano ? { name: run.volcano.name, lat: run.volcano.lat, lon: run.volcano.lon } : undefined;
  const pause = pauseEvery(MAIN_THREAD_PAUSE_MS);
  const drafts: ArtefactDraft[] = [];
  for (const layer of run.modelLayers) {
    const input = (steps: typeof layer.analysis.steps): AshKmlInput => ({
      name: `${layer.analysis.band.label} ash areas, run ${reftime}`,
      band: layer.analysis.band,
      thresholds: layer.thresholds,
      units: "mg/m³",
      quantity: layer.analysis.meaning.label,
      steps: steps.map((step) => ({ time: step.time, end: step.end, bands: step.areas, missingShare: step.missingShare })),
      ...(volcano ? { volcano } : {}),
    });
    const steps: ArtefactDraft[] = [];
    for (const step of layer.analysis.steps) {
      await pause();
      steps.push(draft(layer, input([step]), step.time));
    }
    drafts.push(draft(layer, input(layer.analysis.steps)), ...steps);
  }
  return drafts;
}
