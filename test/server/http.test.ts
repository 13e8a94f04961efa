/**
 * Exact-value tests of the pure HTTP helpers (src/server/http.ts) and of the byte-bounded LRU
 * (src/server/byteLru.ts) that holds artefact bodies in memory.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteLru } from "../../src/server/byteLru.ts";
import { chooseEncoding, formatHttpDate, noneMatchHits, notModifiedSince, parseHttpDate, parseQualities, preconditionFails, prefersPng } from "../../src/server/http.ts";

const BOTH = { br: true, gzip: true } as const;
const MAY_1_NOON = Date.UTC(2024, 4, 1, 12, 0, 0); // a Wednesday
const MAY_1_NOON_HTTP = "Wed, 01 May 2024 12:00:00 GMT";

describe("parseQualities", () => {
  it("is empty for a missing or empty header", () => {
    expect(parseQualities(undefined)).toEqual(new Map());
    expect(parseQualities("")).toEqual(new Map());
    expect(parseQualities(" , ,")).toEqual(new Map());
  });

  it("gives q=1 by default and reads q parameters, tokens lower-cased, in header order", () => {
    const q = parseQualities("gzip, BR;q=0.5, *;q=0.1");
    expect([...q]).toEqual([
      ["gzip", 1],
      ["br", 0.5],
      ["*", 0.1],
    ]);
  });

  it("tolerates spaces around ';' and '=' and an upper-case Q", () => {
    expect([...parseQualities("gzip ; q = 0.3,br;Q=0.7")]).toEqual([
      ["gzip", 0.3],
      ["br", 0.7],
    ]);
  });

  it("keeps media ranges whole and ignores other parameters", () => {
    expect([...parseQualities("text/html;level=1;q=0.4, application/json")]).toEqual([
      ["text/html", 0.4],
      ["application/json", 1],
    ]);
  });

  it("clamps q into [0, 1] and reads an unreadable q as 0 (not acceptable)", () => {
    expect(parseQualities("a;q=2").get("a")).toBe(1);
    expect(parseQualities("a;q=-1").get("a")).toBe(0);
    expect(parseQualities("a;q=abc").get("a")).toBe(0);
    expect(parseQualities("a;q=").get("a")).toBe(0);
    expect(parseQualities("a;q=0.001").get("a")).toBe(0.001);
    expect(parseQualities("a;q=0").get("a")).toBe(0);
  });

  it("lets the last of repeated tokens win", () => {
    expect(parseQualities("gzip;q=0.2, gzip;q=0.9").get("gzip")).toBe(0.9);
  });
});

describe("preconditionFails", () => {
  const at = Date.UTC(2024, 5, 1, 8, 0, 0, 100);
  it("If-Match: strong comparison, any listed, * for any; it wins over If-Unmodified-Since", () => {
    expect(preconditionFails('"a"', undefined, '"a"', at)).toBe(false);
    expect(preconditionFails('"x", "a"', undefined, '"a"', at)).toBe(false);
    expect(preconditionFails("*", undefined, '"a"', at)).toBe(false);
    expect(preconditionFails('"x"', undefined, '"a"', at)).toBe(true);
    expect(preconditionFails('W/"a"', undefined, '"a"', at)).toBe(true);
    expect(preconditionFails('W/"a"', undefined, 'W/"a"', at)).toBe(true);
    expect(preconditionFails('"x"', "Sat, 01 Jun 2024 09:00:00 GMT", '"a"', at)).toBe(true);
    expect(preconditionFails('"a"', "Sat, 01 Jun 2024 07:00:00 GMT", '"a"', at)).toBe(false);
  });

  it("If-Unmodified-Since: fails when modified after it (to the second); an invalid date is ignored; neither header: holds", () => {
    expect(preconditionFails(undefined, "Sat, 01 Jun 2024 08:00:00 GMT", '"a"', at)).toBe(false);
    expect(preconditionFails(undefined, "Sat, 01 Jun 2024 07:59:59 GMT", '"a"', at)).toBe(true);
    expect(preconditionFails(undefined, "yesterday", '"a"', at)).toBe(false);
    expect(preconditionFails(undefined, undefined, '"a"', at)).toBe(false);
  });
});

describe("chooseEncoding", () => {
  it("sends identity without Accept-Encoding", () => {
    expect(chooseEncoding(undefined, BOTH)).toBe("identity");
    expect(chooseEncoding("", BOTH)).toBe("identity");
  });

  it("prefers brotli, then gzip, whatever order the client lists them in (equal weights)", () => {
    expect(chooseEncoding("gzip, deflate, br", BOTH)).toBe("br");
    expect(chooseEncoding("br, gzip", BOTH)).toBe("br");
    expect(chooseEncoding("gzip", BOTH)).toBe("gzip");
    expect(chooseEncoding("br", BOTH)).toBe("br");
    expect(chooseEncoding("GZIP", BOTH)).toBe("gzip");
  });

  it("sends the encoding the client weights highest; brotli only of equals", () => {
    expect(chooseEncoding("gzip;q=1, br;q=0.1", BOTH)).toBe("gzip");
    expect(chooseEncoding("br;q=0.001, gzip", BOTH)).toBe("gzip");
    expect(chooseEncoding("br;q=0.5, gzip;q=0.5", BOTH)).toBe("br");
    expect(chooseEncoding("*;q=0.9, gzip;q=0.5", BOTH)).toBe("br");
    expect(chooseEncoding("gzip;q=1, br;q=0.1", { br: true, gzip: false })).toBe("br"); // the only one stored, still accepted
  });

  it("never sends an encoding the client refused with q=0", () => {
    expect(chooseEncoding("br;q=0, gzip", BOTH)).toBe("gzip");
    expect(chooseEncoding("br;q=0, gzip;q=0", BOTH)).toBe("identity");
    expect(chooseEncoding("gzip;q=0", BOTH)).toBe("identity");
    expect(chooseEncoding("br;q=0.0, gzip;q=0.001", BOTH)).toBe("gzip");
  });

  it("reads '*' as any encoding not listed, and lets explicit entries override it", () => {
    expect(chooseEncoding("*", BOTH)).toBe("br");
    expect(chooseEncoding("*;q=0", BOTH)).toBe("identity");
    expect(chooseEncoding("*, br;q=0", BOTH)).toBe("gzip");
    expect(chooseEncoding("*;q=0, gzip", BOTH)).toBe("gzip");
    expect(chooseEncoding("*, br;q=0, gzip;q=0", BOTH)).toBe("identity");
  });

  it("takes x-gzip as gzip", () => {
    expect(chooseEncoding("x-gzip", BOTH)).toBe("gzip");
    expect(chooseEncoding("x-gzip", { br: true, gzip: false })).toBe("identity");
    expect(chooseEncoding("x-gzip;q=0", BOTH)).toBe("identity");
  });

  it("falls back when a variant is missing", () => {
    expect(chooseEncoding("br, gzip", { br: false, gzip: true })).toBe("gzip");
    expect(chooseEncoding("br", { br: false, gzip: true })).toBe("identity");
    expect(chooseEncoding("gzip", { br: true, gzip: false })).toBe("identity");
    expect(chooseEncoding("*", { br: false, gzip: false })).toBe("identity");
    expect(chooseEncoding("br, gzip", { br: false, gzip: false })).toBe("identity");
  });

  it("sends identity for encodings it does not have (deflate, zstd, identity)", () => {
    expect(chooseEncoding("deflate", BOTH)).toBe("identity");
    expect(chooseEncoding("zstd, deflate;q=0.5", BOTH)).toBe("identity");
    expect(chooseEncoding("identity", BOTH)).toBe("identity");
  });
});

describe("prefersPng", () => {
  it("is false without Accept, or for vague or JSON-first Accept headers", () => {
    expect(prefersPng(undefined)).toBe(false);
    expect(prefersPng("")).toBe(false);
    expect(prefersPng("*/*")).toBe(false);
    expect(prefersPng("application/json")).toBe(false);
    expect(prefersPng("text/html")).toBe(false);
    expect(prefersPng("application/json, image/png")).toBe(false); // a tie goes to JSON
    expect(prefersPng("image/png;q=0.5, application/json;q=0.5")).toBe(false);
  });

  it("is true when image/png is strictly preferred, directly or through image/*", () => {
    expect(prefersPng("image/png")).toBe(true);
    expect(prefersPng("IMAGE/PNG")).toBe(true);
    expect(prefersPng("image/png;q=0.5")).toBe(true);
    expect(prefersPng("image/*")).toBe(true);
    expect(prefersPng("image/png, application/json;q=0.9")).toBe(true);
    expect(prefersPng("image/*;q=0.5, application/*;q=0.4")).toBe(true);
  });

  it("uses the most specific range of each type", () => {
    expect(prefersPng("image/png;q=0.1, */*;q=0.5")).toBe(false);
    expect(prefersPng("image/png;q=0, */*")).toBe(false);
    expect(prefersPng("application/json;q=0, */*")).toBe(true);
    expect(prefersPng("image/*;q=0.9, application/*;q=1, image/png;q=0.2")).toBe(false);
  });
});

describe("noneMatchHits", () => {
  const etag = '"abc123"';

  it("matches the exact entity tag", () => {
    expect(noneMatchHits('"abc123"', etag)).toBe(true);
    expect(noneMatchHits('  "abc123"  ', etag)).toBe(true);
  });

  it("uses the weak comparison: W/ prefixes on either side are ignored", () => {
    expect(noneMatchHits('W/"abc123"', etag)).toBe(true);
    expect(noneMatchHits('"abc123"', 'W/"abc123"')).toBe(true);
    expect(noneMatchHits('W/"abc123"', 'W/"abc123"')).toBe(true);
  });

  it("matches any member of a list, with or without spaces", () => {
    expect(noneMatchHits('"x", "abc123"', etag)).toBe(true);
    expect(noneMatchHits('"x","abc123","y"', etag)).toBe(true);
    expect(noneMatchHits('"x", W/"abc123"', etag)).toBe(true);
    expect(noneMatchHits('"x", "y"', etag)).toBe(false);
  });

  it("matches '*' (any current representation)", () => {
    expect(noneMatchHits("*", etag)).toBe(true);
    expect(noneMatchHits(" * ", etag)).toBe(true);
  });

  it("does not match other tags, prefixes, suffixed variants or unquoted text", () => {
    expect(noneMatchHits('"abc12"', etag)).toBe(false);
    expect(noneMatchHits('"abc123-gz"', etag)).toBe(false);
    expect(noneMatchHits('"abc123"', '"abc123-gz"')).toBe(false);
    expect(noneMatchHits("abc123", etag)).toBe(false);
    expect(noneMatchHits("", etag)).toBe(false);
    expect(noneMatchHits('""', etag)).toBe(false);
  });
});

describe("notModifiedSince", () => {
  it("is true for the Last-Modified date itself and for any later date", () => {
    expect(notModifiedSince(MAY_1_NOON_HTTP, MAY_1_NOON)).toBe(true);
    expect(notModifiedSince("Wed, 01 May 2024 12:00:01 GMT", MAY_1_NOON)).toBe(true);
    expect(notModifiedSince("Thu, 02 May 2024 00:00:00 GMT", MAY_1_NOON)).toBe(true);
  });

  it("is false for an earlier date", () => {
    expect(notModifiedSince("Wed, 01 May 2024 11:59:59 GMT", MAY_1_NOON)).toBe(false);
    expect(notModifiedSince("Thu, 01 Jan 1970 00:00:00 GMT", MAY_1_NOON)).toBe(false);
  });

  it("compares at whole seconds, as HTTP dates have no fraction", () => {
    // Modified at 12:00:00.750: its Last-Modified reads 12:00:00, and that same value must give 304.
    expect(notModifiedSince(MAY_1_NOON_HTTP, MAY_1_NOON + 750)).toBe(true);
    expect(notModifiedSince(formatHttpDate(MAY_1_NOON + 750), MAY_1_NOON + 750)).toBe(true);
    expect(notModifiedSince("Wed, 01 May 2024 11:59:59 GMT", MAY_1_NOON + 750)).toBe(false);
    expect(notModifiedSince(MAY_1_NOON_HTTP, MAY_1_NOON + 1000)).toBe(false);
  });

  it("ignores an invalid date (never a 304 from it)", () => {
    for (const invalid of ["", "yesterday", "0", "2024-05-01T12:00:00Z", "Wed, 01 May 2024 12:00:00", "Wed, 01 May 2024 12:00:00 UTC", "wed, 01 may 2024 12:00:00 gmt", "Wed, 1 May 2024 12:00:00 GMT", "Wed, 32 May 2099 12:00:00 GMT"]) {
      expect(notModifiedSince(invalid, MAY_1_NOON), invalid).toBe(false);
    }
  });
});

describe("parseHttpDate and formatHttpDate", () => {
  it("parses an IMF-fixdate to epoch milliseconds", () => {
    expect(parseHttpDate(MAY_1_NOON_HTTP)).toBe(MAY_1_NOON);
    expect(parseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT")).toBe(0);
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(parseHttpDate("  Sun, 06 Nov 1994 08:49:37 GMT ")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
  });

  it("refuses what is not an IMF-fixdate", () => {
    for (const text of ["", "now", "1714564800000", "2024-05-01T12:00:00Z", "Wed, 01 May 2024 12:00 GMT", "Wed, 01 May 24 12:00:00 GMT", "Wed 01 May 2024 12:00:00 GMT", "Wed, 01 May 2024 12:00:00 +0000", "Wednesday, 01 May 2024 12:00:00 GMT"]) {
      expect(parseHttpDate(text), text).toBeUndefined();
    }
  });

  it("refuses a well-shaped but impossible clock time (minute 60)", () => {
    expect(parseHttpDate("Wed, 01 May 2024 23:60:00 GMT")).toBeUndefined();
    expect(parseHttpDate("Wed, 32 May 2024 12:00:00 GMT")).toBeUndefined();
  });

  // BUG (src/server/http.ts parseHttpDate): the shape is checked by a regex, then Date.parse, which
  // rolls impossible dates over instead of refusing them: "Sat, 31 Feb 2024 12:00:00 GMT" parses as
  // 2 March 2024 and "Wed, 01 May 2024 24:00:00 GMT" as 2 May 00:00. The doc promises undefined for
  // anything that is not an IMF-fixdate, and security.md wants invalid dates ignored.
  it("refuses impossible calendar dates instead of rolling them over", () => {
    expect(parseHttpDate("Sat, 31 Feb 2024 12:00:00 GMT")).toBeUndefined();
    expect(parseHttpDate("Wed, 01 May 2024 24:00:00 GMT")).toBeUndefined();
  });

  // BUG (src/server/http.ts parseHttpDate): RFC 9110 §5.6.7: "A recipient that parses a timestamp
  // value in an HTTP field MUST accept all three HTTP-date formats" (IMF-fixdate, RFC 850, asctime).
  // Only IMF-fixdate is read; an old client's If-Modified-Since is ignored (200 instead of 304).
  it("accepts the obsolete RFC 850 and asctime forms, as RFC 9110 requires of recipients", () => {
    expect(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
  });

  it("formats an IMF-fixdate, dropping the milliseconds", () => {
    expect(formatHttpDate(0)).toBe("Thu, 01 Jan 1970 00:00:00 GMT");
    expect(formatHttpDate(MAY_1_NOON)).toBe(MAY_1_NOON_HTTP);
    expect(formatHttpDate(MAY_1_NOON + 999)).toBe(MAY_1_NOON_HTTP);
    expect(formatHttpDate(Date.UTC(2026, 11, 31, 23, 59, 59))).toBe("Thu, 31 Dec 2026 23:59:59 GMT");
  });

  it("round-trips every whole second (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1) / 1000, max: Date.UTC(9999, 11, 31, 23, 59, 59) / 1000 }), (seconds) => {
        const text = formatHttpDate(seconds * 1000);
        expect(parseHttpDate(text)).toBe(seconds * 1000);
        expect(notModifiedSince(text, seconds * 1000 + 999)).toBe(true);
        expect(notModifiedSince(formatHttpDate(seconds * 1000 - 1000), seconds * 1000)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe("ByteLru", () => {
  const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

  it("refuses a budget that is not positive", () => {
    expect(() => new ByteLru(0)).toThrow(/maxBytes/);
    expect(() => new ByteLru(-1)).toThrow(/maxBytes/);
    expect(() => new ByteLru(Number.NaN)).toThrow(/maxBytes/);
  });

  it("returns what was stored and counts bytes and entries", () => {
    const lru = new ByteLru(10);
    const a = bytes(3, 0x61);
    lru.set("a", a);
    lru.set("b", bytes(4));
    expect(lru.get("a")).toBe(a);
    expect(lru.get("missing")).toBeUndefined();
    expect(lru.bytes).toBe(7);
    expect(lru.size).toBe(2);
  });

  it("evicts the least recently inserted first when over the budget", () => {
    const lru = new ByteLru(9);
    lru.set("a", bytes(3));
    lru.set("b", bytes(3));
    lru.set("c", bytes(3));
    expect(lru.bytes).toBe(9); // exactly the budget: nothing evicted
    lru.set("d", bytes(1));
    expect(lru.get("a")).toBeUndefined();
    expect([lru.get("b")?.length, lru.get("c")?.length, lru.get("d")?.length]).toEqual([3, 3, 1]);
    expect(lru.bytes).toBe(7);
    expect(lru.size).toBe(3);
  });

  it("keeps the order right when the same entry is read again after others were stored", () => {
    const lru = new ByteLru(6);
    lru.set("a", bytes(3));
    lru.get("a");
    lru.set("b", bytes(3));
    lru.get("a"); // a is used after b was stored: b is now the least recently used
    lru.set("c", bytes(3));
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBeDefined();
    expect(lru.get("c")).toBeDefined();
  });

  it("counts a get as a use: the entry read last is evicted last", () => {
    const lru = new ByteLru(9);
    lru.set("a", bytes(3));
    lru.set("b", bytes(3));
    lru.set("c", bytes(3));
    lru.get("a");
    lru.set("d", bytes(3));
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBeDefined();
    expect(lru.get("c")).toBeDefined();
    expect(lru.get("d")).toBeDefined();
  });

  it("evicts as many entries as needed for a large value", () => {
    const lru = new ByteLru(10);
    lru.set("a", bytes(4));
    lru.set("b", bytes(4));
    lru.set("c", bytes(9));
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("c")?.length).toBe(9);
    expect(lru.bytes).toBe(9);
    expect(lru.size).toBe(1);
  });

  it("replaces a key without counting the old value, and makes it the newest", () => {
    const lru = new ByteLru(10);
    lru.set("a", bytes(3));
    lru.set("b", bytes(3));
    const fresh = bytes(5, 0x7a);
    lru.set("a", fresh);
    expect(lru.bytes).toBe(8);
    expect(lru.size).toBe(2);
    expect(lru.get("a")).toBe(fresh);
    lru.set("c", bytes(2)); // 10: fits exactly
    lru.set("d", bytes(1)); // 11: evicts b, the oldest (a was re-set after it)
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(fresh);
  });

  it("keeps a value larger than the whole budget out, without evicting anything", () => {
    const lru = new ByteLru(10);
    lru.set("a", bytes(4));
    lru.set("huge", bytes(11));
    expect(lru.get("huge")).toBeUndefined();
    expect(lru.get("a")?.length).toBe(4);
    expect(lru.bytes).toBe(4);
    expect(lru.size).toBe(1);
  });

  it("drops the old value of a key re-set with an oversize value (never serves stale bytes)", () => {
    const lru = new ByteLru(10);
    lru.set("a", bytes(4));
    lru.set("a", bytes(11));
    expect(lru.get("a")).toBeUndefined();
    expect(lru.bytes).toBe(0);
    expect(lru.size).toBe(0);
  });

  it("stores empty buffers", () => {
    const lru = new ByteLru(1);
    lru.set("empty", Buffer.alloc(0));
    expect(lru.get("empty")?.length).toBe(0);
    expect(lru.bytes).toBe(0);
  });

  it("behaves like a reference LRU and never exceeds its budget (property)", () => {
    type Op = { kind: "set"; key: string; size: number } | { kind: "get"; key: string };
    const key = fc.constantFrom("a", "b", "c", "d", "e", "f");
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), key, size: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant("get" as const), key }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32 }), fc.array(op, { maxLength: 60 }), (max, ops) => {
        const lru = new ByteLru(max);
        const model: Array<[string, number]> = []; // oldest first
        for (const step of ops) {
          const at = model.findIndex(([k]) => k === step.key);
          if (step.kind === "get") {
            const got = lru.get(step.key);
            if (at < 0) expect(got).toBeUndefined();
            else {
              expect(got?.length).toBe(model[at]![1]);
              model.push(model.splice(at, 1)[0]!);
            }
          } else {
            lru.set(step.key, Buffer.alloc(step.size));
            if (at >= 0) model.splice(at, 1);
            if (step.size <= max) {
              model.push([step.key, step.size]);
              let total = model.reduce((sum, [, size]) => sum + size, 0);
              while (total > max) total -= model.shift()![1];
            }
          }
          const total = model.reduce((sum, [, size]) => sum + size, 0);
          expect(lru.bytes).toBe(total);
          expect(lru.size).toBe(model.length);
          expect(lru.bytes).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 300 },
    );
  });
});
