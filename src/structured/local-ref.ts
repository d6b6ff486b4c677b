// `$ref` values: only a fragment naming a JSON pointer inside the same document (`#`,
// `#/$defs/Name`, `#/definitions/a~1b%25`). Nothing is ever loaded: every other form is refused
// here, with the reason, before any resolution is attempted.

import { escapePointerSegment } from "./json-boundary.ts";

export type RefTarget = { ok: true; pointer: string } | { ok: false; detail: string };

/**
 * The JSON pointer a `$ref` names, written the way the screen writes positions (segments unescaped
 * from the URI fragment's percent-encoding and JSON pointer's ~0/~1, then escaped again with ~0/~1),
 * so that equal locations compare equal as strings.
 */
export function localRefTarget(ref: string): RefTarget {
  if (!ref.startsWith("#")) {
    return { ok: false, detail: "only local references are supported (#, #/$defs/..., #/definitions/...): remote and relative URIs are never loaded" };
  }
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return { ok: false, detail: "the reference is not a valid URI fragment (bad percent-encoding)" };
  }
  if (fragment === "") return { ok: true, pointer: "" };
  if (!fragment.startsWith("/")) {
    return { ok: false, detail: "plain-name fragments ($anchor, $id-based resolution) are not supported: use a JSON pointer such as #/$defs/Name" };
  }
  const segments: string[] = [];
  for (const raw of fragment.slice(1).split("/")) {
    if (/~(?![01])/.test(raw)) return { ok: false, detail: "the reference is not a valid JSON pointer (~ must be followed by 0 or 1)" };
    segments.push(escapePointerSegment(raw.replace(/~1/g, "/").replace(/~0/g, "~")));
  }
  return { ok: true, pointer: `/${segments.join("/")}` };
}

// Keywords whose value is a schema, a map of schemas, or (items) a schema or an array of them;
// `dependencies` holds schemas beside arrays of names.
const SCHEMA_VALUED = new Set(["additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else", "items"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependencies"]);
const SCHEMA_ARRAYS = new Set(["allOf", "anyOf", "oneOf", "items", "prefixItems"]);

/**
 * A screened schema placed at `prefix` (a JSON pointer) inside another document: every `$ref` at a
 * schema position gets the prefix, so it names the same schema there. Data (`const`, `enum`,
 * `default`, `examples`, property names) is copied as it is.
 */
export function rebaseLocalRefs(schema: unknown, prefix: string): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    let x: unknown = v;
    if (k === "$ref" && typeof v === "string" && v.startsWith("#")) x = `#${encodeURI(prefix)}${v.slice(1)}`;
    else if (SCHEMA_ARRAYS.has(k) && Array.isArray(v)) x = v.map((s) => rebaseLocalRefs(s, prefix));
    else if (SCHEMA_VALUED.has(k)) x = rebaseLocalRefs(v, prefix);
    else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === "object" && !Array.isArray(v)) {
      x = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([n, s]) => [n, Array.isArray(s) ? s : rebaseLocalRefs(s, prefix)]));
    }
    Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
