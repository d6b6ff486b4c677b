// Exact decimal arithmetic over JSON number literals. Values are coef * 10^exp with a BigInt
// coefficient, so comparisons never pass through float64 (which would round 9007199254740993 and
// make 0.3 not a multiple of 0.1).

export interface Decimal {
  readonly neg: boolean;
  /** Non-negative coefficient without trailing zeros (0n for zero). */
  readonly coef: bigint;
  /** Decimal exponent; 0 for zero. */
  readonly exp: number;
}

export interface LiteralParts {
  readonly neg: boolean;
  readonly int: string;
  readonly frac: string;
  readonly exp: number;
}

const NUMBER_RE = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** Splits a JSON number literal. Callers have already bounded its length. */
export function splitLiteral(text: string): LiteralParts | undefined {
  const m = NUMBER_RE.exec(text);
  if (m === null) return undefined;
  return { neg: m[1] === "-", int: m[2] ?? "0", frac: m[3] ?? "", exp: m[4] === undefined ? 0 : Number(m[4]) };
}

/**
 * Number(text) when that float decides `<`, `==` and "is an integer" exactly like the decimal value
 * does, else undefined. That holds when the value is zero, or has at most 15 significant digits
 * (DBL_DIG: such decimals survive decimal -> double -> decimal, so two different ones never share a
 * double, and rounding is monotonic, so order is kept) and lies in the normal range (1e-307 to
 * 1e308; subnormals have fewer digits). It depends on the value only (`1.50` and `15e-1` agree),
 * which is what lets equality keys use the float for these numbers (canonical.ts `numberKey`).
 */
export function shortFloat(text: string): number | undefined {
  const p = splitLiteral(text);
  if (p === undefined) return undefined;
  const all = p.int + p.frac;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === 48) start++;
  if (start === all.length) return Number(text);
  let end = all.length;
  while (all.charCodeAt(end - 1) === 48) end--;
  if (end - start > 15) return undefined;
  // Decimal exponent of the leading digit.
  const lead = p.exp + p.int.length - 1 - start;
  return lead >= -307 && lead <= 307 ? Number(text) : undefined;
}

export function parseDecimal(text: string): Decimal {
  const p = splitLiteral(text);
  if (p === undefined) throw new Error(`not a JSON number literal: ${text.slice(0, 70)}`);
  let digits = (p.int + p.frac).replace(/^0+/, "");
  if (digits === "") return { neg: false, coef: 0n, exp: 0 };
  let exp = p.exp - p.frac.length;
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--;
  exp += digits.length - end;
  digits = digits.slice(0, end);
  return { neg: p.neg, coef: BigInt(digits), exp };
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function compareMagnitude(a: Decimal, b: Decimal): number {
  const e = Math.min(a.exp, b.exp);
  const x = a.coef * pow10(a.exp - e);
  const y = b.coef * pow10(b.exp - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compareDecimal(a: Decimal, b: Decimal): number {
  const sa = a.coef === 0n ? 0 : a.neg ? -1 : 1;
  const sb = b.coef === 0n ? 0 : b.neg ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  const m = compareMagnitude(a, b);
  return sa < 0 ? -m : m;
}

export function isMultipleOf(x: Decimal, d: Decimal): boolean {
  if (d.coef === 0n) return false;
  if (x.coef === 0n) return true;
  const e = Math.min(x.exp, d.exp);
  return (x.coef * pow10(x.exp - e)) % (d.coef * pow10(d.exp - e)) === 0n;
}

export function isIntegerDecimal(x: Decimal): boolean {
  return x.coef === 0n || x.exp >= 0;
}

/** A string equal for equal numeric values: `1.0`, `1` and `1e0` share one key. */
export function decimalKey(x: Decimal): string {
  if (x.coef === 0n) return "0";
  return `${x.neg ? "-" : ""}${x.coef}e${x.exp}`;
}

/**
 * The text PostgreSQL's `numeric` (and so `jsonb::text`) prints for a literal: the exact value with
 * display scale max(0, fraction digits - exponent), no exponent, no negative zero.
 */
export function pgNumericText(text: string): string {
  const p = splitLiteral(text);
  if (p === undefined) throw new Error(`not a JSON number literal: ${text.slice(0, 70)}`);
  const digits = (p.int + p.frac).replace(/^0+/, "");
  const k = p.exp - p.frac.length;
  if (digits === "") return k >= 0 ? "0" : `0.${"0".repeat(-k)}`;
  let body: string;
  if (k >= 0) {
    body = digits + "0".repeat(k);
  } else {
    const scale = -k;
    const padded = digits.padStart(scale + 1, "0");
    body = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  }
  return p.neg ? `-${body}` : body;
}
