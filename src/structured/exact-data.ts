// Bridges ajv (which sees plain JS values) and the exact tree. ajv sees every number as Number(text);
// the exact keywords (exact-keywords.ts) decide on that float whenever it is exact (JsonNumber.short:
// zero, or ≤ 15 significant digits in the normal range), which is nearly always. Only for the other
// numbers ("long" ones: 9007199254740993, 0.30000000000000001, 1e-320) do they need the literal,
// found from ajv's (parentData, parentDataProperty): each plain container that directly holds a
// long number remembers its exact container (WeakMap; entries die with the plain objects). A value
// without long numbers registers nothing and every lookup is one boolean test.
//
// Measured (bench/validator.ts, 32 anyOf branches x 4,000 integer keys, profiled): the previous
// design (a WeakMap entry for every container, a lookup and a BigInt comparison per number per
// branch, through ajv function keywords) spent ~100 ms in the keywords; this one ~1 ms.

import { floatKey, numberKey, sortedKeys } from "./canonical.ts";
import { JsonNumber, isJsonObject, type JsonArray, type JsonObject, type JsonValue } from "./json-boundary.ts";

const exactOf = new WeakMap<object, JsonArray | JsonObject>();
// ownKeys/ownValues below, per plain object.
interface KeyCache {
  keys: string[];
  values: unknown[] | undefined;
}
const keyCache = new WeakMap<object, KeyCache>();
// Small objects are cheap to enumerate again; caching them would only cost a WeakMap entry.
const CACHED_KEYS_MIN = 64;
// State of the validation in progress. Validation is synchronous, so one slot of each suffices.
/**
 * `hasLong`: whether the value being validated holds a long number anywhere. While it is false every
 * number ajv sees is exact, so the exact keywords' generated code decides on the float inline
 * (exact-keywords.ts) without calling longNumberAt; an object so that generated code can read it.
 */
export const exactState = { hasLong: false };
let rootLong: JsonNumber | undefined;
// The property names the validator reads by name (compile.ts propertyReads), during convert().
let propertyReads: ReadonlySet<string> | "all" = "all";

// Plain objects get this prototype: it has no properties at all (so `data.toString` is undefined
// and "__proto__" is an ordinary key, as with Object.create(null)), but objects made by `new` stay
// in V8's fast mode, where ajv's `data.name` reads are cheaper than on null-prototype dictionaries.
function PlainObject(): void {}
PlainObject.prototype = Object.create(null) as object;
const PlainCtor = PlainObject as unknown as new () => Record<string, unknown>;

function convert(v: JsonValue): unknown {
  if (v instanceof JsonNumber) return v.short ?? Number(v.text);
  if (Array.isArray(v)) {
    const a: unknown[] = new Array<unknown>(v.length);
    let long = false;
    for (let i = 0; i < v.length; i++) {
      const x = v[i] ?? null;
      // Numbers inline (no call per item: large arrays are mostly numbers).
      if (x instanceof JsonNumber) {
        const f = x.short;
        if (f === undefined) long = true;
        a[i] = f ?? Number(x.text);
      } else a[i] = convert(x);
    }
    if (long) {
      exactOf.set(a, v);
      exactState.hasLong = true;
    }
    return a;
  }
  if (isJsonObject(v)) {
    const o = new PlainCtor();
    let long = false;
    if (v.size <= CACHED_KEYS_MIN) {
      for (const [k, x] of v) {
        if (x instanceof JsonNumber && x.short === undefined) long = true;
        o[k] = convert(x);
      }
    } else {
      // The key loops' arrays (ownKeys/ownValues) come from the Map, which is already in order:
      // Object.values on a 4,000-key (dictionary-mode) object alone takes ~0.65 ms, Object.keys
      // ~0.13 ms. The Map's order is Object.keys' order unless a key is an array index (those come
      // first, ascending): with a key starting with a digit the arrays are left to ownKeys.
      const keys = new Array<string>(v.size);
      const values = new Array<unknown>(v.size);
      let i = 0;
      let indexLike = false;
      for (const [k, x] of v) {
        if (x instanceof JsonNumber && x.short === undefined) long = true;
        const c = k.charCodeAt(0);
        if (c >= 48 && c <= 57) indexLike = true;
        keys[i] = k;
        values[i++] = convert(x);
      }
      if (!indexLike) keyCache.set(o, { keys, values });
      // Setting the properties is most of the conversion (each new key string is internalized:
      // ~0.2 µs per key). Properties the validator never reads by name are read only through the
      // key loops' arrays, so only those it may read are set.
      const reads = indexLike ? "all" : propertyReads;
      if (reads === "all") keys.forEach((k, j) => (o[k] = values[j]));
      else
        keys.forEach((k, j) => {
          if (reads.has(k)) o[k] = values[j];
        });
    }
    if (long) {
      exactOf.set(o, v);
      exactState.hasLong = true;
    }
    return o;
  }
  return v;
}

/**
 * Runs `validate` on the plain counterpart of an exact value, with the lookups below available.
 * `reads`: the property names the validator may read by name (compile.ts propertyReads); objects
 * of more than 64 keys get only those as properties, the rest is in the key loops' arrays.
 */
export function withExactData<T>(value: JsonValue, validate: (data: unknown) => T, reads: ReadonlySet<string> | "all" = "all"): T {
  const saved = [exactState.hasLong, rootLong] as const;
  rootLong = value instanceof JsonNumber && value.short === undefined ? value : undefined;
  exactState.hasLong = rootLong !== undefined;
  try {
    propertyReads = reads;
    let data: unknown;
    try {
      data = convert(value); // sets hasLong when it registers a container
    } finally {
      propertyReads = "all";
    }
    return validate(data);
  } finally {
    [exactState.hasLong, rootLong] = saved;
  }
}

/**
 * The exact literal of the number ajv sees at (parent, prop) when its float is not exact, else
 * undefined (the float decides). At the root ajv passes no parent.
 */
export function longNumberAt(parent: unknown, prop: unknown): JsonNumber | undefined {
  if (!exactState.hasLong) return undefined;
  if (parent === undefined) return rootLong;
  const tree = exactOf.get(parent as object);
  if (tree === undefined) return undefined;
  const v = Array.isArray(tree) ? tree[prop as number] : tree.get(prop as string);
  return v instanceof JsonNumber && v.short === undefined ? v : undefined;
}

/** canonical.ts equalityKey of the exact value behind ajv's `data` at (parent, prop). */
export function equalityKeyAt(data: unknown, parent: unknown, prop: unknown): string {
  if (data === null || typeof data === "boolean") return String(data);
  if (typeof data === "string") return JSON.stringify(data);
  if (typeof data === "number") {
    const long = longNumberAt(parent, prop);
    return long === undefined ? floatKey(data) : numberKey(long);
  }
  if (Array.isArray(data)) return `[${data.map((x, i) => equalityKeyAt(x, data, i)).join(",")}]`;
  const o = data as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of sortedKeys(Object.keys(o))) parts.push(`${JSON.stringify(k)}:${equalityKeyAt(o[k], o, k)}`);
  return `{${parts.join(",")}}`;
}

/**
 * Object.keys of a plain object, computed once per object. ajv enumerates an object once per
 * subschema that applies additionalProperties/patternProperties/propertyNames to it (up to 64
 * branches); for an object of 4,000 keys V8 (dictionary mode) spends ~0.5 ms per `for…in`, which
 * alone broke the 5 ms budget. Same keys in the same order as `for…in`: the objects are ours, with
 * a prototype that has no enumerable properties, and are never modified during validation.
 */
export function ownKeys(o: object): string[] {
  const cached = keyCache.get(o);
  if (cached !== undefined) return cached.keys;
  const keys = Object.keys(o);
  if (keys.length > CACHED_KEYS_MIN) keyCache.set(o, { keys, values: undefined });
  return keys;
}

/**
 * The values of `o` in `ownKeys(o)` order (`values[i] === o[keys[i]]`), computed once per object
 * like the keys. The key loops read `values[i]` instead of `o[key]`: on a 4,000-key object (V8
 * dictionary mode) each `o[key]` is a hash lookup (~20 ns; 60 branches x 4,000 keys ≈ 5 ms), an
 * array read is ~1 ns.
 */
export function ownValues(o: object, keys: readonly string[]): unknown[] {
  const cached = keyCache.get(o);
  if (cached !== undefined && cached.keys === keys) return (cached.values ??= Object.values(o));
  const values = Object.values(o);
  // Object.values enumerates exactly like Object.keys; keys of a cached object always come from the
  // cache, so a mismatch here only happens for small (uncached) objects, where both are fresh.
  return values;
}
