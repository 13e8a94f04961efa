// Prints vitest's counts as the plain line CI reads: "N passed, N failed[, N skipped]".
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? ".vitest-results.json";
let results;
try {
  results = JSON.parse(readFileSync(file, "utf8"));
} catch {
  // No report: the type-check or the install failed before any test ran.
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
console.log(`${results.numPassedTests} passed, ${results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0)} failed${skipped ? `, ${skipped} skipped` : ""}`);
