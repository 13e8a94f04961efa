/**
 * What every output says of cells the model gave no value (its fill value, or NaN) at a step: the maps, the
 * KML and GeoJSON ash areas and the viewer name the same share of the grid in the same words, so that none
 * of them reads as "no ash" where nothing is known. Pure. The viewer (templates/viewer/viewer.js) words it
 * the same way; its Chromium test compares the two.
 */

/**
 * A share of the grid as people read it, rounded up (an unknown area is never made to look smaller):
 * `less than 0.1 %`, `3.2 %`, `25 %`; at most `99 %`, since a step with no value at all is refused by the build.
 */
export function gridShareText(share: number): string {
  if (!(share > 0 && share < 1)) throw new RangeError(`Internal error: a share of the grid with missing values must be above 0 and below 1, got ${share}`);
  const percent = share * 100;
  if (percent < 0.1) return "less than 0.1 %";
  // The small epsilon keeps 25 (stored as 25.000000000000004) from rounding up to 26.
  const tenths = Math.ceil(percent * 10 - 1e-9) / 10;
  if (tenths < 10) return `${tenths.toFixed(1)} %`;
  return `${Math.min(99, Math.ceil(percent - 1e-9))} %`;
}

/** `No model value in 3.2 % of the grid`; over a whole run (the run map) `... in up to 3.2 % of the grid at some times`. */
export function noValueText(share: number, overTheRun = false): string {
  const text = gridShareText(share);
  if (!overTheRun) return `No model value in ${text} of the grid`;
  return `No model value in ${text.startsWith("less") ? "" : "up to "}${text} of the grid at some times`;
}

/** The same, with what the outputs do there (the KML's step description): no area is drawn where nothing is known. */
export function noValueNote(share: number): string {
  return `${noValueText(share)}: no ash area is drawn there.`;
}
