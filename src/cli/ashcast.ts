// The `ashcast` command's entry (bin/ashcast runs it on the pinned Node).
import { enableCompileCache } from "node:module";

// Node's compile cache (in the temp directory, keyed by source and Node version), as the build's workers use
// it: the modules a command loads are stripped of their types and compiled once, not at every start. bin/ashcast
// turns it on before this file (NODE_COMPILE_CACHE); this is for Node started on this file directly.
enableCompileCache();
const { main } = await import("./main.ts");

// A reader that stops early (`ashcast check | head`) closes the pipe: that ends the output, not in a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv);
