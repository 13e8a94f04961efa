/**
 * How hard the stress suites push. The default run stays short enough for every `npm test`;
 * ASHCAST_LONG_TESTS=1 multiplies the fuzz and crash iterations (the command is in README.md, Quick start).
 */
export const LONG_TESTS = process.env.ASHCAST_LONG_TESTS === "1";

/** `n` in the default run, `n * factor` in the long run. */
export function iterations(n: number, factor = 20): number {
  return LONG_TESTS ? n * factor : n;
}

/** The seed of a seeded suite: ASHCAST_FUZZ_SEED when given (to replay a failure), else a fresh one. */
export function fuzzSeed(): number {
  const given = process.env.ASHCAST_FUZZ_SEED;
  return given === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(given);
}
