/** Geometry shared by contouring, KML writing and map rendering. Longitude first, as KML and GeoJSON. */

export type Position = [lon: number, lat: number];
/** A closed ring: the first position is repeated at the end. */
export type Ring = Position[];

/** Outer ring counter-clockwise, holes clockwise (the orientation every KML client accepts). */
export interface Polygon {
  outer: Ring;
  holes: Ring[];
}

/** The area where `lower <= concentration < upper` (upper null: no upper bound). */
export interface ThresholdBand {
  lower: number;
  upper: number | null;
  polygons: Polygon[];
}

/** Maps fractional grid coordinates (x along columns, y along rows; cell centre of column i is x = i) to lon/lat. */
export type GridToLonLat = (x: number, y: number) => Position;
