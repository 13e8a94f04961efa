/**
 * The GeoJSON resources (RFC 7946) as a contract: the twins of the KML ash-area resources, drawn from model
 * output (src/geo/ashGeoJson.ts) or converted from a forecaster's KML (src/geo/forecasterGeoJson.ts).
 * /openapi.json describes them from these schemas, and the tests hold the build's bodies to them
 * (test/contract/geoJsonSchema.test.ts). Positions are [lon, lat] or [lon, lat, altitude in metres], longitudes within ±180 (§3.1.9).
 */
import { z } from "zod";
import { AshClassId } from "./queries.ts";

const Longitude = z.number().min(-180).max(180);
const Latitude = z.number().min(-90).max(90);
export const GeoJsonPosition = z
  .union([z.tuple([Longitude, Latitude]), z.tuple([Longitude, Latitude, z.number()])])
  .meta({ description: "[longitude, latitude] in degrees (WGS 84), or with the altitude in metres the KML gave" });

const Positions = z.array(GeoJsonPosition);
/** A closed ring: at least four positions, the last the first (§3.1.6). */
const Ring = z.array(GeoJsonPosition).min(4);
const PolygonCoordinates = z.array(Ring).min(1).meta({ description: "The exterior ring first (counter-clockwise), then holes (clockwise)" });

const Point = z.strictObject({ type: z.literal("Point"), coordinates: GeoJsonPosition });
const MultiPoint = z.strictObject({ type: z.literal("MultiPoint"), coordinates: Positions });
const LineString = z.strictObject({ type: z.literal("LineString"), coordinates: z.array(GeoJsonPosition).min(2) });
const MultiLineString = z.strictObject({ type: z.literal("MultiLineString"), coordinates: z.array(z.array(GeoJsonPosition).min(2)) });
const Polygon = z.strictObject({ type: z.literal("Polygon"), coordinates: PolygonCoordinates });
const MultiPolygon = z.strictObject({ type: z.literal("MultiPolygon"), coordinates: z.array(PolygonCoordinates) });
const SingleGeometry = z.discriminatedUnion("type", [Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon]);
/** A KML MultiGeometry of mixed kinds; never nested (§3.1.8 advises against it). */
const GeometryCollection = z.strictObject({ type: z.literal("GeometryCollection"), geometries: z.array(SingleGeometry) });
export const GeoJsonGeometry = z.discriminatedUnion("type", [Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, GeometryCollection]);

/** [west, south, east, north], or with the lowest and highest altitude; west > east when the box crosses the antimeridian (§5.2). */
export const GeoJsonBbox = z
  .union([z.tuple([Longitude, Latitude, Longitude, Latitude]), z.tuple([Longitude, Latitude, z.number(), Longitude, Latitude, z.number()])])
  .meta({ description: "[west, south, east, north] (with altitudes: [west, south, lowest, east, north, highest]); west > east when it crosses the antimeridian" });

const Instant = z.iso.datetime();

const VolcanoFeature = z.strictObject({
  type: z.literal("Feature"),
  geometry: Point,
  properties: z.strictObject({ kind: z.literal("volcano"), name: z.string() }),
});
const AshAreaFeature = z.strictObject({
  type: z.literal("Feature"),
  geometry: MultiPolygon,
  properties: z.strictObject({
    kind: z.literal("ash"),
    quantity: z.string().meta({ description: "What the field is, as the model output states it (e.g. `6-hour maximum concentration`)" }),
    band: z.string().meta({ description: "The flight-level band, e.g. `FL200/350`" }),
    lower: z.number().meta({ description: "The interval's lower concentration, mg/m³ (included)" }),
    upper: z.number().nullable().meta({ description: "The interval's upper concentration, mg/m³ (excluded); null for the highest class" }),
    class: AshClassId,
    units: z.literal("mg/m3"),
    time: Instant,
    end: Instant,
  }),
});

/** A step where the model gave some cells no value: said without geometry, so that no step reads as "no ash" where nothing is known. */
const NoValueFeature = z.strictObject({
  type: z.literal("Feature"),
  geometry: z.null(),
  properties: z.strictObject({
    kind: z.literal("no-value"),
    band: z.string().meta({ description: "The flight-level band, e.g. `FL200/350`" }),
    share: z.number().gt(0).lt(1).meta({ description: "The share of the model grid without a value (fill value or NaN) at this step; no ash area is drawn there" }),
    text: z.string().meta({ description: "The same in words, as the maps and the KML say it: `No model value in 3.2 % of the grid`" }),
    time: Instant,
    end: Instant,
  }),
});

/**
 * Ash areas contoured from model output: per step and concentration interval one MultiPolygon, the volcano as a
 * Point, and per step with cells the model gave no value a Feature without geometry that says how much.
 */
export const AshAreasGeoJson = z
  .strictObject({
    type: z.literal("FeatureCollection"),
    name: z.string(),
    quantity: z.string(),
    band: z.strictObject({ id: z.string(), label: z.string() }),
    thresholds: z.array(z.number()),
    units: z.literal("mg/m3"),
    bbox: GeoJsonBbox.optional(),
    features: z.array(z.union([VolcanoFeature, AshAreaFeature, NoValueFeature])),
  })
  .meta({ description: "Ash areas contoured from model output (the KML resource of the same name with .kml), RFC 7946" });

const ForecasterFeature = z.strictObject({
  type: z.literal("Feature"),
  geometry: GeoJsonGeometry.nullable(),
  properties: z.strictObject({
    source: z.literal("forecaster"),
    name: z.string().nullable(),
    description: z.string().nullable().meta({ description: "The Placemark's description as plain text" }),
    band: z.string().nullable(),
    lower_fl: z.number().nullable(),
    upper_fl: z.number().nullable(),
    time: Instant.nullable().meta({ description: "TimeSpan begin" }),
    end: Instant.nullable().meta({ description: "TimeSpan end" }),
    timestamp: Instant.nullable().meta({ description: "TimeStamp when" }),
  }),
});

/** A forecaster's KML converted: one Feature per Placemark, and what has no GeoJSON counterpart counted by element name. */
export const ForecasterGeoJson = z
  .strictObject({
    type: z.literal("FeatureCollection"),
    name: z.string().nullable(),
    source: z.literal("forecaster"),
    left_out: z.strictObject({ count: z.number().int().min(0), kinds: z.record(z.string(), z.number().int().min(1)) }),
    bbox: GeoJsonBbox.optional(),
    features: z.array(ForecasterFeature),
  })
  .meta({ description: "A forecaster's KML (the resource of the same name with .kml) converted to RFC 7946 GeoJSON" });

export const AshGeoJsonResource = z.union([AshAreasGeoJson, ForecasterGeoJson]);
