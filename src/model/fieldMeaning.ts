/**
 * What a concentration field is (an instant, a mean over hours, a maximum over a band's levels ...), read
 * from the model output itself, so that maps, KML and layer names say it. Pure.
 *
 * Sources, most explicit first:
 * 1. CF `cell_methods` (e.g. `time: mean (interval: 6 hours) lev: maximum`); when any method is not one
 *    read here, the meaning is unknown (the file said something else, so no weaker source may guess);
 * 2. `long_name`, as the file writes it (a trailing flight-level band is left out: it is shown apart);
 * 3. the model chain's naming `MAX<n>h_<species>_fl<a>-<b>`: MET Norway's SnapPy and EEMEP
 *    post-processing write, per flight-level band, the maximum over the band's levels of the running
 *    n-hour mean (SnapPy's `SixHourMax`), without a long_name or cell_methods;
 * 4. nothing: the label says that the file does not tell, never a guess.
 */

export interface FieldMeaning {
  /** Lower-case phrase, e.g. `maximum of 6-hour mean ash concentration`. */
  label: string;
  /** Where the label comes from. */
  source: "cell_methods" | "long_name" | "name" | "unknown";
}

export const UNKNOWN_FIELD_LABEL = "ash concentration (the file does not say whether instant, mean or maximum)";

/** Names of vertical coordinates a `cell_methods` entry may reduce over. */
const VERTICAL = /^(lev|level|levels|k|z|height|altitude|air_pressure|pressure|model_level_number|flight_level|atmosphere_\w+_coordinate)$/i;

/**
 * @example describeField("MAX6h_ASH_fl000-200", {}) // { label: "maximum of 6-hour mean ash concentration", source: "name" }
 * @example describeField("ash", { cell_methods: "time: mean (interval: 3 hours)" }) // { label: "3-hour mean ash concentration", ... }
 */
export function describeField(name: string, attributes: { long_name?: string | undefined; cell_methods?: string | undefined }, bandLabel?: string): FieldMeaning {
  if (attributes.cell_methods?.trim()) {
    // The file says what the field is, in words ashcast may not read: never overridden by a weaker source.
    const fromMethods = labelFromCellMethods(attributes.cell_methods);
    return fromMethods ? { label: fromMethods, source: "cell_methods" } : { label: UNKNOWN_FIELD_LABEL, source: "unknown" };
  }
  const longName = cleanLongName(attributes.long_name, bandLabel);
  if (longName) return { label: longName, source: "long_name" };
  const chain = /^MAX(\d+)h_/i.exec(name);
  if (chain) return { label: `maximum of ${Number(chain[1])}-hour mean ash concentration`, source: "name" };
  return { label: UNKNOWN_FIELD_LABEL, source: "unknown" };
}

/** `time: mean (interval: 6 hours) lev: maximum` → `maximum of 6-hour mean ash concentration`; undefined when any part is not understood. */
export function labelFromCellMethods(text: string): string | undefined {
  // Entries: one or more `name:` then a method, then an optional `where/over ...` or `(...)` comment.
  const entries = [...text.matchAll(/((?:[\w-]+:\s*)+)(\w+)((?:\s+(?:where|over|within)\s+\w+)*)\s*(\([^)]*\))?/g)];
  if (entries.length === 0 || entries.map((m) => m[0]).join(" ").replace(/\s+/g, "") !== text.replace(/\s+/g, "")) return undefined;
  let time: string | undefined;
  let vertical: string | undefined;
  for (const [, names, method, , comment] of entries) {
    const dims = names!.split(":").map((part) => part.trim()).filter(Boolean);
    if (dims.length !== 1) return undefined;
    const dim = dims[0]!;
    if (dim === "time") {
      const interval = /interval:\s*([\d.]+)\s*(hours?|h|minutes?|min|days?)\b/i.exec(comment ?? "");
      const span = interval ? `${formatSpan(Number(interval[1]), interval[2]!)} ` : "";
      if (method === "point") time = "instantaneous";
      else if (method === "mean") time = `${span}mean`;
      else if (method === "maximum") time = `${span}maximum`;
      else return undefined;
    } else if (VERTICAL.test(dim) && method === "maximum") {
      vertical = "maximum";
    } else return undefined;
  }
  const base = `${time ? `${time} ` : ""}ash concentration`;
  if (!time && !vertical) return undefined;
  return vertical ? `maximum of ${base}` : base;
}

/** `6 hours` → `6-hour`, `30 minutes` → `30-minute`, `1 day` → `1-day`. */
function formatSpan(value: number, unit: string): string {
  const word = /^h/i.test(unit) ? "hour" : /^m/i.test(unit) ? "minute" : "day";
  return `${value}-${word}`;
}

function cleanLongName(longName: string | undefined, bandLabel: string | undefined): string | undefined {
  let text = longName?.replace(/\s+/g, " ").trim();
  if (!text) return undefined;
  if (bandLabel) text = text.replace(new RegExp(`[,;:\\s(-]*${bandLabel.replace(/[/\\^$*+?.()|[\]{}]/g, "\\$&")}\\)?$`), "").trim();
  if (!text) return undefined;
  return /^[A-Z][a-z]/.test(text) ? `${text.charAt(0).toLowerCase()}${text.slice(1)}` : text;
}
