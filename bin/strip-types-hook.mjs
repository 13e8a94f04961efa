// Loaded (--import) by bin/ashcast when ashcast is installed as a package: Node strips TypeScript types
// natively, but never for files under node_modules. This hands ashcast's own .ts files to the same stripper
// (module.stripTypeScriptTypes); every other module loads as usual. Worker threads inherit the --import.
import { registerHooks, stripTypeScriptTypes } from "node:module";
import { readFileSync } from "node:fs";

const packageRoot = new URL("../", import.meta.url).href;

registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith(packageRoot) || !url.endsWith(".ts") || url.slice(packageRoot.length).includes("node_modules/")) return nextLoad(url, context);
    return { format: "module", source: stripTypeScriptTypes(readFileSync(new URL(url), "utf8")), shortCircuit: true };
  },
});
