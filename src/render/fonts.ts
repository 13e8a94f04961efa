/**
 * The fonts every map is drawn with: Noto Sans from the `@fontsource/noto-sans` npm package, so PNG
 * bytes do not depend on the fonts installed on the machine that builds them.
 *
 * The package ships Unicode subsets; each subset is registered under its own family name and drawing
 * code names them all in `FONT_STACK`, so a volcano name with letters outside Latin-1 (ō, ł, ư ...)
 * is still drawn with Noto Sans.
 */
import { createRequire } from "node:module";
import { GlobalFonts } from "@napi-rs/canvas";

/** The primary family name (Latin subset). */
export const FONT_FAMILY = "Ashcast Noto Sans";

const SUBSETS = [
  { subset: "latin", family: FONT_FAMILY },
  { subset: "latin-ext", family: `${FONT_FAMILY} Ext` },
  { subset: "vietnamese", family: `${FONT_FAMILY} Vietnamese` },
] as const;
const WEIGHTS = [400, 700] as const;

/** The CSS font-family list to use in `ctx.font` (the subsets in fallback order). */
export const FONT_STACK = SUBSETS.map((s) => `"${s.family}"`).join(", ");

let registered = false;

/** Registers Noto Sans regular and bold once per process (later calls do nothing); returns the family name. */
export function registerFonts(): string {
  if (registered) return FONT_FAMILY;
  const require = createRequire(import.meta.url);
  for (const { subset, family } of SUBSETS) {
    for (const weight of WEIGHTS) {
      const file = require.resolve(`@fontsource/noto-sans/files/noto-sans-${subset}-${weight}-normal.woff2`);
      if (!GlobalFonts.registerFromPath(file, family)) throw new Error(`could not register font ${file}`);
    }
  }
  registered = true;
  return FONT_FAMILY;
}

/** A `ctx.font` value: `font(13, "bold")` → `bold 13px "Ashcast Noto Sans", ...`. Registers the fonts if needed. */
export function font(sizePx: number, weight: "normal" | "bold" = "normal"): string {
  registerFonts();
  return `${weight === "bold" ? "bold " : ""}${sizePx}px ${FONT_STACK}`;
}
