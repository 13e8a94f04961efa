/**
 * Access rules (issue 5, point 4): which requests below the product base path need a signed-in user.
 *
 * A rules file is `{ "format": 1, "rules": [{ "method", "path", "protected", "role"? }, ...] }`, checked
 * by zod when the service starts. Pure: nothing here touches the network, and only `loadAccessRules`
 * reads a file.
 *
 * The decision is taken on the normalised path, so every spelling of an address gets the same answer:
 * `//jobs`, `/jobs/`, `/./jobs`, `/x/../jobs`, `/%6Aobs`, `/jobs%2F1` (= `/jobs/1`), `/jobs%252F1`
 * (double encoding), and HEAD as GET (security.md, "Access rules"). A path that cannot be normalised
 * safely is `malformed`: the caller answers 400 and never routes it.
 *
 * Choices (also in docs/decisions.md, "Authentication"):
 * - First matching rule wins, in the file's order; putting the most specific rule first is the file's job.
 * - No rule matches: GET, HEAD and OPTIONS are public (an unknown address ends in 404 anyway, and a CORS
 *   preflight never carries credentials); every other method is protected with role "operator": deny by
 *   default for anything that could change state.
 * - HEAD is always decided as GET, so a rule for GET covers HEAD; a rule written for HEAD is refused at
 *   load rather than silently never matching (or silently changing GET).
 * - Methods are compared in upper case; a method no rule names falls to the default above.
 */
import { readConfigJson } from "./configFile.ts";
import { z } from "zod";
import { UserError } from "../errors.ts";
import type { Role } from "./users.ts";

export const ACCESS_RULES_FILE_FORMAT = 1;
/** Far above any real rules file; bounds what a broken or hostile file can make us parse. */
const MAX_ACCESS_RULES_FILE_BYTES = 1024 * 1024;
/** Percent-decoding rounds: enough for double (and triple) encoding; a path still encoded after that is refused. */
export const MAX_DECODE_ROUNDS = 3;

// Only the type is imported from users.ts: loading it would load the argon2 binding.
const ACCESS_ROLES = ["operator"] as const satisfies readonly Role[];
export const RULE_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "*"] as const;

// ---------------------------------------------------------------------------------------------------
// Path normalisation

export type NormalisedPath = { kind: "ok"; path: string } | { kind: "malformed"; reason: string };

const malformed = (reason: string): NormalisedPath => ({ kind: "malformed", reason });
// C0 controls and DEL: NUL is the dangerous one, CR/LF invite header and log injection; none belongs in a path.
const CONTROL = /[\u0000-\u001f\u007f]/;
// With the u flag a well-formed surrogate pair is one code point: this matches lone surrogates only.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The canonical form of a path below the base: percent-decoded (at most MAX_DECODE_ROUNDS rounds, until
 * no `%` is left), repeated slashes collapsed, `.` and `..` resolved, no trailing slash (except `/`).
 * `""` is `/`. Give it the URL's path only, without query or fragment, as it arrived (still encoded).
 *
 * Malformed: a path still encoded after the last round, a `%` that does not start an escape, invalid
 * UTF-8 (overlong forms, surrogates), a NUL or other control character, a backslash (`..\` is `../`
 * on some systems), `..` above the root, or a path that does not start with `/`. The canonical form
 * contains no `%`, so normalising it again gives it back unchanged.
 */
const ENCODED_SLASH = /%2f/i;

export function normalisePath(rawPath: string): NormalisedPath {
  let path = rawPath;
  for (let round = 0; round < MAX_DECODE_ROUNDS && path.includes("%"); round++) {
    // The router keeps %2F inside one segment where decoding makes it a separator: the rules and the router
    // would read two different paths (`/jobs/x%2F..%2F..` decided as `/`, routed as a job). No address here
    // holds a slash in a segment (names go in ?name=), so it is refused, as most servers do.
    if (ENCODED_SLASH.test(path)) return malformed("an encoded '/' (%2F): no address here has one inside a segment");
    try {
      path = decodeURIComponent(path);
    } catch {
      return malformed("invalid percent-encoding or UTF-8");
    }
  }
  if (path.includes("%")) {
    return malformed(/%[0-9A-Fa-f]{2}/.test(path) ? `still percent-encoded after ${MAX_DECODE_ROUNDS} rounds of decoding` : "a '%' that does not start an escape");
  }
  if (CONTROL.test(path)) return malformed("a control character (NUL, CR, LF ...)");
  if (path.includes("\\")) return malformed("a backslash");
  if (LONE_SURROGATE.test(path)) return malformed("invalid UTF-16 (a lone surrogate)");
  if (path === "") return { kind: "ok", path: "/" };
  if (!path.startsWith("/")) return malformed("the path does not start with '/'");
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return malformed("'..' above the root");
      segments.pop();
    } else {
      segments.push(segment);
    }
  }
  return { kind: "ok", path: `/${segments.join("/")}` };
}

export type BelowBase = { kind: "below"; path: string } | { kind: "outside" } | { kind: "malformed"; reason: string };

/**
 * The canonical path below `base` (e.g. `/weatherapi/volcanicashforecast/0.1`) of a whole request path.
 * Normalise the whole path before comparing it with the base: `//volcanicashforecast/0.1/jobs` or
 * `/volcanicashforecast/0.1/./jobs` must not slip past a `startsWith(base)` test. `base` must be
 * canonical itself (as `productBase` makes it).
 */
export function pathBelowBase(rawFullPath: string, base: string): BelowBase {
  const normalised = normalisePath(rawFullPath);
  if (normalised.kind === "malformed") return normalised;
  const path = normalised.path;
  const root = base.replace(/\/+$/, "");
  if (root === "") return { kind: "below", path };
  if (path === root) return { kind: "below", path: "/" };
  if (path.startsWith(`${root}/`)) return { kind: "below", path: path.slice(root.length) };
  return { kind: "outside" };
}

// ---------------------------------------------------------------------------------------------------
// Rules

const PARAM_SEGMENT = /^:[A-Za-z_][A-Za-z0-9_]*$/;
// Unreserved characters and the sub-delimiters that can appear in a decoded path segment, plus '@'.
const LITERAL_SEGMENT = /^[A-Za-z0-9._~!$&'()+,;=@-]+$/;

/** Why a pattern is not valid, or undefined when it is. */
function patternProblem(pattern: string): string | undefined {
  if (!pattern.startsWith("/")) return "a pattern must start with '/'";
  if (pattern === "/") return undefined;
  if (pattern.endsWith("/")) return "a pattern must not end with '/' (a trailing slash is ignored in requests anyway)";
  const segments = pattern.slice(1).split("/");
  for (const [index, segment] of segments.entries()) {
    if (segment === "") return "a pattern must not contain '//'";
    if (segment === "*") {
      if (index !== segments.length - 1) return "'*' may only be the last segment";
      continue;
    }
    if (segment.startsWith(":")) {
      if (!PARAM_SEGMENT.test(segment)) return `"${segment}" is not a parameter: write ':' and a name of letters, digits or '_'`;
      continue;
    }
    if (segment === "." || segment === "..") return "'.' and '..' segments are not allowed";
    if (!LITERAL_SEGMENT.test(segment)) return `"${segment}" is not a literal segment: letters, digits and . _ ~ ! $ & ' ( ) + , ; = @ - only (no '%', '*' inside a segment, '?' or '\\')`;
  }
  return undefined;
}

export const AccessRule = z
  .strictObject({
    method: z.enum(RULE_METHODS),
    path: z.string().superRefine((pattern, context) => {
      const problem = patternProblem(pattern);
      if (problem) context.addIssue({ code: "custom", message: problem });
    }),
    protected: z.boolean(),
    role: z.enum(ACCESS_ROLES).optional(),
  })
  .superRefine((rule, context) => {
    if (rule.method === "HEAD") context.addIssue({ code: "custom", path: ["method"], message: "HEAD is decided as GET: a rule for GET covers HEAD too" });
    if (rule.role !== undefined && !rule.protected) context.addIssue({ code: "custom", path: ["role"], message: "a role applies only to a protected rule" });
  });
export type AccessRule = z.infer<typeof AccessRule>;

export const AccessRulesFile = z.strictObject({
  format: z.literal(ACCESS_RULES_FILE_FORMAT),
  rules: z.array(AccessRule),
});
export type AccessRulesFile = z.infer<typeof AccessRulesFile>;

const get = (path: string): AccessRule => ({ method: "GET", path, protected: false });
const operator = (method: AccessRule["method"], path: string): AccessRule => ({ method, path, protected: true, role: "operator" });

/**
 * The rules applied when no rules file is configured; `templates/access-rules.json` holds the same, for
 * operators to copy and edit. Data, metadata and documentation are public for GET (and so HEAD);
 * OPTIONS and unknown GETs fall to the default (public); the operator routes are protected for every
 * method (a browser on another origin cannot even preflight them); any other mutating request falls to
 * the default (protected, operator).
 */
export const DEFAULT_ACCESS_RULES: readonly AccessRule[] = Object.freeze([
  get("/"),
  get("/.json"),
  get("/.png"),
  get("/reftimes"),
  get("/resources"),
  get("/changelog"),
  get("/point"),
  { method: "POST", path: "/route", protected: false },
  get("/healthz"),
  get("/openapi.json"),
  get("/doc/*"),
  get("/viewer/*"),
  { method: "POST", path: "/token", protected: false },
  { method: "POST", path: "/login", protected: false },
  get("/config"),
  operator("*", "/config/*"),
  operator("*", "/upload/*"),
  operator("*", "/withdraw/*"),
  operator("*", "/datasets/*"),
  operator("*", "/jobs/*"),
]);

/** Checks parsed JSON as a rules file; `where` names the file in errors. */
export function parseAccessRules(json: unknown, where: string): AccessRule[] {
  const parsed = AccessRulesFile.safeParse(json);
  if (parsed.success) return parsed.data.rules;
  const problem = parsed.error.issues[0]!;
  // An unknown key is named as the field itself, so the message points at the typo.
  const segments = problem.code === "unrecognized_keys" && problem.keys.length === 1 ? [...problem.path, problem.keys[0]!] : problem.path;
  let field = "(top level)";
  let rule = "";
  if (segments.length) {
    field = segments.map((segment, index) => (typeof segment === "number" ? `[${segment}]` : `${index ? "." : ""}${String(segment)}`)).join("");
    if (segments[0] === "rules" && typeof segments[1] === "number") {
      const written = (json as { rules: unknown[] }).rules[segments[1]];
      rule = ` (rule ${segments[1]}, counting from 0${describeRule(written)})`;
    }
  }
  throw new UserError(`${field}${rule}: ${problem.message}`, { where, fix: fixFor(segments) });
}

function describeRule(rule: unknown): string {
  if (typeof rule !== "object" || rule === null) return "";
  const { method, path } = rule as { method?: unknown; path?: unknown };
  return typeof method === "string" && typeof path === "string" ? `: ${method.slice(0, 10)} ${path.slice(0, 100)}` : "";
}

function fixFor(segments: readonly PropertyKey[]): string {
  const field = segments.at(-1);
  if (segments.length === 0) return `the file must be {"format": 1, "rules": [{"method": "GET", "path": "/reftimes", "protected": false}, ...]}`;
  if (field === "format") return `set "format" to 1`;
  if (segments.length === 1 && field === "rules") return `"rules" is a list of {"method", "path", "protected", "role"?}`;
  if (segments.length === 2) return `a rule is an object {"method", "path", "protected", "role"?}`;
  if (field === "method") return `use one of GET, POST, PUT, PATCH, DELETE, OPTIONS or "*" (GET covers HEAD)`;
  if (field === "path") return `write a pattern relative to the product base path, of literal segments, ':name' for one segment and a final '*' for any depth, e.g. "/reftimes", "/jobs/:id", "/doc/*"`;
  if (field === "protected") return `set "protected" to true or false`;
  if (field === "role") return `set "role" to "operator" on a protected rule, or remove it`;
  return `remove that field: a rule is {"method", "path", "protected", "role"?}`;
}

/** Reads and checks a rules file. A missing file is an error: when no file is configured, use DEFAULT_ACCESS_RULES. */
export async function loadAccessRules(file: string): Promise<AccessRule[]> {
  const json = await readConfigJson(file, {
    what: "access rules file",
    maxBytes: MAX_ACCESS_RULES_FILE_BYTES,
    sizeFix: "check that this is the access rules file (templates/access-rules.json shows one)",
    readFix: "check the path and that the service's account may read it",
    syntaxFix: "fix the JSON syntax (templates/access-rules.json is a valid example)",
    missingFix: "give the path of an existing file (copy templates/access-rules.json), or configure none to use the default rules",
  });
  return parseAccessRules(json, file);
}

// ---------------------------------------------------------------------------------------------------
// Decisions

export type AccessDecision = { kind: "public" } | { kind: "protected"; role: Role | undefined } | { kind: "malformed" };

export interface AccessPolicy {
  /**
   * The decision for a request. `rawPathBelowBase` is the path after the product base path, as it arrived
   * (still percent-encoded; `""` is the base itself); see `pathBelowBase` for getting it safely.
   */
  decide(method: string, rawPathBelowBase: string): AccessDecision;
}

type Segment = { kind: "literal"; value: string } | { kind: "param" } | { kind: "rest" };
interface CompiledRule {
  method: AccessRule["method"];
  segments: Segment[];
  decision: AccessDecision;
}

const PUBLIC: AccessDecision = Object.freeze({ kind: "public" });
const MALFORMED: AccessDecision = Object.freeze({ kind: "malformed" });
const DENY_BY_DEFAULT: AccessDecision = Object.freeze({ kind: "protected", role: "operator" });
const SAFE_METHODS = new Set(["GET", "OPTIONS"]);

function compile(rule: AccessRule): CompiledRule {
  const segments: Segment[] = rule.path === "/" ? [] : rule.path.slice(1).split("/").map((segment): Segment => (segment === "*" ? { kind: "rest" } : segment.startsWith(":") ? { kind: "param" } : { kind: "literal", value: segment }));
  return { method: rule.method, segments, decision: rule.protected ? Object.freeze({ kind: "protected", role: rule.role }) : PUBLIC };
}

/** `*` matches zero or more segments: `/doc/*` covers `/doc` itself, so `/jobs/*` protects `/jobs` too. */
function matches(pattern: readonly Segment[], path: readonly string[]): boolean {
  for (const [index, segment] of pattern.entries()) {
    if (segment.kind === "rest") return true;
    const part = path[index];
    if (part === undefined) return false;
    if (segment.kind === "literal" && segment.value !== part) return false;
  }
  return pattern.length === path.length;
}

/** Rules are checked again here, so a policy is never built from rules that did not pass the schema. */
export function createAccessPolicy(rules: readonly AccessRule[]): AccessPolicy {
  const compiled = parseAccessRules({ format: ACCESS_RULES_FILE_FORMAT, rules }, "the access rules given to createAccessPolicy").map(compile);
  return {
    decide(method, rawPathBelowBase) {
      const normalised = normalisePath(rawPathBelowBase);
      if (normalised.kind === "malformed") return MALFORMED;
      const upper = method.toUpperCase();
      const effective = upper === "HEAD" ? "GET" : upper;
      const path = normalised.path === "/" ? [] : normalised.path.slice(1).split("/");
      for (const rule of compiled) {
        if ((rule.method === "*" || rule.method === effective) && matches(rule.segments, path)) return rule.decision;
      }
      return SAFE_METHODS.has(effective) ? PUBLIC : DENY_BY_DEFAULT;
    },
  };
}
