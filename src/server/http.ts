/**
 * Pure HTTP helpers (RFC 9110): content and encoding negotiation, validators, HTTP dates.
 * No I/O; exact-value tests in test/server/http.test.ts.
 */

export type Encoding = "br" | "gzip" | "identity";

/** Quality values of an Accept or Accept-Encoding header: token (lower case) to q. */
export function parseQualities(header: string | undefined): Map<string, number> {
  const qualities = new Map<string, number>();
  if (!header) return qualities;
  for (const part of header.split(",")) {
    const [token, ...params] = part.trim().split(";");
    if (!token) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.trim().split("=");
      if (name?.trim().toLowerCase() === "q") q = Number.isFinite(Number(value)) ? Math.min(1, Math.max(0, Number(value))) : 0;
    }
    qualities.set(token.trim().toLowerCase(), q);
  }
  return qualities;
}

/**
 * The encoding to send among those available: the one the client weights highest (RFC 9110 §12.5.3), brotli
 * of equals (the smaller), then identity; each only when the client accepts it (q > 0, directly or through
 * `*`). Without Accept-Encoding, identity.
 */
export function chooseEncoding(acceptEncoding: string | undefined, available: { br: boolean; gzip: boolean }): Encoding {
  if (!acceptEncoding) return "identity";
  const q = parseQualities(acceptEncoding);
  const star = q.get("*");
  const br = available.br ? (q.get("br") ?? star ?? 0) : 0;
  const gzip = available.gzip ? Math.max(q.get("gzip") ?? star ?? 0, q.get("x-gzip") ?? 0) : 0;
  if (br > 0 && br >= gzip) return "br";
  if (gzip > 0) return "gzip";
  return "identity";
}

/**
 * Whether the client prefers image/png to JSON (content negotiation on `/`): PNG only when its quality
 * is strictly higher, so a missing or vague Accept gets JSON, the default form.
 */
export function prefersPng(accept: string | undefined): boolean {
  if (!accept) return false;
  const q = parseQualities(accept);
  const quality = (type: string, subtype: string) => q.get(`${type}/${subtype}`) ?? q.get(`${type}/*`) ?? q.get("*/*") ?? 0;
  return quality("image", "png") > quality("application", "json");
}

/**
 * If-None-Match against the current ETag, with the weak comparison RFC 9110 §13.1.2 prescribes
 * (`W/` prefixes ignored); `*` matches any current representation.
 */
export function noneMatchHits(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === etag) return true; // what nearly every revalidating client sends
  const opaque = etag.replace(/^W\//, "");
  if (ifNoneMatch.trim() === "*") return true;
  return (ifNoneMatch.match(/(?:W\/)?"[^"]*"/g) ?? []).some((candidate) => candidate.replace(/^W\//, "") === opaque);
}

/**
 * If-Modified-Since: true when the resource was not modified after the given date. An invalid date
 * is ignored (false), as RFC 9110 §13.1.3 says.
 */
export function notModifiedSince(ifModifiedSince: string, modifiedMs: number): boolean {
  const since = parseHttpDate(ifModifiedSince);
  return since !== undefined && Math.floor(modifiedMs / 1000) * 1000 <= since;
}

/**
 * If-Match, else If-Unmodified-Since (RFC 9110 §13.2.2 steps 1–2): true when the precondition fails (412).
 * If-Match compares strongly (a `W/` tag never matches) and `*` matches any current representation; an invalid
 * If-Unmodified-Since date is ignored, as §13.1.4 says.
 */
export function preconditionFails(ifMatch: string | undefined, ifUnmodifiedSince: string | undefined, etag: string, modifiedMs: number): boolean {
  if (ifMatch !== undefined) {
    if (ifMatch.trim() === "*") return false;
    return !(ifMatch.match(/(?:W\/)?"[^"]*"/g) ?? []).some((candidate) => candidate === etag && !etag.startsWith("W/"));
  }
  if (ifUnmodifiedSince === undefined) return false;
  const since = parseHttpDate(ifUnmodifiedSince);
  return since !== undefined && Math.floor(modifiedMs / 1000) * 1000 > since;
}

/** The conditional headers of a request, as the answers made per request compare them. */
export interface Conditions {
  ifMatch?: string | undefined;
  ifUnmodifiedSince?: string | undefined;
  ifNoneMatch: string | undefined;
  ifModifiedSince: string | undefined;
}

/** The detail of a 412 to an answer made per request. */
export const PRECONDITION_FAILED_DETAIL = "the answer does not match If-Match or was modified after If-Unmodified-Since: ask again without them";

/**
 * What the conditions make of an answer with these validators (RFC 9110 §13.2.2): a failed precondition (412),
 * not modified (304), or the answer itself. If-Match and If-Unmodified-Since first, then If-None-Match, else
 * If-Modified-Since.
 */
export function conditionsOutcome(conditions: Conditions, etag: string, modifiedMs: number): "failed" | "not modified" | "send" {
  const { ifMatch, ifUnmodifiedSince, ifNoneMatch, ifModifiedSince } = conditions;
  if ((ifMatch !== undefined || ifUnmodifiedSince !== undefined) && preconditionFails(ifMatch, ifUnmodifiedSince, etag, modifiedMs)) return "failed";
  const notModified = ifNoneMatch !== undefined ? noneMatchHits(ifNoneMatch, etag) : ifModifiedSince !== undefined && notModifiedSince(ifModifiedSince, modifiedMs);
  return notModified ? "not modified" : "send";
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC_850 = /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/**
 * Epoch ms of an HTTP-date in any of the three forms recipients must accept (RFC 9110 §5.6.7):
 * IMF-fixdate, RFC 850 and asctime. Undefined for anything else, impossible dates included.
 */
export function parseHttpDate(text: string, nowMs: number = Date.now()): number | undefined {
  const trimmed = text.trim();
  let parts: [day: string, month: string, year: number, hour: string, minute: string, second: string] | undefined;
  let match: RegExpExecArray | null;
  if ((match = IMF_FIXDATE.exec(trimmed))) parts = [match[1]!, match[2]!, Number(match[3]), match[4]!, match[5]!, match[6]!];
  else if ((match = RFC_850.exec(trimmed))) parts = [match[1]!, match[2]!, twoDigitYear(Number(match[3]), nowMs), match[4]!, match[5]!, match[6]!];
  else if ((match = ASCTIME.exec(trimmed))) parts = [match[2]!.trim(), match[1]!, Number(match[6]), match[3]!, match[4]!, match[5]!];
  if (!parts) return undefined;
  const [day, monthName, year, hour, minute, second] = parts;
  const month = MONTHS.indexOf(monthName);
  const ms = Date.UTC(year, month, Number(day), Number(hour), Number(minute), Number(second));
  const check = new Date(ms);
  // Date.UTC rolls 31 February over to March: such a date is not a date.
  const real = month >= 0 && check.getUTCDate() === Number(day) && check.getUTCHours() === Number(hour) && check.getUTCMinutes() === Number(minute) && check.getUTCSeconds() === Number(second);
  return real ? ms : undefined;
}

/** RFC 9110: a two-digit year more than 50 years in the future means the past century. */
function twoDigitYear(yy: number, nowMs: number): number {
  const year = 2000 + yy;
  return year > new Date(nowMs).getUTCFullYear() + 50 ? year - 100 : year;
}

export function formatHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
