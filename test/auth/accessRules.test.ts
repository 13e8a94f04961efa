/** Access rules: path normalisation, the same decision for every spelling, deny by default, rules files that name the fault. */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessPolicy, DEFAULT_ACCESS_RULES, loadAccessRules, normalisePath, parseAccessRules, pathBelowBase, type AccessRule } from "../../src/auth/accessRules.ts";
import { UserError } from "../../src/errors.ts";

const TEMPLATE = path.join(import.meta.dirname, "../../templates/access-rules.json");
const policy = createAccessPolicy(DEFAULT_ACCESS_RULES);
const PUBLIC = { kind: "public" };
const OPERATOR = { kind: "protected", role: "operator" };
const MALFORMED = { kind: "malformed" };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ashcast-access-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("normalisePath", () => {
  it.each([
    ["", "/"],
    ["/", "/"],
    ["//", "/"],
    ["/jobs", "/jobs"],
    ["//jobs", "/jobs"],
    ["/jobs/", "/jobs"],
    ["/jobs//1///", "/jobs/1"],
    ["/./jobs", "/jobs"],
    ["/x/../jobs", "/jobs"],
    ["/x/%2e%2E/jobs", "/jobs"],
    ["/jobs/1/..", "/jobs"],
    ["/jobs/.", "/jobs"],
    ["/%6Aobs", "/jobs"],
    ["/caf%C3%A9", "/café"],
    ["/café", "/café"],
    ["/...", "/..."],
    ["/.json", "/.json"],
  ])("%j is %j", (raw, canonical) => {
    expect(normalisePath(raw)).toEqual({ kind: "ok", path: canonical });
  });

  it.each([
    ["/..", "'..' above the root"],
    ["/x/../..", "'..' above the root"],
    ["/%2e%2e/jobs", "'..' above the root"],
    ["/jobs%00", "a control character (NUL, CR, LF ...)"],
    ["/jobs\u0000", "a control character (NUL, CR, LF ...)"],
    ["/jobs%0D%0Ax", "a control character (NUL, CR, LF ...)"],
    ["/jobs%2F1", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["/jobs%2f1", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["/jobs%252F1", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["/jobs%25252f1", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["%2Fjobs", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["/jobs/x%2F..%2F..", "an encoded '/' (%2F): no address here has one inside a segment"],
    ["/jobs%5C1", "a backslash"],
    ["/jobs%255c1", "a backslash"],
    ["/jobs\\1", "a backslash"],
    ["/jobs%2525252F1", "still percent-encoded after 3 rounds of decoding"],
    ["/jobs%", "invalid percent-encoding or UTF-8"],
    ["/jobs%zz", "invalid percent-encoding or UTF-8"],
    ["/jobs%25", "invalid percent-encoding or UTF-8"],
    ["/%C0%AF", "invalid percent-encoding or UTF-8"],
    ["/%ED%A0%80", "invalid percent-encoding or UTF-8"],
    ["/%FF", "invalid percent-encoding or UTF-8"],
    ["/\uD800", "invalid UTF-16 (a lone surrogate)"],
    ["jobs", "the path does not start with '/'"],
  ])("%j is malformed: %s", (raw, reason) => {
    expect(normalisePath(raw)).toEqual({ kind: "malformed", reason });
  });
});

describe("pathBelowBase", () => {
  const base = "/weatherapi/volcanicashforecast/0.1";
  it.each([
    ["/weatherapi/volcanicashforecast/0.1", { kind: "below", path: "/" }],
    ["/weatherapi/volcanicashforecast/0.1/", { kind: "below", path: "/" }],
    ["/weatherapi/volcanicashforecast/0.1/jobs", { kind: "below", path: "/jobs" }],
    ["//weatherapi//volcanicashforecast/0.1/./jobs/", { kind: "below", path: "/jobs" }],
    ["/weatherapi%2Fvolcanicashforecast%2F0.1%2Fjobs", { kind: "malformed", reason: "an encoded '/' (%2F): no address here has one inside a segment" }],
    ["/weatherapi/x/../volcanicashforecast/0.1/jobs", { kind: "below", path: "/jobs" }],
    ["/weatherapi/volcanicashforecast/0.10/jobs", { kind: "outside" }],
    ["/weatherapi/volcanicashforecast/0.1/../0.2/jobs", { kind: "outside" }],
    ["/other", { kind: "outside" }],
    ["/weatherapi/volcanicashforecast/0.1/%00", { kind: "malformed", reason: "a control character (NUL, CR, LF ...)" }],
  ])("%j", (raw, expected) => {
    expect(pathBelowBase(raw, base)).toEqual(expected);
  });
  it("works without a prefix", () => {
    expect(pathBelowBase("//volcanicashforecast/0.1//jobs", "/volcanicashforecast/0.1")).toEqual({ kind: "below", path: "/jobs" });
  });
});

describe("default rules", () => {
  it.each([
    ["GET", "/"],
    ["GET", ""],
    ["HEAD", "/"],
    ["GET", "/.json"],
    ["GET", "/.png"],
    ["GET", "/reftimes"],
    ["GET", "/resources"],
    ["GET", "/changelog"],
    ["GET", "/healthz"],
    ["GET", "/openapi.json"],
    ["GET", "/doc/TermsOfService"],
    ["GET", "/doc"],
    ["GET", "/doc/a/b/c"],
    ["GET", "/viewer"],
    ["GET", "/viewer/js/app.js"],
    ["POST", "/token"],
    ["POST", "/login"],
    ["GET", "/config"],
    ["HEAD", "/config"],
    ["OPTIONS", "/reftimes"],
    ["OPTIONS", "/token"],
    // Unknown addresses for safe methods: public, they end in 404.
    ["GET", "/nothing/here"],
    ["OPTIONS", "/nothing"],
    ["get", "/reftimes"],
  ])("%s %j is public", (method, raw) => {
    expect(policy.decide(method, raw)).toStrictEqual(PUBLIC);
  });

  it.each([
    ["POST", "/config"],
    ["PUT", "/config"],
    ["OPTIONS", "/config"],
    ["POST", "/config/reset"],
    ["GET", "/config/reset"],
    ["POST", "/upload"],
    ["POST", "/withdraw"],
    ["GET", "/datasets"],
    ["HEAD", "/datasets"],
    ["GET", "/jobs"],
    ["POST", "/jobs"],
    ["GET", "/jobs/42"],
    ["DELETE", "/jobs/42"],
    ["GET", "/jobs/42/log"],
    // Deny by default: mutating methods on public data paths, and anywhere no rule names them.
    ["POST", "/reftimes"],
    ["PUT", "/"],
    ["DELETE", "/"],
    ["PATCH", "/.json"],
    ["DELETE", "/doc/TermsOfService"],
    ["PUT", "/token"],
    ["POST", "/nothing/here"],
    ["PROPFIND", "/"],
    ["TRACE", "/reftimes"],
    ["post", "/token/x"],
  ])("%s %j is protected (operator)", (method, raw) => {
    expect(policy.decide(method, raw)).toStrictEqual(OPERATOR);
  });

  it("gets the same decision for every spelling of a protected path", () => {
    const spellings: Array<[string, string]> = [
      ["GET", "//jobs"],
      ["GET", "/jobs/"],
      ["GET", "///jobs//"],
      ["HEAD", "/jobs"],
      ["GET", "/./jobs"],
      ["GET", "/x/../jobs"],
      ["GET", "/%6aobs"],
      ["GET", "/%6Aobs"],
      ["GET", "/%4A%4f%42%53/../jobs"],
    ];
    expect(policy.decide("GET", "/jobs")).toStrictEqual(OPERATOR);
    for (const [method, raw] of spellings) expect([method, raw, policy.decide(method, raw)]).toStrictEqual([method, raw, OPERATOR]);

    const job = [
      ["GET", "/jobs/1"],
      ["HEAD", "/jobs/1/"],
      ["DELETE", "//jobs//1"],
      ["GET", "/jobs/./1"],
      ["GET", "/doc/../jobs/1"],
    ] as const;
    for (const [method, raw] of job) expect([method, raw, policy.decide(method, raw)]).toStrictEqual([method, raw, OPERATOR]);
  });

  it("refuses malformed spellings whatever the method", () => {
    for (const method of ["GET", "HEAD", "POST", "OPTIONS"]) {
      // An encoded slash too: the router would keep it in one segment where the rules read two (`/jobs/x%2F..%2F..`).
      for (const raw of ["/..", "/../jobs", "/%2e%2e/jobs", "/jobs%00", "/jobs%5C1", "/doc%5c..%5c..%5cjobs", "/jobs%2525252F1", "/jobs%zz", "%2Fjobs", "/jobs%2F1", "/jobs%252f1", "/jobs/x%2F..%2F..", "/jobs/a%2F..%2F..%2F..%2Fx/cancel"]) {
        expect([method, raw, policy.decide(method, raw)]).toStrictEqual([method, raw, MALFORMED]);
      }
    }
  });

  it("is exactly what templates/access-rules.json holds", async () => {
    const template = JSON.parse(await readFile(TEMPLATE, "utf8")) as unknown;
    expect(parseAccessRules(template, TEMPLATE)).toStrictEqual([...DEFAULT_ACCESS_RULES]);
    expect(await loadAccessRules(TEMPLATE)).toStrictEqual([...DEFAULT_ACCESS_RULES]);
  });
});

describe("rule matching", () => {
  const rules: AccessRule[] = [
    { method: "GET", path: "/runs/:id", protected: true },
    { method: "GET", path: "/runs/:id/public", protected: false },
    { method: "*", path: "/runs/*", protected: false },
    { method: "POST", path: "/", protected: true, role: "operator" },
  ];
  const custom = createAccessPolicy(rules);
  it("takes the first matching rule, ':name' as one segment and '*' as zero or more", () => {
    expect(custom.decide("GET", "/runs/a")).toStrictEqual({ kind: "protected", role: undefined });
    expect(custom.decide("HEAD", "/runs/./a/")).toStrictEqual({ kind: "protected", role: undefined });
    expect(custom.decide("GET", "/runs/a/public")).toStrictEqual(PUBLIC);
    expect(custom.decide("GET", "/runs/a/b")).toStrictEqual(PUBLIC);
    expect(custom.decide("GET", "/runs")).toStrictEqual(PUBLIC);
    expect(custom.decide("DELETE", "/runs/a")).toStrictEqual(PUBLIC);
    expect(custom.decide("POST", "/")).toStrictEqual(OPERATOR);
    expect(custom.decide("POST", "//")).toStrictEqual(OPERATOR);
    expect(custom.decide("POST", "")).toStrictEqual(OPERATOR);
    expect(custom.decide("GET", "/")).toStrictEqual(PUBLIC);
  });
  it("treats no rules as: safe methods public, the rest protected", () => {
    const empty = createAccessPolicy([]);
    expect(empty.decide("GET", "/jobs")).toStrictEqual(PUBLIC);
    expect(empty.decide("HEAD", "/jobs")).toStrictEqual(PUBLIC);
    expect(empty.decide("OPTIONS", "/jobs")).toStrictEqual(PUBLIC);
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "CONNECT"]) expect(empty.decide(method, "/jobs")).toStrictEqual(OPERATOR);
  });
  it("refuses to build a policy from invalid rules", () => {
    expect(() => createAccessPolicy([{ method: "GET", path: "jobs", protected: true }])).toThrow(UserError);
  });
});

describe("property: every spelling gets the decision of the canonical path", () => {
  const rules: AccessRule[] = [
    ...DEFAULT_ACCESS_RULES,
    { method: "GET", path: "/runs/:id", protected: true },
    { method: "PUT", path: "/runs/:id/a~b", protected: false },
    { method: "*", path: "/a.b/*", protected: true },
  ];
  const custom = createAccessPolicy(rules);
  const segmentPool = ["jobs", "config", "reset", "doc", "viewer", "reftimes", "token", "login", "runs", "upload", "datasets", "1", "42", "é", "a b", "...", ".json", "x:y", "€uro", "😀", "a~b", "a.b"];
  // Characters of canonical segments: no '%' (a decoded path never holds one), '/', '\\' or controls.
  const chars = [..."abcjoxyzAJZ019.-_~!$&'()*+,;=:@ é€😀?#"];
  const segment = fc.oneof(
    fc.constantFrom(...segmentPool),
    fc.string({ unit: fc.constantFrom(...chars), minLength: 1, maxLength: 6 }).filter((s) => s !== "." && s !== ".."),
  );
  const hex = (byte: number, upper: boolean) => {
    const text = byte.toString(16).padStart(2, "0");
    return upper ? text.toUpperCase() : text;
  };
  /** A character percent-encoded `level` times (0: as is), hex digits in random case. */
  const spell = (char: string, level: number, upper: boolean): string => {
    if (level === 0) return char;
    const once = [...new TextEncoder().encode(char)].map((byte) => `%${hex(byte, upper)}`).join("");
    return level === 1 ? once : once.replaceAll("%", "%25");
  };
  const charSpelling = fc.record({ level: fc.constantFrom(0, 0, 1, 2, 3), upper: fc.boolean() });
  // Separators are never encoded: an encoded slash is refused (tested above).
  const separator = fc.record({ slashes: fc.integer({ min: 1, max: 3 }), dot: fc.constantFrom("", "", "", "./", "%2e/", "x/../", "%2E/x/%2e%2E//", "y/z/../../") });
  const method = fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND");

  const respelt = fc
    .array(segment, { maxLength: 5 })
    .chain((segments) =>
      fc.record({
        segments: fc.constant(segments),
        separators: fc.array(separator, { minLength: segments.length, maxLength: segments.length }),
        spellings: fc.array(fc.array(charSpelling, { minLength: 8, maxLength: 8 }), { minLength: segments.length, maxLength: segments.length }),
        trailing: fc.constantFrom("", "/", "//", "/.", "/%2e", "/%252e"),
        method,
      }),
    );

  it("normalisePath gives the canonical path and decide gives its decision", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(respelt, ({ segments, separators, spellings, trailing, method }) => {
        const canonical = `/${segments.join("/")}`;
        let raw = "";
        segments.forEach((segment, index) => {
          const sep = separators[index]!;
          const slash = "/".repeat(sep.slashes);
          // `sep.dot` spells a no-op (`./`, `x/../`) placed after the separator and before the segment.
          raw += slash + sep.dot;
          [...segment].forEach((char, at) => {
            const { level, upper } = spellings[index]![at % 8]!;
            raw += spell(char, level, upper);
          });
        });
        raw += trailing;
        if (!raw.startsWith("/") && !raw.startsWith("%")) raw = `/${raw}`;
        expect(normalisePath(raw)).toEqual({ kind: "ok", path: canonical });
        const canonicalMethod = method === "HEAD" ? "GET" : method;
        expect(custom.decide(method, raw)).toStrictEqual(custom.decide(canonicalMethod, canonical));
        const decision = policy.decide(method, raw);
        expect(decision).toStrictEqual(policy.decide(canonicalMethod, canonical));
        seen.add(decision.kind);
      }),
      { numRuns: 3000 },
    );
    // The generator reaches both sides of the rules, or the property would say little.
    expect([...seen].sort()).toEqual(["protected", "public"]);
  });

  it("never throws, and a canonical path has no '//', '%', '\\', dot segment or trailing slash, and is stable", () => {
    const anyChar = fc.constantFrom(..."/%.\\2Ffe5C0aé\u0000?");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: anyChar, maxLength: 30 })), method, (raw, m) => {
        const decision = policy.decide(m, raw);
        const normalised = normalisePath(raw);
        expect(decision.kind === "malformed").toBe(normalised.kind === "malformed");
        if (normalised.kind === "ok") {
          const p = normalised.path;
          expect(p.startsWith("/")).toBe(true);
          expect(/\/\/|%|\\|(^|\/)\.\.?(\/|$)/.test(p) || (p !== "/" && p.endsWith("/"))).toBe(false);
          expect(normalisePath(p)).toEqual(normalised);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe("rules files", () => {
  async function loadError(content: unknown): Promise<UserError> {
    const file = path.join(dir, "rules.json");
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
    const error = await loadAccessRules(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).where).toBe(file);
    return error as UserError;
  }
  const ok = { method: "GET", path: "/reftimes", protected: false };

  it("loads a valid file", async () => {
    const file = path.join(dir, "rules.json");
    const rules = [ok, { method: "*", path: "/jobs/:id/*", protected: true, role: "operator" }, { method: "POST", path: "/", protected: true }];
    await writeFile(file, JSON.stringify({ format: 1, rules }));
    expect(await loadAccessRules(file)).toStrictEqual(rules);
  });

  it.each([
    [{ method: "GET", path: "reftimes", protected: false }, 'rules[1].path (rule 1, counting from 0: GET reftimes): a pattern must start with \'/\''],
    [{ method: "GET", path: "/reftimes/", protected: false }, "rules[1].path (rule 1, counting from 0: GET /reftimes/): a pattern must not end with '/' (a trailing slash is ignored in requests anyway)"],
    [{ method: "GET", path: "/doc/*/x", protected: false }, "rules[1].path (rule 1, counting from 0: GET /doc/*/x): '*' may only be the last segment"],
    [{ method: "GET", path: "/doc*", protected: false }, 'rules[1].path (rule 1, counting from 0: GET /doc*): "doc*" is not a literal segment: letters, digits and . _ ~ ! $ & \' ( ) + , ; = @ - only (no \'%\', \'*\' inside a segment, \'?\' or \'\\\')'],
    [{ method: "GET", path: "/jobs//x", protected: false }, "rules[1].path (rule 1, counting from 0: GET /jobs//x): a pattern must not contain '//'"],
    [{ method: "GET", path: "/jobs/../x", protected: false }, "rules[1].path (rule 1, counting from 0: GET /jobs/../x): '.' and '..' segments are not allowed"],
    [{ method: "GET", path: "/jobs%2F1", protected: false }, 'rules[1].path (rule 1, counting from 0: GET /jobs%2F1): "jobs%2F1" is not a literal segment: letters, digits and . _ ~ ! $ & \' ( ) + , ; = @ - only (no \'%\', \'*\' inside a segment, \'?\' or \'\\\')'],
    [{ method: "GET", path: "/jobs/:", protected: false }, 'rules[1].path (rule 1, counting from 0: GET /jobs/:): ":" is not a parameter: write \':\' and a name of letters, digits or \'_\''],
    [{ method: "FETCH", path: "/jobs", protected: true }, 'rules[1].method (rule 1, counting from 0: FETCH /jobs): Invalid option: expected one of "GET"|"HEAD"|"POST"|"PUT"|"PATCH"|"DELETE"|"OPTIONS"|"*"'],
    [{ method: "HEAD", path: "/jobs", protected: true }, "rules[1].method (rule 1, counting from 0: HEAD /jobs): HEAD is decided as GET: a rule for GET covers HEAD too"],
    [{ method: "GET", path: "/jobs", protected: "yes" }, "rules[1].protected (rule 1, counting from 0: GET /jobs): Invalid input: expected boolean, received string"],
    [{ method: "GET", path: "/jobs" }, "rules[1].protected (rule 1, counting from 0: GET /jobs): Invalid input: expected boolean, received undefined"],
    [{ method: "GET", path: "/jobs", protected: false, role: "operator" }, "rules[1].role (rule 1, counting from 0: GET /jobs): a role applies only to a protected rule"],
    [{ method: "GET", path: "/jobs", protected: true, role: "admin" }, 'rules[1].role (rule 1, counting from 0: GET /jobs): Invalid input: expected "operator"'],
    [{ method: "GET", path: "/jobs", protected: true, Protected: true }, "rules[1].Protected (rule 1, counting from 0: GET /jobs): Unrecognized key: \"Protected\""],
    ["GET /jobs", "rules[1] (rule 1, counting from 0): Invalid input: expected object, received string"],
  ])("names the rule and field of %j", async (bad, message) => {
    const error = await loadError({ format: 1, rules: [ok, bad] });
    expect(error.message).toBe(message);
    expect(error.fix).toBeTruthy();
  });

  it("gives a fix for the field at fault", async () => {
    expect((await loadError({ format: 1, rules: [{ method: "GET", path: "jobs", protected: true }] })).fix).toBe(
      `write a pattern relative to the product base path, of literal segments, ':name' for one segment and a final '*' for any depth, e.g. "/reftimes", "/jobs/:id", "/doc/*"`,
    );
    expect((await loadError({ format: 1, rules: [{ method: "HEAD", path: "/jobs", protected: true }] })).fix).toBe(`use one of GET, POST, PUT, PATCH, DELETE, OPTIONS or "*" (GET covers HEAD)`);
    expect((await loadError({ format: 1, rules: [{ method: "GET", path: "/jobs", protected: 1 }] })).fix).toBe(`set "protected" to true or false`);
  });

  it("names the file's own faults", async () => {
    expect((await loadError({ format: 2, rules: [] })).message).toBe("format: Invalid input: expected 1");
    expect((await loadError({ format: 1 })).message).toBe("rules: Invalid input: expected array, received undefined");
    expect((await loadError([ok])).message).toBe("(top level): Invalid input: expected object, received array");
    expect((await loadError({ format: 1, rules: [], extra: 1 })).message).toBe('extra: Unrecognized key: "extra"');
    const json = await loadError('{"format": 1, "rules": [');
    expect(json.message).toMatch(/^the access rules file is not valid JSON: /);
    expect(json.fix).toBe("fix the JSON syntax (templates/access-rules.json is a valid example)");
    // A rule saying protected twice: JSON alone would keep the last, opening the route unseen.
    const twice = await loadError('{"format": 1, "rules": [{"method": "GET", "path": "/jobs", "protected": true,\n  "protected": false}]}');
    expect(twice.message).toBe("the access rules file gives rules[0].protected a second time in the same object (line 2, column 3)");
    expect(twice.fix).toBe("keep one of the two and remove the other");
  });

  it("refuses a missing file and an oversized one", async () => {
    const missing = path.join(dir, "none.json");
    const error = await loadAccessRules(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).where).toBe(missing);
    expect((error as UserError).message).toMatch(/^cannot read the access rules file: ENOENT/);
    expect((error as UserError).fix).toBe("give the path of an existing file (copy templates/access-rules.json), or configure none to use the default rules");
    const big = await loadError(`{"format": 1, "rules": []}${" ".repeat(1024 * 1024)}`);
    expect(big.message).toBe(`the access rules file is ${1024 * 1024 + 26} bytes, more than the 1048576 accepted`);
  });
});
