/**
 * The layers a model output file gives a run: per flight-level band, a KML layer of ash areas per time
 * step (always), and a WMS layer of the variable when a WMS server serves the runs folder. Pure.
 */
import type { AshLayerGroupModel, AshLayerModel, LatLonBoxModel } from "../contract/ashModel.ts";
import { timesForLayer } from "../time/wmsTimeDimension.ts";
import { kmlTimeResourceName, resourceUrl, slugify } from "./artefactNames.ts";
import type { Issues } from "./issues.ts";
import type { ModelBandAnalysis, ModelOutputAnalysis, RunInputFile, WmsCapabilities } from "./readers/types.ts";

/** Query of a model WMS layer's base_url, as the public product writes it. */
export const WMS_STYLE_QUERY = "TRANSPARENT=true&LOGSCALE=false&BELOWMINCOLOR=transparent&ABOVEMAXCOLOR=extend";

/** A model band published as KML ash areas (whole run, and one file per step) and as images. */
export interface ModelLayerOutput {
  slug: string;
  name: string;
  analysis: ModelBandAnalysis;
  thresholds: readonly number[];
}

export interface ModelOutputGroups {
  groups: AshLayerGroupModel[];
  layers: ModelLayerOutput[];
  /** Where each file's ash reaches the lowest threshold (files with no such ash give none). */
  ashExtents: LatLonBoxModel[];
  /** The model domain of each file. */
  domains: LatLonBoxModel[];
}

export function modelOutputGroups(
  folder: string,
  models: ReadonlyArray<{ file: RunInputFile; model: ModelOutputAnalysis }>,
  reftime: string,
  capabilities: { file: RunInputFile; capabilities: WmsCapabilities } | undefined,
  wmsBaseUrl: string | undefined,
  issues: Issues,
): ModelOutputGroups {
  const result: ModelOutputGroups = { groups: [], layers: [], ashExtents: [], domains: [] };
  for (const { file, model } of models) {
    const fileSlug = slugify(file.name.replace(/\.nc$/i, ""));
    const kmlLayers: AshLayerModel[] = [];
    const wmsLayers: AshLayerModel[] = [];
    for (const analysis of model.bands) {
      const slug = `${fileSlug}-${analysis.band.id}`;
      // The band first (clients such as the viewer key on it), then what the field is, from the file.
      const name = `${analysis.band.label} ash areas, ${analysis.meaning.label}`;
      result.layers.push({ slug, name, analysis, thresholds: model.thresholds });
      kmlLayers.push({
        name,
        type: "KML",
        timesteps: analysis.steps.map((step) => ({ time: step.time, url: resourceUrl(kmlTimeResourceName(reftime, slug, step.time)) })),
      });
      if (wmsBaseUrl) {
        const baseUrl = `${wmsBaseUrl.replace(/\/+$/, "")}/${encodeURIComponent(folder)}/${encodeURIComponent(file.name)}?LAYERS=${encodeURIComponent(analysis.variable)}&${WMS_STYLE_QUERY}`;
        const times = capabilities ? timesFromCapabilities(capabilities, analysis.variable, model.times, issues) : model.times;
        if (times) wmsLayers.push({ name: analysis.band.label, type: "WMS", base_url: baseUrl, timesteps: times.map((time) => ({ time, url: `${baseUrl}&TIME=${time}` })) });
      }
    }
    const groupName = `Model_${model.layout}${models.length > 1 ? ` ${file.name}` : ""}`;
    if (wmsLayers.length) result.groups.push({ name: groupName, layers: wmsLayers });
    result.groups.push({ name: `${groupName} ash areas`, layers: kmlLayers });
    if (model.ashExtent) result.ashExtents.push(model.ashExtent);
    result.domains.push(model.domain);
  }
  return result;
}

/**
 * Times of a model variable's WMS layer from the capabilities saved beside it: the layer must be there
 * (a WMS server that does not serve the variable would give clients empty maps).
 */
function timesFromCapabilities(
  { file, capabilities }: { file: RunInputFile; capabilities: WmsCapabilities },
  variable: string,
  modelTimes: readonly string[],
  issues: Issues,
): string[] | undefined {
  const layer = capabilities.layers.find((candidate) => candidate.name === variable);
  if (!layer) {
    issues.error(file.displayPath, `the WMS server does not offer layer ${variable} of the model output`, "save the capabilities of the WMS server that serves this run's model file", `Layer[Name=${variable}]`);
    return undefined;
  }
  if (!layer.timeDimension) return [...modelTimes];
  const first = Date.parse(modelTimes[0] ?? "");
  const last = Date.parse(modelTimes.at(-1) ?? "");
  const result = timesForLayer(layer.timeDimension, { startMs: first, endMs: last }, 10_000);
  if ("errors" in result) {
    for (const message of result.errors) issues.error(file.displayPath, message, "save an unmodified GetCapabilities response from the WMS server", `Layer[Name=${variable}]/Dimension[@name=time]`);
    return undefined;
  }
  return result.times;
}
