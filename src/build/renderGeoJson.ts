/**
 * The GeoJSON twin of every KML ash-area resource (issue 16), under the KML's resource name with
 * `.geojson` for `.kml`: drawn from model output, the whole run and each step from the same polygons;
 * a forecaster's own KML, the whole file and each per-time split, converted from the same Placemarks
 * (a change of format, as ogr2ogr makes it: src/geo/forecasterGeoJson.ts).
 */
import { ashAreasGeoJson, GEOJSON_CONTENT_TYPE } from "../geo/ashGeoJson.ts";
import { forecasterGeoJson } from "../geo/forecasterGeoJson.ts";
import { compactInstant } from "../time/instant.ts";
import { jsonBody, type ArtefactDraft } from "./artefacts.ts";
import { resourceKey } from "./artefactNames.ts";
import { ashAreaDrafts } from "./ashAreaDrafts.ts";
import type { AssembledRun } from "./assembleRun.ts";

export const geoJsonResourceName = (reftime: string, slug: string, time?: string): string => (time ? `${reftime}/${slug}/${time}.geojson` : `${reftime}/${slug}.geojson`);
const geoJsonFile = (slug: string, time?: string): string => (time ? `geojson/${slug}/${compactInstant(time)}.geojson` : `geojson/${slug}.geojson`);

export function renderAshGeoJson(run: AssembledRun): Promise<ArtefactDraft[]> {
  const reftime = run.model.meta.reftime;
  return ashAreaDrafts(run, (layer, input, time) => {
    const name = geoJsonResourceName(reftime, layer.slug, time);
    return { key: resourceKey(name), file: geoJsonFile(layer.slug, time), contentType: GEOJSON_CONTENT_TYPE, body: ashAreasGeoJson(input), resourceName: name };
  });
}

/** Twins of the forecasters' KML resources renderKmlLayers publishes: the whole file, and each time's split when the file has times. */
export function renderForecasterGeoJson(run: AssembledRun): ArtefactDraft[] {
  const reftime = run.model.meta.reftime;
  return run.kmlLayers.flatMap((layer) => {
    const draft = (time?: string): ArtefactDraft => {
      const name = geoJsonResourceName(reftime, layer.slug, time);
      const body = forecasterGeoJson(layer.kml.features(time));
      return { key: resourceKey(name), file: geoJsonFile(layer.slug, time), contentType: GEOJSON_CONTENT_TYPE, body: jsonBody(body), resourceName: name };
    };
    return [draft(), ...(layer.kml.times.length === 0 ? [] : layer.times.map((time) => draft(time)))];
  });
}
