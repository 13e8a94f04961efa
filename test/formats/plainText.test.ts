/** KML descriptions as plain text: HTML turned into the text it shows, plain text kept as written. */
import { describe, expect, it } from "vitest";
import { plainText } from "../../src/formats/plainText.ts";

describe("plainText", () => {
  it("turns HTML into the text it shows: tags gone, breaks at <br> and block ends, references decoded, spaces collapsed", () => {
    expect(plainText("<p>Ash <b>cloud</b> &amp; gas<br/>to FL350</p>")).toBe("Ash cloud & gas\nto FL350");
    expect(plainText('<div>\n  Valid <font color="red">18:00</font>\n  UTC</div><div>&lt;b&gt; is bold&#x21;&#33;&nbsp;ok</div>')).toBe("Valid 18:00 UTC\n<b> is bold!! ok");
    expect(plainText("<table><tr><td>SFC/FL200</td><td>low</td></tr><tr><td>FL200/350</td></tr></table>")).toBe("SFC/FL200 low\nFL200/350");
  });

  it("drops scripts and styles with their content", () => {
    expect(plainText("<p>Ash</p><script>alert(1)</script><style>p{}</style>")).toBe("Ash");
    expect(plainText("Ash<script type='text/javascript'>steal()</script>")).toBe("Ash");
  });

  it("keeps a description without HTML as written: what looks like a tag is the forecaster's text", () => {
    expect(plainText("  Hekla, 63.98N 19.70W <IMO & VAAC London> &amp;\n  line two ")).toBe("Hekla, 63.98N 19.70W <IMO & VAAC London> &amp;\n  line two");
    expect(plainText("FL200 < FL350 > SFC")).toBe("FL200 < FL350 > SFC");
  });

  it("leaves unknown or broken references alone", () => {
    expect(plainText("<b>a &bogus; b &#0; c &#xD800; d</b>")).toBe("a &bogus; b &#0; c &#xD800; d");
  });
});
