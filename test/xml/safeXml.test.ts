import { describe, expect, it } from "vitest";
import { XmlInputError, parseUntrustedXml } from "../../src/xml/safeXml.ts";

const parse = (text: string, maxBytes = 10_000) => parseUntrustedXml(Buffer.from(text), { maxBytes }) as Record<string, any>;

describe("parseUntrustedXml", () => {
  it("decodes the predefined entities and character references, nothing else", () => {
    const doc = parse('<a><b>A &amp; B &#38; C &#x3C; D &lt;&gt;&quot;&apos;</b><c x="1 &amp; 2"/></a>');
    expect(doc.a.b).toBe(`A & B & C < D <>"'`);
    expect(doc.a.c["@_x"]).toBe("1 & 2");
  });

  it("refuses an entity declaration (billion laughs) before parsing", () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`).join("")}]><lolz>&lol9;</lolz>`;
    expect(() => parse(bomb)).toThrow(XmlInputError);
    expect(() => parse(bomb)).toThrow(/declares an ENTITY/);
  });

  it("accepts a DOCTYPE that declares no entity, as WMS 1.1.1 servers write", () => {
    const doc = parse('<!DOCTYPE WMT_MS_Capabilities SYSTEM "http://schemas.opengis.net/wms/1.1.1/WMS_MS_Capabilities.dtd" [ <!ELEMENT VendorSpecificCapabilities EMPTY> ]><WMT_MS_Capabilities version="1.1.1"/>');
    expect(doc.WMT_MS_Capabilities["@_version"]).toBe("1.1.1");
  });

  it("refuses a document over the size bound and one that is not well-formed, saying where", () => {
    expect(() => parse(`<a>${"x".repeat(200)}</a>`, 100)).toThrow(/more than the 100 accepted/);
    expect(() => parse("<a><b></a>")).toThrow(/not well-formed XML: .*line 1/);
  });

  it("refuses a character XML 1.0 does not allow, raw or as a reference, saying which and where; keeps tab, line ends and the rest of Unicode", () => {
    expect(() => parse("<volcano>\n  <name>Hek\fla</name>\n</volcano>")).toThrow(/not well-formed XML: line 2, column 12: character U\+000C \(form feed\) is not allowed in XML .*delete it/);
    expect(() => parse("<a>x\u0001</a>")).toThrow(/U\+0001 \(a control character\)/);
    expect(() => parse("<a>\uFFFE</a>")).toThrow(/U\+FFFE/);
    expect(() => parse("<a>&#12;</a>")).toThrow(/line 1, column 4: &#12; stands for U\+000C \(form feed\), which XML does not allow/);
    expect(() => parse("<a>&#x0;</a>")).toThrow(/&#x0; stands for U\+0000 \(null\)/);
    expect(() => parse("<a>&#x110000;</a>")).toThrow(/stands for no character/);
    // In a CDATA section or a comment it is text, not a reference.
    expect(parse("<a><![CDATA[&#12;]]><!-- &#1; --></a>").a).toBe("&#12;");
    expect(parse("<a>\tEyjafjallajökull\r\n🌋 &#9;&#x1F30B;</a>").a).toBe("Eyjafjallajökull\n🌋 \t🌋");
  });

  it("says a file that ends inside its elements is cut short, naming what is still open", () => {
    const whole = '<?xml version="1.0"?>\n<kml>\n<Document>\n<Placemark><name>FL200/350</name></Placemark>\n</Document>\n</kml>\n';
    expect(() => parse(whole.slice(0, whole.indexOf("</Document>")))).toThrow(/not well-formed XML: the file ends while <kml>, <Document> are still open: it looks cut short/);
    expect(() => parse(whole.slice(0, whole.indexOf("</kml>")))).toThrow(/the file ends while <kml> is still open: it looks cut short/);
    // Cut inside a closing tag: the validator's words, where the file ends, said so.
    expect(() => parse(whole.slice(0, whole.indexOf("</Placemark>") + 5))).toThrow(/line 4, column \d+, where the file ends: it may be cut short/);
    // Cut inside a tag's attributes, or inside the declaration.
    expect(() => parse('<kml>\n<Placemark id=')).toThrow(/where the file ends: it may be cut short/);
    expect(() => parse('<kml>\n<Placemark id="p1')).toThrow(/where the file ends: it may be cut short/);
    expect(() => parse("<?xml version=")).toThrow(/^not well-formed XML: Start tag expected \(line 1, where the file ends: it may be cut short\)$/);
    // An error before the end stays as the validator says it.
    expect(() => parse("<a>\n<b></a>\n</a>\n")).not.toThrow(/cut short/);
    expect(() => parse("not xml")).toThrow(/^not well-formed XML: char 'n' is not expected\. \(line 1, column 1\)$/);
  });

  it("strips namespace prefixes and reads UTF-8 with a byte-order mark", () => {
    const doc = parseUntrustedXml(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<kml:kml xmlns:kml="http://www.opengis.net/kml/2.2"><kml:name>Eyjafjallajökull</kml:name></kml:kml>')]), { maxBytes: 1000 }) as Record<string, any>;
    expect(doc.kml.name).toBe("Eyjafjallajökull");
  });

  it("reads the encoding the declaration names, and UTF-16 in either byte order by its byte-order mark", () => {
    const volcano = (declaration: string) => `${declaration}<volcano name="Eyjafjallajökull"/>`;
    const read = (bytes: Buffer) => (parseUntrustedXml(bytes, { maxBytes: 1000 }) as Record<string, any>).volcano["@_name"];
    expect(read(Buffer.from(volcano('<?xml version="1.0" encoding="ISO-8859-1"?>'), "latin1"))).toBe("Eyjafjallajökull");
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(volcano('<?xml version="1.0" encoding="UTF-16"?>'), "utf16le")]);
    expect(read(utf16le)).toBe("Eyjafjallajökull");
    const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(Buffer.from(volcano('<?xml version="1.0" encoding="UTF-16"?>'), "utf16le")).swap16()]);
    expect(read(utf16be)).toBe("Eyjafjallajökull");
  });

  it("refuses Latin-1 that does not say so, and an encoding it does not know, with what to do", () => {
    expect(() => parseUntrustedXml(Buffer.from('<volcano name="Eyjafjallajökull"/>', "latin1"), { maxBytes: 1000 })).toThrow(/not valid UTF-8 \(a Latin-1 file must say so in its declaration, encoding="ISO-8859-1"\): save it as UTF-8/);
    // Declared as UTF-8 in any of the spellings writers use: the same hint.
    for (const spelling of ["UTF-8", "utf8", "Utf-8"]) {
      const declared = Buffer.from(`<?xml version="1.0" encoding="${spelling}"?><volcano name="Eyjafjallajökull"/>`, "latin1");
      expect(() => parseUntrustedXml(declared, { maxBytes: 1000 })).toThrow(/not valid UTF-8 \(a Latin-1 file must say so/);
    }
    expect(() => parseUntrustedXml(Buffer.from('<?xml version="1.0" encoding="x-klingon"?><a/>'), { maxBytes: 1000 })).toThrow(/declares encoding "x-klingon", which is not supported: save it as UTF-8/);
  });
});
