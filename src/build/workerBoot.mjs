// Entry of the watcher's worker thread (see watchWorker.ts): the same loaders as bin/ashcast, then the watcher.
import { register } from "tsx/esm/api";

await import("h5wasm/node");
register();
await import("./watchWorker.ts");
