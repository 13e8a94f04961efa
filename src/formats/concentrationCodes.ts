/**
 * Concentrations (mg/m³) as 16-bit codes, for the point-query grids: a logarithmic scale that never
 * reads less than the model wrote. Pure.
 *
 * - code 0: below MIN_CODED_MG_M3 (1 µg/m³, 200× below the lowest threshold), read as 0: an error of at
 *   most 0.001 mg/m³.
 * - codes 1 … 65534: the value MIN · RATIO^(code − 1), rounded up to 6 significant digits; a value is given
 *   the smallest code that reads at or above it, so a code reads at most 0.1 % (+ 1e-5 of rounding) above
 *   the model's value and never below it: a point at a threshold stays in its class or the next one up.
 * - code 65535: missing (NaN in the model output).
 *
 * @example decodeConcentration(encodeConcentration(0.2)) // 0.2 (0.2 is on the scale's rounding)
 */

export const MIN_CODED_MG_M3 = 0.001;
/** Consecutive codes read 0.1 % apart: ten times finer than the 1 % the issue allows. */
export const CODE_RATIO = 1.001;
export const MISSING_CODE = 0xffff;
const TOP_CODE = 0xfffe;

/** 10^0 … 10^22, each exact in a double (written as literals: `10 ** k` need not be exact). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
const scaled = (value: number, digits: number): number => (digits >= 0 ? value * POWERS_OF_TEN[digits]! : value / POWERS_OF_TEN[-digits]!);
/** The decimal `integer` · 10^−digits as the double nearest to it: one exact operand each side, so one rounding. */
const decimal = (integer: number, digits: number): number => (digits >= 0 ? integer / POWERS_OF_TEN[digits]! : integer * POWERS_OF_TEN[-digits]!);

/**
 * The smallest decimal of 6 significant digits whose double is at or above `value`, as that double. Integer
 * arithmetic instead of toPrecision and Number(), which made building the table ~50 ms of every thread's
 * start-up; test/formats/concentrationCodes.test.ts holds every code to the toPrecision definition.
 */
function ceilToSixDigits(value: number): number {
  let digits = 5 - Math.floor(Math.log10(value));
  let significand = scaled(value, digits);
  // log10 can be one off next to a power of ten: bring the significand into [1e5, 1e6).
  if (significand >= 1e6) significand = scaled(value, --digits);
  else if (significand < 1e5) significand = scaled(value, ++digits);
  // The scaling rounds once; over the table's 65,534 values that never moves the ceiling (the test checks each).
  return decimal(Math.ceil(significand), digits);
}

/** What each code reads as (MISSING_CODE reads NaN). Built once: 512 KiB. */
export const CODE_VALUES: Float64Array = buildTable();

function buildTable(): Float64Array {
  const table = new Float64Array(0x10000);
  const logRatio = Math.log(CODE_RATIO);
  for (let code = 1; code <= TOP_CODE; code++) table[code] = ceilToSixDigits(MIN_CODED_MG_M3 * Math.exp((code - 1) * logRatio));
  table[MISSING_CODE] = Number.NaN;
  return table;
}

/**
 * The highest concentration the scale holds (2.8e25 mg/m³): a value above it would take the top code and read
 * less than it is, so the model reader refuses one (src/model/openModelOutput.ts). No model writes such a value.
 */
export const MAX_CODED_MG_M3 = CODE_VALUES[TOP_CODE]!;

/** The code of a concentration in mg/m³ (NaN: missing). Values beyond the scale (MAX_CODED_MG_M3) take the top code. */
export function encodeConcentration(value: number): number {
  if (Number.isNaN(value)) return MISSING_CODE;
  if (value < MIN_CODED_MG_M3) return 0;
  let code = 1 + Math.ceil(Math.log(value / MIN_CODED_MG_M3) / Math.log(CODE_RATIO) - 1e-9);
  if (code > TOP_CODE) return TOP_CODE;
  if (code < 1) code = 1;
  // The estimate can be one off either way in floating point: settle on the smallest code at or above.
  while (code < TOP_CODE && CODE_VALUES[code]! < value) code++;
  while (code > 1 && CODE_VALUES[code - 1]! >= value) code--;
  return code;
}

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);
/** Per bucket of float32 values (exponent and the top 10 bits of the mantissa: 0.1 % wide; positive values only), the code of its lowest value; 0 until first needed. */
const BUCKET_CODES = new Uint16Array(1 << 18);

/**
 * encodeConcentration of a value a Float32Array holds, without a logarithm: the code of the lowest value in
 * the value's 0.1 % bucket of float32s, then up to the smallest code at or above the value (codes are 0.1 %
 * apart, so a step or two). The same code as encodeConcentration for every value; the build codes every
 * cell of every field with it.
 */
export function encodeFloat32Concentration(value: number): number {
  if (!(value >= MIN_CODED_MG_M3)) return Number.isNaN(value) ? MISSING_CODE : 0;
  float32[0] = value;
  const bucket = float32Bits[0]! >>> 13;
  let code = BUCKET_CODES[bucket]!;
  if (code === 0) {
    float32Bits[0] = bucket << 13;
    code = BUCKET_CODES[bucket] = encodeConcentration(Math.max(float32[0]!, MIN_CODED_MG_M3));
  }
  while (code < TOP_CODE && CODE_VALUES[code]! < value) code++;
  return code;
}

export function decodeConcentration(code: number): number {
  return CODE_VALUES[code]!;
}
