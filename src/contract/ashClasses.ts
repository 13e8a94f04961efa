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
/** Default concentration thresholds in mg/m³: the low / medium / high edges of the European charts (`--thresholds` takes others). */
export const DEFAULT_THRESHOLDS_MG_M3 = [0.2, 2, 4] as const;
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

const idOf = (name: string) => name.replace(/ /g, "-");

/** Every class id some number of thresholds gives, by severity: the six-class scheme's, then `ash` (one class). */
export const ASH_CLASS_IDS: readonly string[] = [...new Set(Object.values(SCHEMES).reverse().flatMap((scheme) => scheme.names.map(idOf)))];

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
    id: idOf(scheme.names[i]!),
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

/** The class table as documents state it (the OpenAPI document's `x-ash-classes`). */
export interface ClassTable {
  units: string;
  /** How opaque areas are filled; outlines are opaque. */
  fillOpacity: number;
  defaultThresholds: number[];
  /** The classes of the default thresholds. */
  defaultClasses: AshClass[];
  /** For each number of thresholds (1 to MAX_ASH_CLASSES), the id, name and colours of its classes, lowest first. */
  byCount: Record<string, Array<Pick<AshClass, "id" | "name" | "colour" | "outline">>>;
}

/**
 * The whole table: what a client needs to draw or name a class as the maps do, whatever thresholds a build used.
 *
 * @example classTable().byCount["3"]!.map((c) => c.id) // ["low", "medium", "high"]
 */
export function classTable(): ClassTable {
  const byCount: ClassTable["byCount"] = {};
  for (let count = 1; count <= MAX_ASH_CLASSES; count++) {
    // Names and colours depend on the number of thresholds only: any ascending values give them.
    byCount[String(count)] = ashClasses(Array.from({ length: count }, (_, i) => i + 1)).map(({ id, name, colour, outline }) => ({ id, name, colour, outline }));
  }
  return { units: CONCENTRATION_UNITS, fillOpacity: ASH_FILL_OPACITY, defaultThresholds: [...DEFAULT_THRESHOLDS_MG_M3], defaultClasses: ashClasses(DEFAULT_THRESHOLDS_MG_M3), byCount };
}

/**
 * The table in words (Markdown), for descriptions: the default classes with their ranges and colours, and
 * how other thresholds are named.
 */
export function classTableText(): string {
  const table = classTable();
  const rows = table.defaultClasses.map((c) => `| \`${c.id}\` | ${c.name} | ${classRange(c)} | \`${c.colour}\` | \`${c.outline}\` |`);
  const others = Object.entries(table.byCount)
    .filter(([count]) => Number(count) !== table.defaultThresholds.length)
    .map(([count, classes]) => `${count}: ${classes.map((c) => c.id).join(", ")}`);
  return [
    `The ash class a value falls in: \`none\` below the lowest threshold, \`missing\` where the model has no value. Classes include their lower bound. With the default thresholds (${DEFAULT_THRESHOLDS_MG_M3.join(", ")} ${CONCENTRATION_UNITS}), as the PNG maps, KML styles and map viewer draw them (fill at ${Math.round(ASH_FILL_OPACITY * 100)} % opacity, opaque outline):`,
    "",
    "| class | name | range | fill | outline |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    `A build with other thresholds names its classes by their number, lowest first (${others.join("; ")}); \`x-ash-classes\` gives every colour.`,
  ].join("\n");
}
