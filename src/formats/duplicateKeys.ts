/**
 * Keys that appear twice in one object of a JSON text. JSON.parse keeps the last silently, so a manifest
 * saying `"type": "Real Eruption"` and further down `"type": "Exercise"` would publish an Exercise with no
 * word; the readers report each repeat instead. Pure; the text must already be valid JSON (JSON.parse first).
 *
 * @example duplicateKeys('{"type": "Exercise", "type": "Rehearsal"}') // [{ path: "type", line: 1, column: 22 }]
 */

export interface DuplicateKey {
  /** Where the repeated key is: `type`, `layers[0].name` (the style of the readers' field names). */
  path: string;
  /** Of the repeat, 1-based. */
  line: number;
  column: number;
}

interface Frame {
  keys: Set<string> | undefined; // undefined: an array
  path: string;
  key: string;
  index: number;
}

export function duplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const stack: Frame[] = [];
  // The last structural character: a string right after `{` or `,` inside an object is a key.
  let last = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (top?.keys && (last === "{" || last === ",")) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) found.push({ path: childPath(top.path, key), ...lineAndColumn(text, i) });
        top.keys.add(key);
        top.key = key;
      }
      last = '"';
      i = j;
    } else if (c === "{" || c === "[") {
      const top = stack.at(-1);
      const path = top === undefined ? "" : top.keys ? childPath(top.path, top.key) : `${top.path}[${top.index}]`;
      stack.push({ keys: c === "{" ? new Set() : undefined, path, key: "", index: 0 });
      last = c;
    } else if (c === "}" || c === "]") {
      stack.pop();
      last = c;
    } else if (c === "," || c === ":") {
      if (c === ",") {
        const top = stack.at(-1);
        if (top && !top.keys) top.index++;
      }
      last = c;
    }
  }
  return found;
}

const childPath = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** The 1-based line and column of a position in a text (what people look for, where JSON.parse gives a position). */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return { line, column: position - before.lastIndexOf("\n") };
}
