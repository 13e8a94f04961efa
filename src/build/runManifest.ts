/**
 * `run.json`: the manifest a forecaster writes beside the model output (the runs contract, v1).
 * Every field is optional except where the run cannot be published without it; those rules are
 * checked when the run is assembled, so that a run folder without a manifest can still be valid.
 */
import { z } from "zod";
import { LatLonBoxModel, RunType } from "../contract/ashModel.ts";
import { characterNotInXml } from "../formats/xmlCharacters.ts";
import { INSTANT_FORM, parseInstant } from "../time/instant.ts";

// A date-time without its zone is the usual slip: said as such (a reftime read in local time would be hours off).
const Instant = z.string().refine((text) => parseInstant(text) !== undefined, {
  error: (issue) => (typeof issue.input === "string" && parseInstant(`${issue.input.trim()}Z`) !== undefined ? `the date-time has no zone: add Z for UTC, ${INSTANT_FORM}` : `expected an ISO 8601 date-time, ${INSTANT_FORM}`),
});
/** Text that KML and the RSS feed carry: characters XML does not allow are refused, named. */
const Text = z
  .string()
  .min(1)
  .refine((text) => characterNotInXml(text) === undefined, {
    error: (issue) => `contains ${characterNotInXml(String(issue.input))?.name}, which XML does not allow (the KML and the RSS feed carry this text): delete it`,
  });
const HttpUrl = z.url({ protocol: /^https?$/, error: "expected an absolute http:// or https:// URL" });
/** A file in the run folder: a plain name, no directories, nothing hidden. */
const RunFileName = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "expected a file name in the run folder (letters, digits, _ . -; no directories)");

export const WmsLayerInput = z.strictObject({
  type: z.literal("WMS"),
  name: Text,
  base_url: HttpUrl.meta({ description: "GetMap URL without TIME; the timestep url is this plus TIME=<time>" }),
  capabilities: RunFileName.optional().meta({ description: "GetCapabilities XML saved in the run folder; its time Dimension gives the timesteps" }),
  wms_layer: Text.optional().meta({ description: "Layer name in the capabilities document; defaults to LAYERS= of base_url" }),
  times: z.array(Instant).min(1).optional().meta({ description: "Explicit timesteps, when there is no capabilities file" }),
});
export type WmsLayerInput = z.infer<typeof WmsLayerInput>;

export const KmlLayerInput = z.strictObject({
  type: z.literal("KML"),
  name: Text,
  file: RunFileName.meta({ description: "KML file in the run folder" }),
});
export type KmlLayerInput = z.infer<typeof KmlLayerInput>;

export const LayerInput = z.discriminatedUnion("type", [WmsLayerInput, KmlLayerInput]);
export type LayerInput = z.infer<typeof LayerInput>;

export const LayerGroupInput = z.strictObject({
  name: Text,
  layers: z.array(LayerInput).min(1),
});
export type LayerGroupInput = z.infer<typeof LayerGroupInput>;

export const RunManifest = z
  .strictObject({
    $schema: z.string().optional(),
    type: RunType.optional().meta({ description: "Exercise, Rehearsal or Real Eruption. Never guessed: without it (and without a configured default) the run is invalid" }),
    description: Text.optional().meta({ description: "Free text; defaults to one made from volcano.xml" }),
    reftime: Instant.optional().meta({ description: "Reference time of the model run, ISO 8601 with a zone" }),
    report_url: HttpUrl.optional(),
    latlonbox: LatLonBoxModel.refine((box) => box.north >= box.south, { message: "north is south of south: give the northern edge as north (east < west is allowed: a box across the antimeridian)", path: ["north"] })
      .optional()
      .meta({ description: "Defaults to the extent of the layers" }),
    forecast_hours: z.number().int().min(1).max(240).optional().meta({ description: "Length of the forecast window after reftime, for WMS times given as start/end/period (default 72)" }),
    layergroups: z.array(LayerGroupInput).optional(),
  })
  .meta({ title: "ashcast run manifest (run.json), v1" });
export type RunManifest = z.infer<typeof RunManifest>;

export const DEFAULT_FORECAST_HOURS = 72;

/** The JSON Schema published as templates/run.schema.json, for editors. */
export function runManifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(RunManifest, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
}
