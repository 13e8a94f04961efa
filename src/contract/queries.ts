/**
 * The answers of the point-query endpoints (`GET /point`, `POST /route`) and the route a client sends:
 * the server's types are inferred from these schemas, and the OpenAPI document is generated from them,
 * so the description cannot drift from what is answered.
 */
import { z } from "zod";
import { ASH_CLASS_IDS, classTable, classTableText } from "./ashClasses.ts";
import { PublishedInstant } from "./ashModel.ts";

const Instant = PublishedInstant.describe("ISO 8601 instant, UTC, whole seconds (e.g. 2026-06-01T06:00:00Z)");
const Mg = z.number().nonnegative().describe("mg/m³: the model's value read at most 0.1 % above it (never below); 0 below 0.001");
/** The ash class of a value: the class table's ids (src/contract/ashClasses.ts), described with the whole table. */
export const AshClassId = z.enum([...ASH_CLASS_IDS, "none", "missing"]).meta({ description: classTableText(), "x-ash-classes": classTable() });
const BandName = z.string().describe("Flight-level band, e.g. `FL200-350`");

export const PointStep = z.strictObject({ time: Instant, value: Mg.nullable(), class: AshClassId });

export const PointSeries = z.strictObject({
  model: z.string().describe("Model layout, `EEMEP` or `SNAP`"),
  source: z.string().describe("The model output file"),
  band: BandName,
  label: z.string().describe("The band as aviation charts write it, e.g. `SFC/FL200`"),
  lower_fl: z.number(),
  upper_fl: z.number(),
  cell: z.strictObject({ x: z.number().int(), y: z.number().int() }).describe("The grid cell (column, row) holding the place"),
  support: z
    .array(z.strictObject({ x: z.number().int(), y: z.number().int() }))
    .describe("The cells whose highest value the place gets: its own at a cell centre, the 2 or 4 centres around it elsewhere (never less than the ash areas drawn there)"),
  steps: z.array(PointStep),
});

export const PointAnswer = z.strictObject({
  reftime: Instant,
  location: z.strictObject({ lat: z.number(), lon: z.number() }),
  time: Instant.optional().describe("The `time` asked for; each series then holds the one step valid at it"),
  units: z.literal("mg/m3"),
  series: z.array(PointSeries),
  outside: z.array(z.strictObject({ model: z.string(), source: z.string() })).describe("Models of the run whose domain does not hold the place"),
});
export type PointAnswer = z.infer<typeof PointAnswer>;
export type PointSeries = z.infer<typeof PointSeries>;
export type PointStep = z.infer<typeof PointStep>;

export const RoutePoint = z.strictObject({
  lon: z.number(),
  lat: z.number(),
  fl: z.number().describe("Flight level: altitude (taken as pressure altitude) in metres / 0.3048 / 100"),
  km: z.number().describe("Distance along the route from its first position"),
  time: Instant.optional(),
});
export type RoutePoint = z.infer<typeof RoutePoint>;

export const Stretch = z.strictObject({ from: RoutePoint, to: RoutePoint });
export type Stretch = z.infer<typeof Stretch>;

export const Encounter = z.strictObject({
  band: BandName,
  class: AshClassId,
  highest: Mg,
  entry: RoutePoint.describe("The first sample in the stretch (at most one sample past its edge)"),
  exit: RoutePoint.describe("The last sample in the stretch"),
});
export type Encounter = z.infer<typeof Encounter>;

export const ModelRoute = z.strictObject({
  model: z.string(),
  source: z.string(),
  sampling_km: z.number().describe("Largest distance between samples: half the smallest grid cell where the route goes"),
  samples: z.number().int(),
  highest: RoutePoint.extend({ value: Mg, class: AshClassId, band: BandName }).nullable().describe("The highest concentration met (without times: at any step)"),
  bands: z
    .array(z.strictObject({ band: BandName, label: z.string(), lower_fl: z.number(), upper_fl: z.number(), highest: Mg.nullable(), class: AshClassId }))
    .describe("Per band, the highest value met; null with class `none` when the route never flew in the band, `missing` when it did only where no value is known (outside the model's domain or forecast, or where the model gave none)"),
  encounters: z.array(Encounter).optional().describe("With coordTimes: each stretch at or above the lowest threshold"),
  steps: z
    .array(
      z.strictObject({
        time: Instant,
        value: Mg.nullable(),
        class: AshClassId,
        band: BandName.nullable(),
        lon: z.number().nullable(),
        lat: z.number().nullable(),
        missing_share: z.number().gt(0).lt(1).optional().describe("The share of the grid cells met along the path (per band) without a model value at this step (fill value or NaN), when some are: value is the highest of the others"),
      }),
    )
    .optional()
    .describe("Without coordTimes: per step, the highest value anywhere along the path at its flight levels; value null and class `missing` at a step where nothing along the path is known (all of it outside the domain or above the bands, or the model's values missing there), never a 0 that would read as clear"),
  outside_domain: z.array(Stretch).describe("Stretches outside the model's domain: nothing is known there"),
  missing_values: z.array(Stretch).optional().describe("With coordTimes: stretches where the model gave no value (fill value or NaN) in a band of the level flown at the step flown: nothing is known there, never read as clear"),
  outside_forecast: z.array(Stretch).describe("Stretches flown before the first step or after the last one ends"),
  above_bands: z.array(Stretch).describe("Stretches above the model's highest flight-level band"),
});
export type ModelRoute = z.infer<typeof ModelRoute>;

export const RouteAnswer = z.strictObject({
  reftime: Instant,
  units: z.literal("mg/m3"),
  timed: z.boolean().describe("Whether coordTimes was given"),
  vertices: z.number().int(),
  length_km: z.number(),
  models: z.array(ModelRoute),
});
export type RouteAnswer = z.infer<typeof RouteAnswer>;

/**
 * What POST /route takes (documentation: the server checks it field by field to name what is wrong). Loose
 * objects: a GeoJSON Feature may carry `id`, `bbox` and foreign members (RFC 7946), which the server ignores.
 */
export const RouteRequest = z.looseObject({
  type: z.literal("Feature"),
  geometry: z.looseObject({
    type: z.literal("LineString"),
    coordinates: z.array(z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90), z.number().min(-500).max(30480)])).min(2).max(10_000)
      .describe("[lon, lat, altitude_m] per vertex; altitude is pressure altitude in metres (FL350 = 10668)"),
  }),
  properties: z
    .looseObject({ coordTimes: z.array(z.string().meta({ format: "date-time" })).optional().describe("One ISO 8601 instant (with a zone) per vertex, not decreasing") })
    .nullable()
    .optional(),
});
