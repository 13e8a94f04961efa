/**
 * The map viewer's offline coastlines (src/build/viewer.ts) from Natural Earth land: pure, no files. Its own
 * module so that a build worker can make them (src/build/stepTasks.ts) while it waits for its first task.
 */
import { geoEquirectangular, geoStream } from "d3-geo";
import { decodeNaturalEarth } from "../render/naturalEarthData.ts";
import { jsonBody } from "./artefacts.ts";

/** Coastline coordinates are rounded to 0.01° (about 1 km): finer than the 1:50M data, and 20% fewer bytes. */
const COAST_DECIMALS = 2;

/** The coastlines file's bytes, from the base maps' Natural Earth 1:50M (src/render/natural-earth-50m.bin). */
export function coastlinesBody(naturalEarth50m: Uint8Array): Buffer {
  return jsonBody(coastlines(naturalEarth50m));
}

/**
 * Natural Earth 1:50M land as one GeoJSON MultiPolygon of single rings, cut at the antimeridian by
 * d3-geo's clipping (the merged land rings cross it, and a flat map would draw those crossings as lines
 * around the world; Antarctica is closed along the map's edge). Each ring is its own polygon: the viewer
 * fills them in one path with the even-odd rule, so lakes stay holes whatever ring they belong to.
 * Coordinates are rounded and repeated points dropped.
 */
function coastlines(naturalEarth50m: Uint8Array): GeoJSON.FeatureCollection {
  const { land } = decodeNaturalEarth(naturalEarth50m);
  const scale = 10 ** COAST_DECIMALS;
  const rings: GeoJSON.Position[][] = [];
  let ring: GeoJSON.Position[] = [];
  // x = longitude and y = -latitude in degrees; precision 0: no resampling, only the antimeridian cut.
  const projection = geoEquirectangular().scale(180 / Math.PI).translate([0, 0]).precision(0);
  const sink = projection.stream({
    point(x, y) {
      const point = [Math.round(x * scale) / scale, Math.round(-y * scale) / scale];
      const last = ring.at(-1);
      if (!last || last[0] !== point[0] || last[1] !== point[1]) ring.push(point);
    },
    lineStart() {
      ring = [];
    },
    lineEnd() {
      // Rings that rounding shrank below a triangle are dropped (tiny islands and lakes).
      if (ring.length >= 3) rings.push([...ring, ring[0]!]);
    },
    polygonStart() {},
    polygonEnd() {},
    sphere() {},
  });
  // Polygon by polygon, in world-atlas's order: the calls streaming its land MultiPolygon made.
  for (const piece of land) geoStream(piece.geometry(), sink);
  return {
    type: "FeatureCollection",
    features: [{ type: "Feature", properties: { source: "Natural Earth 1:50M land (public domain), via world-atlas" }, geometry: { type: "MultiPolygon", coordinates: rings.map((r) => [r]) } }],
  };
}
