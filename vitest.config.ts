import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Build tests spawn the CLI and write real files: give them room on a 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The JSON report carries the counts .ci/run prints as "N passed, N failed".
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
});
