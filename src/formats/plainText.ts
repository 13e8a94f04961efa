/**
 * Plain text from a KML description. KML 2.2 lets a description hold HTML (Google Earth shows it in the
 * balloon); a GeoJSON property is text a web map shows as text, so markup written by a forecaster's tool
 * is turned into the text it displays: tags of HTML elements removed (scripts and styles with their
 * content), line breaks where blocks and <br> end, a space between table cells, character references decoded, spaces collapsed. A
 * description without any HTML element is plain text already and kept as written (trimmed): `<IMO & VAAC>`
 * in it is the forecaster's text, not a tag. Pure.
 *
 * @example plainText("<p>Ash <b>cloud</b> &amp; gas<br/>to FL350</p>") // "Ash cloud & gas\nto FL350"
 */

const ELEMENTS =
  "a|abbr|address|b|big|blockquote|body|br|caption|center|cite|code|col|colgroup|dd|del|div|dl|dt|em|font|h[1-6]|head|hr|html|i|img|ins|kbd|li|ol|p|pre|q|s|small|span|strike|strong|sub|sup|table|tbody|td|tfoot|th|thead|title|tr|tt|u|ul";
const HTML_TAG = new RegExp(`</?(?:${ELEMENTS})(?:\\s[^<>]*)?/?>`, "gi");
const IS_HTML = new RegExp(`</?(?:${ELEMENTS})(?:\\s[^<>]*)?/?>`, "i");
/** Where the displayed text breaks its line. */
const BREAK = /<(?:br|hr)(?:\s[^<>]*)?\/?>|<\/(?:p|div|li|tr|h[1-6]|table|ul|ol|dd|dt|blockquote|pre|address|caption|title)\s*>/gi;
const HIDDEN = /<(script|style)(?:\s[^<>]*)?>[\s\S]*?<\/\1\s*>/gi;
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

export function plainText(description: string): string {
  if (!IS_HTML.test(description) && !/<(?:script|style)[\s>]/i.test(description)) return description.trim();
  const text = description
    .replace(HIDDEN, "")
    // Line ends in HTML source are spaces; only breaks and the ends of blocks end a displayed line.
    .replace(/\s+/g, " ")
    .replace(BREAK, "\n")
    .replace(/<\/t[dh]\s*>/gi, " ")
    .replace(HTML_TAG, "")
    .replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]+));/gi, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
      const code = decimal !== undefined ? Number(decimal) : hex !== undefined ? Number.parseInt(hex, 16) : undefined;
      if (code !== undefined) return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
      return NAMED[name!.toLowerCase()] ?? whole;
    });
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, " ").trim())
    .filter((line) => line !== "")
    .join("\n");
}
