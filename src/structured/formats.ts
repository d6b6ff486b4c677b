// The format list of design §4 and no other. Every check is an RE2 automaton (linear time in the
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
] as const;

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

const DATE = re2("^(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)$");
const TIME = re2("^(\\d\\d):(\\d\\d):(\\d\\d)(?:\\.\\d+)?(z|([+-])(\\d\\d):(\\d\\d))$", true);
const DATE_TIME = re2("^(\\d\\d\\d\\d-\\d\\d-\\d\\d)[t ](.*)$", true);

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function date(s: string): boolean {
  const m = DATE.exec(s);
  if (m === null) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const max = mo === 2 && isLeapYear(y) ? 29 : (DAYS[mo] ?? 0);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= max;
}

// RFC 3339 full-time: the offset is required (ajv-formats' strict mode), leap second only at 23:59 UTC.
function time(s: string): boolean {
  const m = TIME.exec(s);
  if (m === null) return false;
  const hr = Number(m[1]);
  const min = Number(m[2]);
  const sec = Number(m[3]);
  const sign = m[5] === "-" ? -1 : 1;
  const tzH = Number(m[6] ?? 0);
  const tzM = Number(m[7] ?? 0);
  if (tzH > 23 || tzM > 59) return false;
  if (hr <= 23 && min <= 59 && sec <= 59) return true;
  const utcMin = min - tzM * sign;
  const utcHr = hr - tzH * sign - (utcMin < 0 ? 1 : 0);
  return (utcHr === 23 || utcHr === -1) && (utcMin === 59 || utcMin === -1) && sec === 60;
}

function dateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  return m !== null && date(String(m[1])) && time(String(m[2]));
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
});
