/**
 * Artefacts drawn from model output: KML ash areas per flight-level band (the whole run, and one file
 * per step: the timestep urls), the run's PNG map (`/.png`), and one image per band and step for
 * viewers, listed by `<reftime>/images.json`.
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import type { ThresholdBand } from "../geo/types.ts";
import { unwrappedBox } from "../geo/lonLatBox.ts";
import { wrapLongitude } from "../model/gridMapping.ts";
import { ashAreasKml } from "../geo/ashKml.ts";
import { inOrder } from "../flow/inOrder.ts";
import { normaliseLon } from "../render/basemap.ts";
import { bandImagePalette, renderBandImage, type BandImageInput } from "../render/bandImage.ts";
import { renderRunMap, type RunMapInput } from "../render/runMap.ts";
import { compactInstant } from "../time/instant.ts";
import { CONTENT_TYPES, jsonBody, type ArtefactDraft } from "./artefacts.ts";
import { kmlFile, kmlResourceName, kmlTimeResourceName, resourceKey, resourceUrl, runPngKey } from "./artefactNames.ts";
import type { AssembledRun } from "./assembleRun.ts";
import { bufferOf, runStepTask, stepTaskWindow } from "./stepPool.ts";
import { ashAreaDrafts } from "./ashAreaDrafts.ts";

export const imageResourceName = (reftime: string, slug: string, time: string): string => `${reftime}/${slug}/${time}.png`;
export const imagesIndexName = (reftime: string): string => `${reftime}/images.json`;

export function renderModelKml(run: AssembledRun): Promise<ArtefactDraft[]> {
  const reftime = run.model.meta.reftime;
  return ashAreaDrafts(run, (layer, input, time) => {
    const name = time ? kmlTimeResourceName(reftime, layer.slug, time) : kmlResourceName(reftime, layer.slug);
    return { key: resourceKey(name), file: kmlFile(layer.slug, time), contentType: CONTENT_TYPES.kml, body: ashAreasKml(input), resourceName: name };
  });
}

/**
 * Images asked for at once. With worker threads (src/build/stepPool.ts) they draw and encode in parallel;
 * on one thread, drawing is on it and encoding on libuv's thread pool, so a few overlap.
 */
const imagesInFlight = (): number => Math.max(4, stepTaskWindow());

export async function renderModelMaps(run: AssembledRun): Promise<ArtefactDraft[]> {
  const source = run.mapSource;
  if (!source || run.modelLayers.length === 0) return [];
  const { reftime, type } = run.model.meta;
  const box = mapBox(run.model.meta.latlonbox ?? source.domain, run.volcano);
  const volcano = run.volcano ? { name: run.volcano.name, lat: run.volcano.lat, lon: run.volcano.lon } : undefined;
  const common = { type, reftime, box, thresholds: source.thresholds, ...(volcano ? { volcano } : {}) };
  const mapLayers = run.modelLayers.filter((layer) => source.bands.includes(layer.analysis));
  // One legend for the three panels: the bands of one file are the same kind of field; if not, each is named.
  const quantities = [...new Set(mapLayers.map((layer) => layer.analysis.meaning.label))];
  const runMap: RunMapInput = { ...common, times: source.times, quantity: quantities.join(" / "), bands: mapLayers.map(({ analysis }) => ({ label: analysis.band.label, areas: analysis.maximum, worstMissingShare: analysis.worstMissingShare })) };
  const index: Array<{ band: string; images: Array<{ time: string; url: string }> }> = [];
  const jobs: Array<() => Promise<ArtefactDraft>> = [
    async () => ({
      key: runPngKey(reftime),
      file: "model.png",
      contentType: CONTENT_TYPES.png,
      body: bufferOf(await runStepTask("runMap", runMap, `${reftime}/model.png`, () => renderRunMap(runMap))),
    }),
  ];
  const bandImageInput = (layer: AssembledRun["modelLayers"][number], step: AssembledRun["modelLayers"][number]["analysis"]["steps"][number]): BandImageInput => ({
    ...common,
    time: step.time,
    quantity: layer.analysis.meaning.label,
    band: { label: layer.analysis.band.label, areas: step.areas, missingShare: step.missingShare },
  });
  // One palette for the run's band images, from each band's step with the longest outlines (the most edge colours).
  const samples = run.modelLayers.flatMap((layer) => {
    const step = mostOutlined(layer.analysis.steps);
    return step ? [bandImageInput(layer, step)] : [];
  });
  const palette = samples.length > 0 ? runStepTask("bandPalette", samples, `${reftime} band image palette`, async () => bandImagePalette(samples)) : undefined;
  // Awaited by every image job; marked handled here so that a failure before the first of them is not an unhandled rejection.
  palette?.catch(() => undefined);
  for (const layer of run.modelLayers) {
    const images: Array<{ time: string; url: string }> = [];
    for (const step of layer.analysis.steps) {
      const name = imageResourceName(reftime, layer.slug, step.time);
      jobs.push(async () => {
        const input: BandImageInput = { ...bandImageInput(layer, step), ...(await palette) };
        return {
          key: resourceKey(name),
          file: `images/${layer.slug}/${compactInstant(step.time)}.png`,
          contentType: CONTENT_TYPES.png,
          body: bufferOf(await runStepTask("bandImage", input, name, () => renderBandImage(input))),
          resourceName: name,
        };
      });
      images.push({ time: step.time, url: resourceUrl(name) });
    }
    index.push({ band: layer.analysis.band.label, images });
  }
  const drafts = await inOrder(jobs, imagesInFlight());
  const indexName = imagesIndexName(reftime);
  drafts.push({ key: resourceKey(indexName), file: "images.json", contentType: CONTENT_TYPES.json, body: jsonBody({ reftime, bands: index }), resourceName: indexName });
  return drafts;
}

/** The step whose ash areas have the most positions (the first of equals), or undefined when there are no steps. */
export function mostOutlined<T extends { areas: ThresholdBand[] }>(steps: readonly T[]): T | undefined {
  let best: T | undefined;
  let most = -1;
  for (const step of steps) {
    let positions = 0;
    for (const band of step.areas) for (const polygon of band.polygons) positions += polygon.outer.length + polygon.holes.reduce((sum, hole) => sum + hole.length, 0);
    if (positions > most) {
      most = positions;
      best = step;
    }
  }
  return best;
}

/**
 * The area a map shows: the run's box and the volcano, with a margin so the ash is not at the frame. Across
 * the antimeridian it stays one box (east < west, as LatLonBoxModel says), which the maps' projection draws
 * whole, centred on it.
 */
export function mapBox(published: LatLonBoxModel, volcano: { lat: number; lon: number } | undefined): LatLonBoxModel {
  const box = unwrappedBox(published);
  const volcanoLon = volcano ? wrapLongitude(volcano.lon, (box.west + box.east) / 2) : undefined;
  const north = Math.max(box.north, volcano?.lat ?? -90);
  const south = Math.min(box.south, volcano?.lat ?? 90);
  const east = Math.max(box.east, volcanoLon ?? -Infinity);
  const west = Math.min(box.west, volcanoLon ?? Infinity);
  const marginLat = Math.max(2, (north - south) * 0.15);
  const marginLon = Math.max(4, (east - west) * 0.15);
  const whole = east - west + 2 * marginLon >= 360;
  // normaliseLon keeps 180°E as 180: a box ending there stays a box that does not cross.
  return {
    north: Math.min(89, north + marginLat),
    south: Math.max(-89, south - marginLat),
    east: whole ? 180 : normaliseLon(east + marginLon),
    west: whole ? -180 : normaliseLon(west - marginLon),
  };
}
