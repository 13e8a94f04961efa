/**
 * Longitude/latitude boxes in the published convention (the spec's LatLonBoxModel): longitudes within
 * ±180, east < west when the box crosses the antimeridian. Inside the build, boxes may come unwrapped
 * (a model grid across 180° gives east up to 360): these functions take either. Pure.
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { wrapLongitude } from "../model/gridMapping.ts";
import { arcBetween, arcToKm } from "./greatCircle.ts";

/** The same box with east ≥ west, east up to 540 (a crossing box gets 360 added to its east). */
export function unwrappedBox(box: LatLonBoxModel): LatLonBoxModel {
  return box.east >= box.west ? box : { ...box, east: box.east + 360 };
}

/** The box that holds all of them (unwrapped around the first box's middle), or undefined for none. */
export function unionOfBoxes(boxes: readonly LatLonBoxModel[]): LatLonBoxModel | undefined {
  const first = boxes[0];
  if (!first) return undefined;
  const reference = unwrappedBox(first);
  const middle = (reference.west + reference.east) / 2;
  let { north, south, west, east } = reference;
  for (const box of boxes.slice(1)) {
    const b = unwrappedBox(box);
    const shift = 360 * Math.round(((b.west + b.east) / 2 - middle) / 360);
    north = Math.max(north, b.north);
    south = Math.min(south, b.south);
    west = Math.min(west, b.west - shift);
    east = Math.max(east, b.east - shift);
  }
  return { north, south, west, east };
}

/** The box as published: longitudes wrapped into −180 … 180, the whole circle when it spans 360° or more. */
export function publishedBox(box: LatLonBoxModel): LatLonBoxModel {
  const b = unwrappedBox(box);
  if (b.east - b.west >= 360) return { north: b.north, south: b.south, west: -180, east: 180 };
  const wrap = (lon: number): number => {
    // In range already: as it is (lon + 180 - 180 need not give lon back: -22.581 became -22.581000000000017).
    if (lon >= -180 && lon <= 180) return lon;
    const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
    return wrapped === -180 && lon > 0 ? 180 : wrapped;
  };
  return { north: b.north, south: b.south, west: wrap(b.west), east: wrap(b.east) };
}

/**
 * The great-circle distance in km from a position to the nearest point of a box (0 inside it), either
 * convention. The nearest point is taken with the position's latitude clamped and its longitude clamped
 * to the nearer edge: exact inside and along meridians, a close estimate elsewhere (enough to tell a
 * drawing a continent away).
 * @example distanceToBoxKm({ north: 1, south: -1, west: -1, east: 1 }, 0, 0) // 0
 */
export function distanceToBoxKm(box: LatLonBoxModel, lon: number, lat: number): number {
  const b = unwrappedBox(box);
  // The position's longitude on the box's turn of the world, nearest its middle.
  const middle = (b.west + b.east) / 2;
  const onTurn = wrapLongitude(lon, middle);
  const nearestLon = onTurn >= b.west && onTurn <= b.east ? onTurn : Math.abs(onTurn - b.west) <= Math.abs(onTurn - b.east) ? b.west : b.east;
  const nearestLat = Math.min(b.north, Math.max(b.south, lat));
  return arcToKm(arcBetween([onTurn, lat], [nearestLon, nearestLat]));
}
