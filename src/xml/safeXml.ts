/**
 * XML from runs/ is untrusted: forecasters' KML, capabilities documents, volcano.xml.
 * Any ENTITY declaration is refused before parsing, so an entity bomb is rejected in one scan; only XML's
 * five predefined entities and character references remain to be decoded. A DOCTYPE without entities is
 * allowed: real WMS 1.1.1 capabilities start with one. Size is bounded before anything is parsed.
 */
import { TextDecoder } from "node:util";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { characterNotInXml, codePointName, isXmlCodePoint } from "../formats/xmlCharacters.ts";

export class XmlInputError extends Error {
  override name = "XmlInputError";
}

export interface SafeXmlOptions {
  /** Largest accepted document in bytes. */
  maxBytes: number;
  /** Parse with `preserveOrder` (needed to rewrite a document, e.g. to split KML by time). */
  preserveOrder?: boolean;
  /** Element names that are always arrays in the result (ignored with preserveOrder). */
  arrays?: ReadonlySet<string>;
}

const ENTITY = /<!ENTITY/i;

/**
 * Parses untrusted XML. Throws XmlInputError with a reason a person can act on.
 * Namespace prefixes are removed (`kml:Placemark` -> `Placemark`), attributes are under `@_name`.
 */
export function parseUntrustedXml(bytes: Buffer, options: SafeXmlOptions): unknown {
  if (bytes.length > options.maxBytes) {
    throw new XmlInputError(`file is ${bytes.length} bytes, more than the ${options.maxBytes} accepted`);
  }
  const text = decodeXmlText(bytes);
  if (ENTITY.test(text)) {
    throw new XmlInputError("the document declares an ENTITY, which is refused (entity expansion is a known attack)");
  }
  // fast-xml-parser lets these through, and every KML and feed that would carry them is then not well-formed.
  const character = characterProblem(text);
  if (character) throw new XmlInputError(`not well-formed XML: ${character}`);
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: true });
  if (valid !== true) throw new XmlInputError(`not well-formed XML: ${wellFormedness(valid.err, text)}`);
  const arrays = options.arrays;
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    removeNSPrefix: true,
    // Safe only because ENTITY declarations are refused above: no declared entity can reach the parser.
    processEntities: true,
    // Decodes character references (&#38; &#x3C;); its fixed table of named HTML entities cannot expand.
    htmlEntities: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    preserveOrder: options.preserveOrder ?? false,
    ...(arrays && !options.preserveOrder ? { isArray: (name: string) => arrays.has(name) } : {}),
  });
  try {
    return parser.parse(text);
  } catch (error) {
    // The validator lets through some documents the parser refuses (a declaration whose quotes do not match).
    throw new XmlInputError(`not well-formed XML: ${(error as Error).message.replace(/\.$/, "")}`, { cause: error });
  }
}

/** Where the document has a character XML 1.0 does not allow, raw or as a character reference, and the fix. */
function characterProblem(text: string): string | undefined {
  const raw = characterNotInXml(text);
  if (raw) return `${lineAndColumn(text, raw.index)}: character ${raw.name} is not allowed in XML (often pasted from another program): delete it`;
  // References in CDATA sections and comments are text, not references: blanked (positions kept) before looking.
  const markup = text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, (part) => " ".repeat(part.length));
  for (const match of markup.matchAll(/&#(?:x([0-9a-fA-F]{1,8})|([0-9]{1,10}));/g)) {
    const code = match[1] !== undefined ? Number.parseInt(match[1], 16) : Number(match[2]);
    if (!isXmlCodePoint(code)) return `${lineAndColumn(text, match.index)}: ${match[0]} stands for ${code <= 0x10ffff ? codePointName(code) : "no character"}, which XML does not allow: delete it`;
  }
  return undefined;
}

function lineAndColumn(text: string, index: number): string {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return `line ${line}, column ${index - start + 1}`;
}

/**
 * The validator's complaint in words a forecaster can act on: a file that ends inside an element (a copy or an
 * export that did not finish) is said to be cut short, naming what is still open, instead of the validator's
 * "Invalid '["kml","Document"]' found" at line 1.
 */
function wellFormedness(err: { code: string; msg: string; line: number; col: number | undefined }, text: string): string {
  const open = /^Invalid '(\[.*\])' found\.$/.exec(err.msg);
  const one = /^Unclosed tag '([^']*)'\.$/.exec(err.msg);
  if ((err.code === "InvalidXml" && open) || (err.code === "InvalidTag" && one)) {
    const names = (open ? (JSON.parse(open[1]!) as string[]) : [one![1]!]).map((name) => `<${name}>`);
    return `the file ends while ${names.join(", ")} ${names.length === 1 ? "is" : "are"} still open: it looks cut short (a copy or an export that did not finish)`;
  }
  const where = err.col === undefined ? `line ${err.line}` : `line ${err.line}, column ${err.col}`;
  const body = text.trimEnd();
  // Ending inside a tag (its attributes cut, a quote left open), or the error where the text ends.
  const cutShort = body.lastIndexOf("<") > body.lastIndexOf(">") || (err.col !== undefined && atTheEnd(text, err.line, err.col));
  return cutShort ? `${err.msg.replace(/\.$/, "")} (${where}, where the file ends: it may be cut short)` : `${err.msg} (${where})`;
}

/** Whether nothing but white space follows a line and column (1-based) of a text. */
function atTheEnd(text: string, line: number, column: number): boolean {
  let at = 0;
  for (let l = 1; l < line && at !== -1; l++) at = text.indexOf("\n", at) + 1 || -1;
  return at !== -1 && text.slice(at + column - 1).trim() === "";
}

/**
 * A document parseUntrustedXml read, as UTF-8 bytes (what ashcast serves its XML as): the bytes as given when
 * they are UTF-8 (the usual case, decided from the byte-order mark and the declaration alone), else its text
 * re-encoded, the declaration's encoding made UTF-8 to match.
 */
export function utf8Xml(bytes: Buffer): Buffer {
  if (encodingOf(bytes) === "utf-8") return bytes;
  return Buffer.from(decodeXmlText(bytes).replace(/^(<\?xml[^>]*?\sencoding\s*=\s*["'])[A-Za-z0-9._:-]+(["'])/, "$1UTF-8$2"), "utf8");
}

/** What the bytes say they are: UTF-16 by a byte-order mark, UTF-8 by its mark, else the declaration's (UTF-8 when none). */
function encodingOf(bytes: Buffer): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return "utf-16";
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  const declared = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(bytes.subarray(0, 200).toString("latin1"))?.[1] ?? "utf-8";
  try {
    return new TextDecoder(declared).encoding;
  } catch {
    return declared; // refused when decoded
  }
}

/**
 * The document's text: UTF-16 (either byte order) by its byte-order mark, else the encoding its XML
 * declaration names (UTF-8 when none, as XML says), decoded strictly: a Latin-1 file that does not say so
 * is refused with what to do, rather than read with replacement characters in a volcano's name.
 */
function decodeXmlText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString("utf16le");
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(bytes.subarray(2)).swap16().toString("utf16le");
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return strictly("utf-8", bytes.subarray(3));
  const declared = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(bytes.subarray(0, 200).toString("latin1"))?.[1];
  return strictly(declared ?? "utf-8", bytes);
}

function strictly(encoding: string, bytes: Buffer): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch {
    throw new XmlInputError(`the document declares encoding "${encoding}", which is not supported: save it as UTF-8`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    // The decoder's canonical name: "UTF-8", "utf8" and "utf-8" are all declared in the wild.
    const utf8 = decoder.encoding === "utf-8";
    const hint = utf8 ? ' (a Latin-1 file must say so in its declaration, encoding="ISO-8859-1")' : "";
    throw new XmlInputError(`the document is not valid ${utf8 ? "UTF-8" : encoding}${hint}: save it as UTF-8`);
  }
}
