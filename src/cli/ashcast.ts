// The `ashcast` command's entry (bin/ashcast runs it on the pinned Node).
import { main } from "./main.ts";

process.exitCode = await main(process.argv);
