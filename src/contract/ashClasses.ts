/**
 * The ash concentration classes: thresholds, names and colours, defined once. The PNG maps, the KML
 * styles (and through them the map viewer), the OpenAPI document and the docs all take them from here,
 * so a colour or a name means the same in every output. Pure: no files, no drawing.
 *
 * Colours are sRGB `#rrggbb`, chosen to stay apart under protanopia, deuteranopia and tritanopia
 * (test/contract/ashClasses.test.ts simulates them; docs/decisions.md says how), in order of severity:
 * sky blue, amber, red and dark purple for the usual three or four classes. No other map symbol uses
 * them (the volcano is black). Areas are filled at ASH_FILL_OPACITY over the map and outlined in a
 * darker shade of the same colour.
 */

/** One class: values v with lower ≤ v < upper (upper null: no bound). */
export interface AshClass {
  /** Stable identifier, e.g. `low`, `very-high` (what a point query answers). */
  id: string;
  /** As written beside the range in legends, e.g. `very high`. */
  name: string;
  /** Inclusive lower bound, mg/m³. */
  lower: number;
  /** Exclusive upper bound, mg/m³; null for the highest class. */
  upper: number | null;
  /** Fill colour, `#rrggbb`, drawn at ASH_FILL_OPACITY. */
  colour: string;
  /** Outline colour, `#rrggbb`, opaque. */
  outline: string;
}

export const CONCENTRATION_UNITS = "mg/m³";
/** How opaque ash areas are drawn everywhere: coastlines show through. 0.6 is 0x99 / 255 exactly. */
export const ASH_FILL_OPACITY = 0.6;
/** More classes than this cannot be told apart on a map (the palette has six colours). */
export const MAX_ASH_CLASSES = 6;

const SKY_BLUE = "#56b4e9";
const ROYAL_BLUE = "#2e4bd0";
const AMBER = "#e69f00";
const RED = "#d1232a";
const PLUM = "#a0528c";
const DARK_PURPLE = "#4b0a5f";

/** Colours and names per number of classes, lowest first; red is always the class of the usual "high". */
const SCHEMES: Record<number, { colours: string[]; names: string[] }> = {
  1: { colours: [RED], names: ["ash"] },
  2: { colours: [SKY_BLUE, RED], names: ["low", "high"] },
  3: { colours: [SKY_BLUE, AMBER, RED], names: ["low", "medium", "high"] },
  4: { colours: [SKY_BLUE, AMBER, RED, DARK_PURPLE], names: ["low", "medium", "high", "very high"] },
  5: { colours: [SKY_BLUE, AMBER, RED, PLUM, DARK_PURPLE], names: ["low", "medium", "high", "very high", "extreme"] },
  6: { colours: [SKY_BLUE, ROYAL_BLUE, AMBER, RED, PLUM, DARK_PURPLE], names: ["very low", "low", "medium", "high", "very high", "extreme"] },
};

/** Every colour a class can have, for checks of the palette. */
export const CLASS_COLOURS: readonly string[] = [SKY_BLUE, ROYAL_BLUE, AMBER, RED, PLUM, DARK_PURPLE];

/**
 * The classes of a set of thresholds (mg/m³, strictly ascending, 1 to MAX_ASH_CLASSES of them).
 *
 * @example ashClasses([0.2, 2, 4])[1] // { id: "medium", name: "medium", lower: 2, upper: 4, colour: "#e69f00", outline: "#a67200" }
 */
export function ashClasses(thresholds: readonly number[]): AshClass[] {
  const scheme = SCHEMES[thresholds.length];
  if (!scheme) throw new RangeError(`Internal error: ${thresholds.length} thresholds; ashcast draws 1 to ${MAX_ASH_CLASSES} classes`);
  thresholds.forEach((t, i) => {
    if (!(Number.isFinite(t) && t > 0) || (i > 0 && !(t > thresholds[i - 1]!))) {
      throw new RangeError(`Internal error: thresholds must be positive and increase strictly, got ${thresholds.join(", ")}`);
    }
  });
  return thresholds.map((lower, i) => ({
    id: scheme.names[i]!.replace(/ /g, "-"),
    name: scheme.names[i]!,
    lower,
    upper: thresholds[i + 1] ?? null,
    colour: scheme.colours[i]!,
    outline: darker(scheme.colours[i]!),
  }));
}

/** The class a concentration falls in, or undefined below the lowest threshold (and for NaN). */
export function classOf(value: number, classes: readonly AshClass[]): AshClass | undefined {
  for (let i = classes.length - 1; i >= 0; i--) if (value >= classes[i]!.lower) return classes[i];
  return undefined;
}

/** The class whose lower bound is `lower` (the banded areas carry it). */
export function classWithLower(lower: number, classes: readonly AshClass[]): AshClass {
  const found = classes.find((c) => c.lower === lower);
  if (!found) throw new RangeError(`Internal error: no class starts at ${lower} (classes start at ${classes.map((c) => c.lower).join(", ")})`);
  return found;
}

/** A threshold as written: `0.2`, `2`, `10`. */
export function formatThreshold(value: number): string {
  return String(Number(value.toPrecision(6)));
}

/** `0.2–2 mg/m³` or `≥ 4 mg/m³`. */
export function classRange(c: Pick<AshClass, "lower" | "upper">): string {
  return c.upper === null ? `≥ ${formatThreshold(c.lower)} ${CONCENTRATION_UNITS}` : `${formatThreshold(c.lower)}–${formatThreshold(c.upper)} ${CONCENTRATION_UNITS}`;
}

/** The outline: the same hue at 72 % of each channel. */
function darker(hex: string): string {
  return `#${[1, 3, 5].map((i) => Math.round(parseInt(hex.slice(i, i + 2), 16) * 0.72).toString(16).padStart(2, "0")).join("")}`;
}

/** `#rrggbb` to [r, g, b]. */
export function rgbOf(hex: string): [number, number, number] {
  return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
}

/** KML's `aabbggrr` for `#rrggbb` at an opacity. */
export function kmlColour(hex: string, opacity = 1): string {
  const alpha = Math.round(opacity * 255).toString(16).padStart(2, "0");
  return `${alpha}${hex.slice(5, 7)}${hex.slice(3, 5)}${hex.slice(1, 3)}`;
}
