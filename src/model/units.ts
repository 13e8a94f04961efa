/**
 * Mass concentration units as model files spell them, to mg/m³ (the unit of the aviation thresholds).
 * EEMEP copies `ug/m3` from D3_ug_ASH; other writers use `ug m-3`, `µg/m³` (micro sign U+00B5 or
 * Greek mu U+03BC), `ug/m^3`, `microgram/m3`, ... Case matters (`Mg` would be megagrams), so only
 * the spellings below are accepted and anything else is an error rather than a guess.
 */

const MASS_TO_MG: Record<string, number> = { ng: 1e-6, ug: 1e-3, mg: 1, g: 1e3, kg: 1e6 };

const MASS_WORDS: Array<[RegExp, string]> = [
  [/^nano-?grams?/, "ng"],
  [/^micro-?grams?/, "ug"],
  [/^mcg\b/, "ug"],
  [/^milli-?grams?/, "mg"],
  [/^kilo-?grams?/, "kg"],
  [/^grams?/, "g"],
];

// After the mass: "/m3", "/ m^3", "/m**3", "/meter3", " m-3", ".m-3", "*m^-3".
const PER_CUBIC_METRE = /^(?:\s*\/\s*(?:m|metres?|meters?)\s*(?:\^|\*\*)?\s*3|(?:\s*[.*·]\s*|\s+)m\s*(?:\^|\*\*)?\s*-\s*3)$/;

/** Spellings shown in error messages. */
export const CONCENTRATION_UNITS_EXAMPLES = "ug/m3 (as EEMEP writes), ug m-3, µg/m³, mg/m3, g/m3, kg/m3, ng/m3";

/** The factor that turns a value in `units` into mg/m³, or undefined when the units are not a mass concentration we know. */
export function concentrationToMgPerM3(units: string): number | undefined {
  let text = units
    .trim()
    .replace(/[\u00b5\u03bc]/g, "u") // µ (micro sign) and μ (Greek mu)
    .replace(/\u00b3/g, "3") // ³
    .replace(/[\u207b\u2212]/g, "-"); // superscript minus, minus sign
  for (const [pattern, replacement] of MASS_WORDS) {
    if (pattern.test(text)) {
      text = text.replace(pattern, replacement);
      break;
    }
  }
  const mass = /^(ng|ug|mg|kg|g)/.exec(text)?.[1];
  if (!mass) return undefined;
  return PER_CUBIC_METRE.test(text.slice(mass.length)) ? MASS_TO_MG[mass] : undefined;
}
