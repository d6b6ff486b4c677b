// The format list and no other. Every check is an RE2 automaton (linear time in the
// input, by construction) plus constant work on fixed-size captures, so no string within the value
// caps can make a format check slow. ajv-formats' own checks run on native backtracking RegExps;
// we reuse its regex sources (well tested) but execute them with re2js.

import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";

export const SUPPORTED_FORMATS = [
  "date",
  "time",
  "date-time",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uri",
  "uri-reference",
  "uri-template",
  "json-pointer",
  "relative-json-pointer",
  "uuid",
  "duration",
  "ulid",
] as const;

/**
 * Format names that carry no assertion in any specification (OpenAPI's `password` and `binary`,
 * Pydantic's `path`): accepted as annotations, never checked. Every other name is checked or refused.
 */
export const ANNOTATION_FORMATS: readonly string[] = ["password", "binary", "path"];

export type FormatName = (typeof SUPPORTED_FORMATS)[number];

export function isSupportedFormat(name: string): name is FormatName {
  return (SUPPORTED_FORMATS as readonly string[]).includes(name);
}

function sourceOf(name: keyof typeof fullFormats): RegExp {
  const f: unknown = fullFormats[name];
  if (f instanceof RegExp) return f;
  throw new Error(`ajv-formats ${name} is not a RegExp`);
}

function re2(rx: RegExp | string, caseInsensitive = false): RE2JS {
  const source = typeof rx === "string" ? rx : rx.source;
  return RE2JS.compile(RE2JS.translateRegExp(source), caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
}

// RE2's case folding is Unicode-wide: (?i)[a-z] also matches U+017F (long s) and U+212A (Kelvin
// sign), which JS /i (the regexes' original semantics) does not. Those are the only non-ASCII code
// points that fold onto ASCII letters, so rejecting them restores ASCII-only matching.
const FOLDS_TO_ASCII = /[\u017f\u212a]/;

const EMAIL = re2(sourceOf("email"), true);
const HOSTNAME_LABELS = re2("^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$", true);
const IPV4 = re2(sourceOf("ipv4"));
const IPV6 = re2(sourceOf("ipv6"), true);
const URI_REFERENCE = re2(sourceOf("uri-reference"), true);
// ajv-formats' URI regex is uri-reference with a mandatory scheme; derive it so both stay in sync.
const URI_REFERENCE_SCHEME = "^(?:[a-z][a-z0-9+\\-.]*:)?";
const URI = (() => {
  const src = sourceOf("uri-reference").source;
  if (!src.startsWith(URI_REFERENCE_SCHEME)) throw new Error("unexpected ajv-formats uri-reference regex");
  return re2("^(?:[a-z][a-z0-9+\\-.]*:)" + src.slice(URI_REFERENCE_SCHEME.length), true);
})();
const URI_TEMPLATE = re2(sourceOf("uri-template"), true);
const JSON_POINTER = re2(sourceOf("json-pointer"));
const RELATIVE_JSON_POINTER = re2(sourceOf("relative-json-pointer"));
const UUID = re2(sourceOf("uuid"), true);
// RFC 3339 Appendix A (ISO 8601 durations), its ABNF as written: designators in upper case, units in
// order without gaps inside a chain (year [month [day]], hour [minute [second]]), weeks alone.
const DUR_TIME = "T(?:\\d+H(?:\\d+M(?:\\d+S)?)?|\\d+M(?:\\d+S)?|\\d+S)";
const DURATION = re2(`^P(?:(?:\\d+D|\\d+M(?:\\d+D)?|\\d+Y(?:\\d+M(?:\\d+D)?)?)(?:${DUR_TIME})?|${DUR_TIME}|\\d+W)$`);
// ULID: 26 Crockford base-32 characters (no I, L, O, U; either case), the first at most 7 (128 bits).
const ULID = re2("^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$");

// date, time and date-time are plain character checks (no regex: re2js runs them one rune at a
// time, ~1.5 µs each, and a date-time took three of them; the typical 50-field payload spent ~30%
// of its validation there). They accept exactly what these RE2 patterns accepted:
//   date       ^(\d\d\d\d)-(\d\d)-(\d\d)$
//   time       (?i)^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(z|([+-])(\d\d):(\d\d))$
//   date-time  (?i)^(\d\d\d\d-\d\d-\d\d)[t ](.*)$, then date and time on the two parts
// (\d is ASCII in RE2, `$` is the end of the text, and only t/T and z/Z fold to t and z).

/** The two-digit number at s[i..i+2), or -1. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

function isDigit(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function date(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return false;
  const hi = twoDigits(s, 0);
  const lo = twoDigits(s, 2);
  const mo = twoDigits(s, 5);
  const d = twoDigits(s, 8);
  if (hi < 0 || lo < 0 || mo < 0 || d < 0) return false;
  const y = hi * 100 + lo;
  const max = mo === 2 && isLeapYear(y) ? 29 : (DAYS[mo] ?? 0);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= max;
}

// RFC 3339 full-time: the offset is required (ajv-formats' strict mode), leap second only at 23:59 UTC.
function time(s: string): boolean {
  if (s.charCodeAt(2) !== 0x3a || s.charCodeAt(5) !== 0x3a) return false;
  const hr = twoDigits(s, 0);
  const min = twoDigits(s, 3);
  const sec = twoDigits(s, 6);
  if (hr < 0 || min < 0 || sec < 0) return false;
  let i = 8;
  if (s.charCodeAt(i) === 0x2e) {
    i++;
    if (!isDigit(s, i)) return false;
    while (isDigit(s, i)) i++;
  }
  const z = s.charCodeAt(i);
  let sign = 1;
  let tzH = 0;
  let tzM = 0;
  if (z === 0x7a || z === 0x5a) {
    if (i + 1 !== s.length) return false;
  } else if (z === 0x2b || z === 0x2d) {
    if (i + 6 !== s.length || s.charCodeAt(i + 3) !== 0x3a) return false;
    sign = z === 0x2d ? -1 : 1;
    tzH = twoDigits(s, i + 1);
    tzM = twoDigits(s, i + 4);
    if (tzH < 0 || tzM < 0) return false;
  } else {
    return false;
  }
  if (tzH > 23 || tzM > 59) return false;
  if (hr <= 23 && min <= 59 && sec <= 59) return true;
  const utcMin = min - tzM * sign;
  const utcHr = hr - tzH * sign - (utcMin < 0 ? 1 : 0);
  return (utcHr === 23 || utcHr === -1) && (utcMin === 59 || utcMin === -1) && sec === 60;
}

function dateTime(s: string): boolean {
  const t = s.charCodeAt(10);
  return (t === 0x74 || t === 0x54 || t === 0x20) && date(s.slice(0, 10)) && time(s.slice(11));
}

function asciiFold(rx: RE2JS): (s: string) => boolean {
  return (s) => !FOLDS_TO_ASCII.test(s) && rx.test(s);
}

export const FORMAT_CHECKS: Readonly<Record<FormatName, (s: string) => boolean>> = Object.freeze({
  date,
  time,
  "date-time": dateTime,
  email: asciiFold(EMAIL),
  hostname: (s: string) => s.length >= 1 && s.length <= (s.endsWith(".") ? 254 : 253) && asciiFold(HOSTNAME_LABELS)(s),
  ipv4: (s: string) => IPV4.test(s),
  ipv6: asciiFold(IPV6),
  // A URI needs a scheme; ajv-formats also demands a ':' or '/' before running the big regex.
  uri: (s: string) => (s.includes(":") || s.includes("/")) && asciiFold(URI)(s),
  "uri-reference": asciiFold(URI_REFERENCE),
  "uri-template": (s: string) => URI_TEMPLATE.test(s),
  "json-pointer": (s: string) => JSON_POINTER.test(s),
  "relative-json-pointer": (s: string) => RELATIVE_JSON_POINTER.test(s),
  uuid: asciiFold(UUID),
  duration: (s: string) => DURATION.test(s),
  ulid: (s: string) => ULID.test(s),
});
