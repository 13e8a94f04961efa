/**
 * The characters XML 1.0 allows (§2.2: tab, line feed, carriage return, and U+0020 up, less the surrogates,
 * U+FFFE and U+FFFF). A form feed pasted into a volcano's name or a run's description would make every KML
 * and the RSS feed that carry it not well-formed, and strict feed readers refuse the whole feed; inputs are
 * refused with the character named, and writers drop what an older state still holds. Pure.
 */

/** A character XML 1.0 does not allow (a lone surrogate included: `u` matches code points). */
const NOT_IN_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;
const NOT_IN_XML_ALL = new RegExp(NOT_IN_XML.source, "gu");

/** The first character of `text` that XML 1.0 does not allow, with its index; undefined when there is none. */
export function characterNotInXml(text: string): { index: number; name: string } | undefined {
  const match = NOT_IN_XML.exec(text);
  return match ? { index: match.index, name: codePointName(match[0].codePointAt(0)!) } : undefined;
}

/** Whether a code point given as a character reference (`&#12;`) names a character XML 1.0 allows. */
export function isXmlCodePoint(code: number): boolean {
  if (code === 0x9 || code === 0xa || code === 0xd) return true;
  return code >= 0x20 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) && code !== 0xfffe && code !== 0xffff;
}

/** `text` without the characters XML 1.0 does not allow. */
export const withoutNonXmlCharacters = (text: string): string => text.replace(NOT_IN_XML_ALL, "");

/** `U+000C (form feed)` for the control characters people paste, `U+FFFE` otherwise. */
export function codePointName(code: number): string {
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const names: Partial<Record<number, string>> = { 0: "null", 0x8: "backspace", 0xb: "vertical tab", 0xc: "form feed", 0x1b: "escape" };
  const name = names[code] ?? (code < 0x20 ? "a control character" : undefined);
  return name ? `${hex} (${name})` : hex;
}
