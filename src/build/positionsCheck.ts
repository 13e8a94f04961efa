/**
 * Positions that cannot be right as given: the volcano outside the domain of every model file, or a
 * forecaster's drawing a continent away from the volcano. Both are what latitude and longitude swapped give
 * (KML wants lon,lat; volcano.xml has lat and lon), which would publish ash in the wrong hemisphere. Warnings,
 * not errors: ash does travel far, and a model domain may be cut short on purpose.
 */
import type { LatLonBoxModel } from "../contract/ashModel.ts";
import { distanceToBoxKm } from "../geo/lonLatBox.ts";
import type { Issues } from "./issues.ts";

/** Farther than this from the volcano, a drawing is flagged: ash of one eruption charted a continent away. */
export const FAR_FROM_VOLCANO_KM = 5000;
/** A vent this close outside a domain's edge is taken as on it (cell centres against cell edges). */
const DOMAIN_EDGE_KM = 50;

export interface PositionsToCheck {
  folder: string;
  volcano?: { file: string; name: string; lat: number; lon: number };
  drawings: ReadonlyArray<{ file: string; extent: LatLonBoxModel }>;
  domains: ReadonlyArray<{ file: string; domain: LatLonBoxModel }>;
}

export function checkPositions({ folder, volcano, drawings, domains }: PositionsToCheck, issues: Issues): void {
  if (!volcano) return;
  const where = `${volcano.name} (${volcano.lat}, ${volcano.lon})`;
  if (domains.length > 0 && domains.every(({ domain }) => distanceToBoxKm(domain, volcano.lon, volcano.lat) > DOMAIN_EDGE_KM)) {
    issues.warning(
      `${folder}/${volcano.file}`,
      `the volcano ${where} is outside the domain of every model file (${domains.map((d) => d.file).join(", ")})`,
      "check the volcano's latitude and longitude (decimal degrees, latitude north positive, longitude east positive): swapped, or a sign lost?",
    );
  }
  for (const { file, extent } of drawings) {
    const km = distanceToBoxKm(extent, volcano.lon, volcano.lat);
    if (km > FAR_FROM_VOLCANO_KM) {
      issues.warning(
        `${folder}/${file}`,
        `its ash areas are ${Math.round(km).toLocaleString("en")} km from the volcano ${where}`,
        "check the coordinates: KML writes longitude,latitude[,altitude] (lat,lon order puts the drawing far away)",
      );
    }
  }
}
