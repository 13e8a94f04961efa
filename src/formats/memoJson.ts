/**
 * JSON text composed from the text of entries serialised before. A release of 1,000 runs lists every run
 * in its state, report and index, but only the entries of changed runs are new objects: the others are the
 * very objects of the previous release, and their text is reused instead of serialised again.
 *
 * An entry is frozen (deeply) when its text is first kept, so a later change to it fails loudly instead of
 * leaving stale text behind. The bytes are those of JSON.stringify of the whole.
 */

const texts = new WeakMap<object, string>();

/** JSON.stringify(entry), kept for the entry's lifetime; the entry is frozen from then on. */
export function entryJson(entry: object): string {
  let text = texts.get(entry);
  if (text === undefined) {
    text = JSON.stringify(entry);
    deepFreeze(entry);
    texts.set(entry, text);
  }
  return text;
}

/** `"key":entry` as last written for an entry: a record of 1,000 unchanged entries then costs lookups only. */
const members = new WeakMap<object, { key: string; text: string }>();

/** JSON.stringify of a record of entries. */
export function recordJson(record: Readonly<Record<string, object>>): string {
  const parts: string[] = [];
  for (const [key, entry] of Object.entries(record)) {
    let member = members.get(entry);
    if (member?.key !== key) members.set(entry, (member = { key, text: `${JSON.stringify(key)}:${entryJson(entry)}` }));
    parts.push(member.text);
  }
  return `{${parts.join(",")}}`;
}

/** JSON.stringify of an array of entries. */
export function arrayJson(entries: readonly object[]): string {
  return `[${entries.map(entryJson).join(",")}]`;
}

/**
 * JSON.stringify of an object whose members named in `ready` are given as JSON text already (from
 * recordJson or arrayJson). Members are written in the object's own order; undefined ones are left out.
 */
export function objectJson(value: object, ready: Readonly<Record<string, string>>): string {
  const parts: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const text = Object.hasOwn(ready, key) ? ready[key] : (JSON.stringify(member) as string | undefined);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

/** `value`, deeply frozen: for objects whose JSON text is kept elsewhere (a chunk read back from disk). */
export function deepFrozen<T extends object>(value: T): T {
  deepFreeze(value);
  return value;
}

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const member of Object.values(value)) if (typeof member === "object" && member !== null) deepFreeze(member);
}
