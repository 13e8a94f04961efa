/**
 * Altitude to flight level, and the flight-level bands a level falls in. Pure.
 *
 * A flight level is pressure altitude in hundreds of feet (ICAO standard atmosphere, 1013.25 hPa). A
 * route's altitudes (GeoJSON `[lon, lat, altitude_m]`) are taken as pressure altitudes in metres, as a
 * flight plan's cruise levels are: FL = altitude_m / 0.3048 / 100. Above the transition altitude a
 * geometric altitude from GPS differs from it by up to a few hundred metres (temperature, pressure);
 * the bands are 15 000 ft deep and a level on a band edge counts in both (below).
 *
 * @example flightLevel(10668) // 350 (35 000 ft)
 */

/** FL = metres / 0.3048 / 100, written as metres × 100 / 3048 so that whole levels come out exact (6096 m is FL200, not 199.99…). */
export function flightLevel(altitudeM: number): number {
  return (altitudeM * 100) / 3048;
}

export interface FlBand {
  lowerFl: number;
  upperFl: number;
}

/**
 * Indices of the bands holding a flight level: lower ≤ FL ≤ upper, so a level on the edge of two bands
 * meets both (the higher concentration counts). Below the surface counts as the lowest band; above every
 * band, none.
 */
export function bandsAt(bands: readonly FlBand[], fl: number): number[] {
  let lowest = Infinity;
  for (const band of bands) if (band.lowerFl < lowest) lowest = band.lowerFl;
  const level = fl < lowest ? lowest : fl;
  const result: number[] = [];
  for (let i = 0; i < bands.length; i++) if (level >= bands[i]!.lowerFl && level <= bands[i]!.upperFl) result.push(i);
  return result;
}

/** A flight-level band as published: `SFC/FL200`, `FL200/350` (levels in three digits), SFC counting as level 0. */
export interface StatedBand {
  label: string;
  lowerFl: number;
  upperFl: number;
}

// `SFC/FL200`, `FL200/350`, `FL200-350`, `FL200-FL350`, `FL 200/350`, `sfc-fl200`: a lower level (SFC or FL),
// a slash or dash, and an upper level; never a bare number, which could be anything.
const STATED_BAND = /(?<![A-Za-z0-9])(SFC|FL ?(\d{1,3}))\s*[/\-–]\s*(?:FL ?)?(\d{1,3})(?![0-9])/gi;

/**
 * The flight-level band a text states (a forecaster's folder or placemark name, an ExtendedData value):
 * undefined when it states none, null when it states more than one (which one is meant cannot be read).
 *
 * @example readStatedBand("FL200-350") // { label: "FL200/350", lowerFl: 200, upperFl: 350 }
 * @example readStatedBand("Observation") // undefined
 */
export function readStatedBand(text: string): StatedBand | null | undefined {
  const found = new Map<string, StatedBand>();
  for (const match of text.matchAll(STATED_BAND)) {
    const lowerFl = match[2] === undefined ? 0 : Number(match[2]);
    const upperFl = Number(match[3]);
    if (!(upperFl > lowerFl)) return null;
    const level = (fl: number): string => String(fl).padStart(3, "0");
    const label = match[2] === undefined ? `SFC/FL${level(upperFl)}` : `FL${level(lowerFl)}/${level(upperFl)}`;
    found.set(label, { label, lowerFl, upperFl });
  }
  if (found.size === 0) return undefined;
  return found.size === 1 ? [...found.values()][0]! : null;
}
