/**
 * The published resources of the specification (AshModel, RefTimeModel ...), as zod schemas.
 * Shared by the build (which validates what it writes) and the server (which serves and documents it).
 * Key order here is the key order of the published JSON.
 */
import { z } from "zod";
import { RUN_TYPES } from "./runTypes.ts";

export { RUN_TYPES };
export const RunType = z.enum(RUN_TYPES);
export type RunType = z.infer<typeof RunType>;

/** `YYYY-MM-DDTHH:MM:SSZ`, the only spelling ashcast publishes: an RFC 3339 `date-time` in UTC, whole seconds. */
export const PublishedInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, "expected YYYY-MM-DDTHH:MM:SSZ").meta({ format: "date-time" });

export const LatLonBoxModel = z.strictObject({
  north: z.number().min(-90).max(90),
  south: z.number().min(-90).max(90),
  east: z.number().min(-180).max(180),
  west: z.number().min(-180).max(180),
}).meta({ description: "Bounding box in decimal degrees, WGS 84 (EPSG:4326); east < west when the box crosses the antimeridian." });
export type LatLonBoxModel = z.infer<typeof LatLonBoxModel>;

export const AshTimestepModel = z.strictObject({
  time: PublishedInstant,
  url: z.string().optional(),
});
export type AshTimestepModel = z.infer<typeof AshTimestepModel>;

export const AshLayerModel = z.strictObject({
  name: z.string(),
  type: z.enum(["WMS", "KML"]),
  base_url: z.string().optional(),
  timesteps: z.array(AshTimestepModel),
});
export type AshLayerModel = z.infer<typeof AshLayerModel>;

export const AshLayerGroupModel = z.strictObject({
  name: z.string(),
  layers: z.array(AshLayerModel),
});
export type AshLayerGroupModel = z.infer<typeof AshLayerGroupModel>;

export const AshMetaModel = z.strictObject({
  type: RunType,
  description: z.string(),
  reftime: PublishedInstant,
  latlonbox: LatLonBoxModel.optional(),
  timesteps: z.array(AshTimestepModel),
  report_url: z.string().optional(),
});
export type AshMetaModel = z.infer<typeof AshMetaModel>;

export const AshModel = z.strictObject({
  meta: AshMetaModel,
  layergroups: z.array(AshLayerGroupModel),
});
export type AshModel = z.infer<typeof AshModel>;

export const RefTimeModel = z.strictObject({
  reftimes: z.array(PublishedInstant),
});
export type RefTimeModel = z.infer<typeof RefTimeModel>;
