/** The settings that decide what a run publishes: part of every run's input hash. */
import { createHash } from "node:crypto";
import type { RunType } from "../contract/ashModel.ts";
import { DEFAULT_THRESHOLDS_MG_M3 } from "../model/types.ts";

export interface PipelineSettings {
  /** Run type for runs whose run.json gives none; never guessed otherwise. */
  defaultRunType?: RunType;
  /** Concentration thresholds in mg/m³, ascending, for the ash areas drawn from model output. */
  thresholds?: readonly number[];
  /**
   * Base URL under which a WMS server (THREDDS ncWMS) serves the runs folder's model output:
   * `<wmsBaseUrl>/<run folder>/<file>.nc?LAYERS=<variable>`. Without it, model output gets no WMS layers.
   */
  wmsBaseUrl?: string;
}

/** Bump when a change to the pipeline changes artefact bytes: every run is then rebuilt. */
export const PIPELINE_VERSION = "16";

export const thresholdsOf = (settings: PipelineSettings): readonly number[] => settings.thresholds ?? DEFAULT_THRESHOLDS_MG_M3;

export function pipelineKey(settings: PipelineSettings, version = PIPELINE_VERSION): string {
  return createHash("sha256")
    .update(JSON.stringify({ PIPELINE_VERSION: version, defaultRunType: settings.defaultRunType ?? null, thresholds: thresholdsOf(settings), wmsBaseUrl: settings.wmsBaseUrl ?? null }))
    .digest("hex");
}

/**
 * Whether `key` is the key of these settings under an earlier PIPELINE_VERSION: ashcast was upgraded and
 * nothing an operator set changed, so what the upgrade renders differently is not a change of the forecast.
 */
export function isEarlierVersionOf(key: string, settings: PipelineSettings): boolean {
  for (let version = Number(PIPELINE_VERSION) - 1; version >= 1; version--) if (pipelineKey(settings, String(version)) === key) return true;
  return false;
}
