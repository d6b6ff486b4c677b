// `numbers: "exact"`: JSON text parsed without losing digits. A number that a JavaScript number holds exactly stays
// a number; a larger integer becomes a bigint; any other number (long decimals, huge exponents) becomes a
// LosslessNumber, whose toString() is the exact text.
import { isInteger, isSafeNumber, LosslessNumber, parse } from "lossless-json";

export { LosslessNumber };

/** A number as `numbers: "exact"` returns it. */
export type ExactNumber = number | bigint | LosslessNumber;

/** T with every number widened to ExactNumber. */
export type Exact<T> = T extends number ? ExactNumber
  : T extends readonly (infer U)[] ? Exact<U>[]
  : T extends object ? { [K in keyof T]: Exact<T[K]> }
  : T;

function parseNumber(text: string): ExactNumber {
  if (isSafeNumber(text)) return Number(text);
  return isInteger(text) ? BigInt(text) : new LosslessNumber(text);
}

export function parseExact(text: string): unknown {
  return parse(text, null, parseNumber);
}
