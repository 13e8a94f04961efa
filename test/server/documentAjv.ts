/**
 * A JSON Schema 2020-12 validator (ajv, strict) for the schemas of a served OpenAPI document: an independent
 * implementation, not the zod that made them. The document's components are one schema resource under
 * `id`, so the `#/components/schemas/...` refs between them resolve; formats (`date-time`) are checked by
 * ajv-formats; the OpenAPI words that are not JSON Schema keywords (`components`, `x-` extensions) are
 * declared as annotations so strict mode accepts them.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv and ajv-formats are CommonJS; under NodeNext their exports are the `default` of the module object.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

export type DocumentAjv = InstanceType<typeof Ajv2020>;

/** Every `x-` key anywhere in a value. */
function extensionKeys(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) extensionKeys(item, found);
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key.startsWith("x-")) found.add(key);
      else extensionKeys(inner, found);
    }
  }
  return found;
}

export function documentAjv(doc: { components: { schemas: Record<string, unknown> } }, id: string): DocumentAjv {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  for (const keyword of ["components", ...extensionKeys(doc.components)]) ajv.addKeyword({ keyword });
  ajv.addSchema({ $id: id, components: doc.components });
  return ajv;
}
