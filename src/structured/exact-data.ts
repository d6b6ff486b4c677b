// Bridges ajv (which sees plain JS values) and the exact tree. Each plain container remembers the
// exact container it was made from, so the exact keywords can find a number's literal text from
// ajv's (parentData, parentDataProperty). Entries die with the plain objects (WeakMap).

import { JsonNumber, isJsonObject, type JsonArray, type JsonObject, type JsonValue } from "./json-boundary.ts";

const exactOf = new WeakMap<object, JsonArray | JsonObject>();
// The root value of the validation in progress. Validation is synchronous, so one slot suffices.
let currentRoot: JsonValue = null;

export function toAjvData(v: JsonValue): unknown {
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) {
    const a = v.map(toAjvData);
    exactOf.set(a, v);
    return a;
  }
  if (isJsonObject(v)) {
    const o = Object.create(null) as Record<string, unknown>;
    for (const [k, x] of v) o[k] = toAjvData(x);
    exactOf.set(o, v);
    return o;
  }
  return v;
}

export function withRoot<T>(root: JsonValue, run: () => T): T {
  const saved = currentRoot;
  currentRoot = root;
  try {
    return run();
  } finally {
    currentRoot = saved;
  }
}

export interface DataContext {
  parentData?: unknown;
  parentDataProperty?: string | number;
}

/** The exact value behind ajv's `data` at this position. */
export function exactAt(data: unknown, cxt: DataContext | undefined): JsonValue {
  if (data !== null && typeof data === "object") {
    const found = exactOf.get(data);
    if (found !== undefined) return found;
  } else if (typeof data !== "number") {
    return data as JsonValue;
  }
  const parent = cxt?.parentData;
  if (parent === undefined || parent === null || typeof parent !== "object") return currentRoot;
  const tree = exactOf.get(parent);
  const prop = cxt?.parentDataProperty;
  if (tree === undefined || prop === undefined) throw new Error("exact value not found for validated data");
  const v = Array.isArray(tree) ? tree[Number(prop)] : tree.get(String(prop));
  if (v === undefined) throw new Error("exact value not found for validated data");
  return v;
}
