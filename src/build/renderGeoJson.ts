/**
 * The GeoJSON twin of every KML ash-area resource drawn from model output (issue 16): the whole run and
 * each step, under the KML's resource names with `.geojson` for `.kml`, from the same polygons.
 * Forecasters' own KML files are published as given and get no twin (their drawings are not ours to reinterpret).
 */
import { ashAreasGeoJson, GEOJSON_CONTENT_TYPE } from "../geo/ashGeoJson.ts";
import { compactInstant } from "../time/instant.ts";
import { jsonBody, type ArtefactDraft } from "./artefacts.ts";
import { resourceKey } from "./artefactNames.ts";
import type { AssembledRun } from "./assembleRun.ts";

export const geoJsonResourceName = (reftime: string, slug: string, time?: string): string => (time ? `${reftime}/${slug}/${time}.geojson` : `${reftime}/${slug}.geojson`);
const geoJsonFile = (slug: string, time?: string): string => (time ? `geojson/${slug}/${compactInstant(time)}.geojson` : `geojson/${slug}.geojson`);

export function renderAshGeoJson(run: AssembledRun): ArtefactDraft[] {
  const reftime = run.model.meta.reftime;
  const volcano = run.volcano ? { name: run.volcano.name, lat: run.volcano.lat, lon: run.volcano.lon } : undefined;
  return run.modelLayers.flatMap((layer) => {
    const draft = (steps: typeof layer.analysis.steps, time?: string): ArtefactDraft => {
      const name = geoJsonResourceName(reftime, layer.slug, time);
      const body = ashAreasGeoJson({
        name: `${layer.analysis.band.label} ash areas, run ${reftime}`,
        band: layer.analysis.band,
        quantity: layer.analysis.meaning.label,
        thresholds: layer.thresholds,
        units: "mg/m³",
        steps: steps.map((step) => ({ time: step.time, end: step.end, bands: step.areas })),
        ...(volcano ? { volcano } : {}),
      });
      return { key: resourceKey(name), file: geoJsonFile(layer.slug, time), contentType: GEOJSON_CONTENT_TYPE, body: jsonBody(body), resourceName: name };
    };
    return [draft(layer.analysis.steps), ...layer.analysis.steps.map((step) => draft([step], step.time))];
  });
}
