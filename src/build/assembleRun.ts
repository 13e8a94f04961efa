/**
 * Joins what the readers found in one run folder into the AshModel of the run, checking every rule
 * of the runs contract (docs/runs.md). Every problem is recorded in `issues`; the result is undefined
 * when the run cannot be published. Pure: no file access, no clock.
 */
import type { AshLayerGroupModel, AshLayerModel, AshModel, LatLonBoxModel } from "../contract/ashModel.ts";
import { publishedBox, unionOfBoxes } from "../geo/lonLatBox.ts";
import { normaliseInstant, parseInstant } from "../time/instant.ts";
import { timesForLayer } from "../time/wmsTimeDimension.ts";
import { kmlResourceName, kmlTimeResourceName, resourceUrl, slugify } from "./artefactNames.ts";
import type { Issues } from "./issues.ts";
import { describeEruption } from "./readers/volcanoXml.ts";
import { MANIFEST_FILE } from "./readers/manifest.ts";
import type { InputReading, KmlDocument, ModelOutputAnalysis, VolcanoDescription, WmsCapabilities } from "./readers/types.ts";
import { DEFAULT_FORECAST_HOURS, type KmlLayerInput, type WmsLayerInput } from "./runManifest.ts";
import { modelOutputGroups, type ModelLayerOutput } from "./assembleModelOutput.ts";
import type { PipelineSettings } from "./pipelineSettings.ts";
import { checkPositions } from "./positionsCheck.ts";

/** Most timesteps one WMS layer may have after expanding start/end/period times. */
export const MAX_WMS_TIMESTEPS = 1000;
/** Group of the KML files found in a folder but not named by its manifest. */
export const UNLISTED_KML_GROUP = "Forecaster KML";


/** A KML file to publish, whole and per timestep, under `slug`. */
export interface KmlLayerOutput {
  slug: string;
  kml: KmlDocument;
  /** Timesteps published for the layer (the reftime alone for an untimed KML). */
  times: string[];
}

export interface AssembledRun {
  model: AshModel;
  volcano?: VolcanoDescription;
  kmlLayers: KmlLayerOutput[];
  /** Ash areas drawn from model output, per flight-level band. */
  modelLayers: ModelLayerOutput[];
  /** The model output the run's map is drawn from (the first file), when there is one. */
  mapSource?: ModelOutputAnalysis;
  /** The model output files with a point-query grid, by file name. */
  pointGrids?: Array<{ source: string; model: ModelOutputAnalysis }>;
}

export function assembleRun(folder: string, readings: InputReading[], issues: Issues, options: PipelineSettings): AssembledRun | undefined {
  const manifestReading = readings.find((r) => r.kind === "manifest");
  const manifest = manifestReading?.manifest;
  const manifestPath = `${folder}/${MANIFEST_FILE}`;
  const volcano = readings.find((r) => r.kind === "volcano")?.volcano;
  const kmlByFile = new Map(readings.flatMap((r) => (r.kind === "kml" ? [[r.file.name, r.kml] as const] : [])));
  const capsByFile = new Map(readings.flatMap((r) => (r.kind === "wms-capabilities" ? [[r.file.name, r] as const] : [])));
  const models = readings.flatMap((r) => (r.kind === "model-output" ? [r] : []));

  // A run.json that failed to read has been reported field by field: no second guess at its fields.
  if (!manifestReading && issues.list.some((issue) => issue.file === manifestPath)) return undefined;

  // Without a run.json at all, the fixes say to create one rather than to add to a file that is not there.
  const addToManifest = (member: string) => (manifestReading ? `add ${member} to run.json` : `create run.json (the folder has none; \`ashcast new-run\` writes a run to start from) with ${member}`);
  const type = manifest?.type ?? options.defaultRunType;
  if (!type) {
    issues.error(manifestPath, "the run has no type", `${addToManifest('"type": "Exercise", "Rehearsal" or "Real Eruption"')} (a run type is never guessed)`, "type");
  }
  // The model run's start: as the forecaster says, else as the model chain wrote it (file name, then attribute).
  const reftime = manifest?.reftime ? normaliseInstant(manifest.reftime) : (models[0]?.model.fileTimestamp ?? models[0]?.model.simulationStart);
  if (!reftime) {
    issues.error(manifestPath, "the run has no reference time", `${addToManifest('"reftime": "YYYY-MM-DDTHH:MM:SSZ" (the start of the model run)')}, or keep the timestamp in the model file name (eemep_hour_YYYYMMDDTHHMMSS.nc)`, "reftime");
  }
  checkModelStarts(reftime, manifest?.reftime !== undefined);
  const modelTitle = models[0]?.model.title;
  const description = manifest?.description ?? (volcano ? describeEruption(volcano) : modelTitle ? `${modelTitle}: ${models[0]!.model.layout} dispersion model output.` : undefined);
  if (!description) {
    issues.error(manifestPath, "the run has no description", `${addToManifest('"description"')}, or put the volcano.xml of the model run in the folder`, "description");
  }
  if (!type || !reftime || !description) return undefined;

  // Where the ash is (model output, forecasters' drawings) decides the box; the domains of WMS servers and
  // models only when nothing shows ash.
  const extents: LatLonBoxModel[] = [];
  const domains: LatLonBoxModel[] = [];
  const kmlLayers = new Map<string, KmlLayerOutput>();
  const kmlLayer = (fileName: string, kml: KmlDocument): AshLayerModel["timesteps"] => {
    const slug = slugify(fileName.replace(/\.kml$/i, ""));
    let output = kmlLayers.get(fileName);
    if (!output) {
      output = { slug: uniqueSlug(slug, kmlLayers), kml, times: kml.times.length ? kml.times : [reftime] };
      kmlLayers.set(fileName, output);
      if (kml.extent) extents.push(kml.extent);
    }
    const layer = output;
    return layer.times.map((time) => ({
      time,
      url: resourceUrl(kml.times.length ? kmlTimeResourceName(reftime, layer.slug, time) : kmlResourceName(reftime, layer.slug)),
    }));
  };

  const layergroups: AshLayerGroupModel[] = [];
  (manifest?.layergroups ?? []).forEach((group, g) => {
    const layers: AshLayerModel[] = [];
    group.layers.forEach((layer, l) => {
      const field = `layergroups[${g}].layers[${l}]`;
      const built =
        layer.type === "KML"
          ? kmlLayerModel(layer, field)
          : wmsLayerModel(layer, field);
      if (built) layers.push(built);
    });
    layergroups.push({ name: group.name, layers });
  });

  /**
   * The model run's start as each model file states it (name stamp, else SIMULATION_START_DATE) against the
   * run's reftime: a run.json reftime that is not the model's start (a typo makes a run the latest, or hides
   * it), or files of different model runs in one folder, are said rather than published silently.
   */
  function checkModelStarts(reftime: string | undefined, given: boolean): void {
    const starts = models.flatMap((m) => {
      const start = m.model.fileTimestamp ?? m.model.simulationStart;
      return start ? [{ file: m.file.name, start }] : [];
    });
    if (given && reftime) {
      const other = starts.find((s) => s.start !== reftime);
      if (other) issues.warning(manifestPath, `reftime ${reftime} is not the start of the model run in ${other.file} (${other.start})`, "give the model run's start as reftime, or leave reftime out (the model file's is used)", "reftime");
    } else if (new Set(starts.map((s) => s.start)).size > 1) {
      issues.warning(
        `${folder}/${starts[0]!.file}`,
        `the folder holds model files of different model runs (${starts.map((s) => `${s.file}: ${s.start}`).join(", ")}); the run's reftime and map are from ${starts[0]!.file}`,
        "keep the files of one model run per folder: move the others into a folder of their own",
      );
    }
  }

  /** Whether an error names this file (path within the runs folder). */
  function hasError(file: string): boolean {
    return issues.list.some((issue) => issue.file === file && issue.severity === "error");
  }

  /** Whether the folder holds a file of this name: read by some reader, or named by an issue (one no reader takes). */
  function isPresent(name: string): boolean {
    return readings.some((r) => r.file.name === name) || issues.list.some((issue) => issue.file === `${folder}/${name}`);
  }

  function kmlLayerModel(layer: KmlLayerInput, field: string): AshLayerModel | undefined {
    const kml = kmlByFile.get(layer.file);
    if (!kml) {
      const file = `${folder}/${layer.file}`;
      // An error about the file itself says why already; a warning ("no reader takes this file") does not stop the layer's loss being one.
      if (!hasError(file)) {
        if (isPresent(layer.file)) {
          issues.error(manifestPath, `${layer.file} is named as a KML layer but is not a KML document${/\.kmz$/i.test(layer.file) ? " (a KMZ, zipped KML, is not read)" : ""}`, `save the drawing as a .kml file (a KMZ unzipped is its doc.kml) and name that file in ${field}.file`, `${field}.file`);
        } else {
          issues.error(manifestPath, `KML file ${layer.file} is not in the run folder`, `copy ${layer.file} into ${folder}/ or correct the file name`, `${field}.file`);
        }
      }
      return undefined;
    }
    return { name: layer.name, type: "KML", timesteps: kmlLayer(layer.file, kml) };
  }

  function wmsLayerModel(layer: WmsLayerInput, field: string): AshLayerModel | undefined {
    let times: string[] | undefined;
    if (layer.times) {
      times = [...new Set(layer.times.map((t) => normaliseInstant(t)!))].sort();
    } else if (layer.capabilities) {
      times = capabilitiesTimes(layer, field, capsByFile.get(layer.capabilities)?.capabilities);
    } else {
      issues.error(manifestPath, "a WMS layer needs its times", 'add "capabilities": "<GetCapabilities file in the folder>" or "times": [...]', field);
    }
    if (!times) return undefined;
    return {
      name: layer.name,
      type: "WMS",
      base_url: layer.base_url,
      timesteps: times.map((time) => ({ time, url: withTime(layer.base_url, time) })),
    };
  }

  function capabilitiesTimes(layer: WmsLayerInput, field: string, capabilities: WmsCapabilities | undefined): string[] | undefined {
    const capsPath = `${folder}/${layer.capabilities}`;
    if (!capabilities) {
      if (!hasError(capsPath)) {
        const present = isPresent(layer.capabilities!);
        issues.error(
          manifestPath,
          present ? `${layer.capabilities} is not a WMS GetCapabilities document` : `capabilities file ${layer.capabilities} is not in the run folder`,
          `save the WMS server's GetCapabilities response as ${layer.capabilities} in ${folder}/`,
          `${field}.capabilities`,
        );
      }
      return undefined;
    }
    const wmsLayer = layer.wms_layer ?? layersParameter(layer.base_url);
    if (!wmsLayer) {
      issues.error(manifestPath, "the WMS layer name is unknown: base_url has no LAYERS parameter", 'add "wms_layer": "<layer name in the capabilities>"', `${field}.wms_layer`);
      return undefined;
    }
    const found = capabilities.layers.find((candidate) => candidate.name === wmsLayer);
    if (!found) {
      const names = capabilities.layers.map((c) => c.name);
      issues.error(
        capsPath,
        `layer ${wmsLayer} is not in the capabilities (it has ${names.slice(0, 8).join(", ")}${names.length > 8 ? ", ..." : ""})`,
        `correct wms_layer or LAYERS= in ${field} of run.json, or save the capabilities of the right server`,
        `Layer[Name=${wmsLayer}]`,
      );
      return undefined;
    }
    if (!found.timeDimension) {
      issues.error(capsPath, `layer ${wmsLayer} has no time dimension`, 'give the times in run.json ("times": [...]) instead', `Layer[Name=${wmsLayer}]/Dimension[@name=time]`);
      return undefined;
    }
    const start = parseInstant(reftime!)!;
    const hours = manifest?.forecast_hours ?? DEFAULT_FORECAST_HOURS;
    const result = timesForLayer(found.timeDimension, { startMs: start, endMs: start + hours * 3_600_000 }, MAX_WMS_TIMESTEPS);
    if ("errors" in result) {
      for (const message of result.errors) {
        issues.error(capsPath, message, "save an unmodified GetCapabilities response from the WMS server, or give the times in run.json", `Layer[Name=${wmsLayer}]/Dimension[@name=time]`);
      }
      return undefined;
    }
    if (result.times.length === 0) {
      issues.error(capsPath, `layer ${wmsLayer} has no time within the forecast window (${hours} h from ${reftime})`, 'check reftime, or set "forecast_hours" in run.json', `Layer[Name=${wmsLayer}]/Dimension[@name=time]`);
      return undefined;
    }
    if (found.extent) domains.push(found.extent);
    return result.times;
  }

  // Model output: ash areas per flight-level band (and WMS layers when a WMS server serves runs/).
  const unusedCapabilities = [...capsByFile.values()].find((caps) => !(manifest?.layergroups ?? []).some((g) => g.layers.some((l) => l.type === "WMS" && l.capabilities === caps.file.name)));
  const fromModels = modelOutputGroups(folder, models, reftime, unusedCapabilities, options.wmsBaseUrl, issues);
  layergroups.push(...fromModels.groups);
  extents.push(...fromModels.ashExtents);
  domains.push(...fromModels.domains);

  // KML files the manifest does not name are forecasters' drawings: publish them too.
  const unlisted = [...kmlByFile.entries()].filter(([name]) => !kmlLayers.has(name));
  if (unlisted.length) {
    layergroups.push({
      name: UNLISTED_KML_GROUP,
      layers: unlisted.map(([name, kml]) => ({ name: kml.name ?? name.replace(/\.kml$/i, ""), type: "KML", timesteps: kmlLayer(name, kml) })),
    });
  }

  const volcanoFile = readings.find((r) => r.kind === "volcano")?.file.name;
  checkPositions(
    {
      folder,
      ...(volcano && volcanoFile ? { volcano: { file: volcanoFile, name: volcano.name, lat: volcano.lat, lon: volcano.lon } } : {}),
      drawings: [...kmlLayers.entries()].flatMap(([file, layer]) => (layer.kml.extent ? [{ file, extent: layer.kml.extent }] : [])),
      domains: models.map((m) => ({ file: m.file.name, domain: m.model.domain })),
    },
    issues,
  );

  const nonEmptyGroups = layergroups.filter((group) => group.layers.length > 0);
  if (issues.hasErrors) return undefined;
  if (nonEmptyGroups.length === 0) {
    issues.error(manifestPath, "the run has no layers", 'add "layergroups" to run.json, or the model output (NetCDF) or a KML file to the folder', "layergroups");
    return undefined;
  }

  // Model extents may run past 180° (a grid across the antimeridian): published wrapped, east < west.
  const union = unionOfBoxes(extents) ?? unionOfBoxes(domains);
  const latlonbox = manifest?.latlonbox ?? (union && publishedBox(union));
  const allTimes = [...new Set(nonEmptyGroups.flatMap((group) => group.layers.flatMap((layer) => layer.timesteps.map((step) => step.time))))].sort();
  const model: AshModel = {
    meta: {
      type,
      description,
      reftime,
      ...(latlonbox ? { latlonbox } : {}),
      timesteps: allTimes.map((time) => ({ time })),
      ...(manifest?.report_url ? { report_url: manifest.report_url } : {}),
    },
    layergroups: nonEmptyGroups,
  };
  return {
    model,
    ...(volcano ? { volcano } : {}),
    kmlLayers: [...kmlLayers.values()],
    modelLayers: fromModels.layers,
    ...(models[0] ? { mapSource: models[0].model } : {}),
    pointGrids: models.flatMap((m) => (m.model.pointGrid ? [{ source: m.file.name, model: m.model }] : [])),
  };
}

/** base_url with `TIME=<time>` appended, as the public product builds its timestep urls. */
export function withTime(baseUrl: string, time: string): string {
  const separator = !baseUrl.includes("?") ? "?" : baseUrl.endsWith("?") || baseUrl.endsWith("&") ? "" : "&";
  return `${baseUrl}${separator}TIME=${time}`;
}

function layersParameter(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  for (const [key, value] of url.searchParams) if (key.toUpperCase() === "LAYERS" && value) return value;
  return undefined;
}

function uniqueSlug(slug: string, taken: Map<string, KmlLayerOutput>): string {
  const used = new Set([...taken.values()].map((layer) => layer.slug));
  let candidate = slug;
  for (let n = 2; used.has(candidate); n++) candidate = `${slug}-${n}`;
  return candidate;
}

