import { describe, expect, it } from "vitest";
import { duplicateKeys } from "../../src/formats/duplicateKeys.ts";

describe("duplicateKeys", () => {
  it("finds a key repeated in one object, with where the repeat is", () => {
    expect(duplicateKeys('{"type": "Real Eruption", "reftime": "2024-05-01T12:00:00Z",\n  "type": "Exercise"}')).toEqual([{ path: "type", line: 2, column: 3 }]);
  });

  it("in nested objects and arrays, naming the path; the same key in sibling objects is no repeat", () => {
    const text = '{"layers": [{"name": "a", "url": "x"}, {"name": "b", "name": "c"}], "meta": {"a": 1, "b": {"a": 2, "a": 3}}}';
    expect(duplicateKeys(text).map((d) => d.path)).toEqual(["layers[1].name", "meta.b.a"]);
  });

  it("reads keys as JSON does: escapes decoded, strings holding braces, commas and quotes are not structure", () => {
    expect(duplicateKeys('{"t\\u0079pe": 1, "type": 2}').map((d) => d.path)).toEqual(["type"]);
    expect(duplicateKeys('{"a": "{\\"a\\": 1, \\"a\\": 2}", "b": [",", "}"], "c": "x"}')).toEqual([]);
    expect(duplicateKeys('{"a": ["a", "a"], "b": "a"}')).toEqual([]);
  });

  it("finds nothing in valid JSON without repeats, or in a text that is no object", () => {
    expect(duplicateKeys('{"type": "Exercise", "reftime": "2024-05-01T12:00:00Z", "description": "d"}')).toEqual([]);
    expect(duplicateKeys('["a", "a"]')).toEqual([]);
    expect(duplicateKeys('"text"')).toEqual([]);
  });
});
