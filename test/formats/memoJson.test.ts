import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { arrayJson, entryJson, objectJson, recordJson } from "../../src/formats/memoJson.ts";

describe("memoJson", () => {
  it("writes exactly the bytes of JSON.stringify", () => {
    const entry = { a: 1, b: "x\"y\u2028", c: [1, { d: null }], e: undefined };
    expect(entryJson(entry)).toBe(JSON.stringify(entry));
    const record = { "k\"1": { v: 1 }, k2: { v: [2] } };
    expect(recordJson(record)).toBe('{"k\\"1":{"v":1},"k2":{"v":[2]}}');
    expect(arrayJson([{ a: 1 }, { b: 2 }])).toBe('[{"a":1},{"b":2}]');
    expect(arrayJson([])).toBe("[]");
    expect(recordJson({})).toBe("{}");
    const whole = { format: 3, runs: record, list: [{ x: 1 }], missing: undefined, last: "z" };
    expect(objectJson(whole, { runs: recordJson(whole.runs), list: arrayJson(whole.list) })).toBe(JSON.stringify(whole));
  });

  it("equals JSON.stringify for any record of entries, in its key order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.object()), fc.array(fc.object()), (record, list) => {
        const whole = { record, list, n: 1 };
        expect(objectJson(whole, { record: recordJson(record), list: arrayJson(list) })).toBe(JSON.stringify(whole));
      }),
    );
  });

  it("reuses an entry's text and freezes the entry, so it cannot change behind the text", () => {
    const entry = { issues: [{ message: "m" }], nested: { deep: { value: 1 } } };
    const first = entryJson(entry);
    expect(entryJson(entry)).toBe(first);
    expect(Object.isFrozen(entry) && Object.isFrozen(entry.issues) && Object.isFrozen(entry.issues[0]) && Object.isFrozen(entry.nested.deep)).toBe(true);
    expect(() => {
      (entry.nested.deep as { value: number }).value = 2;
    }).toThrow(TypeError);
    expect(() => entry.issues.push({ message: "n" })).toThrow(TypeError);
    // An equal but distinct object is serialised on its own.
    const copy = structuredClone(entry);
    expect(entryJson(copy)).toBe(first);
    expect(Object.isFrozen(copy)).toBe(true);
  });
});
