// The `ashcast` command's entry (bin/ashcast runs it on the pinned Node).
import { main } from "./main.ts";

// A reader that stops early (`ashcast check | head`) closes the pipe: that ends the output, not in a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv);
