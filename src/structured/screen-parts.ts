// Pieces of the screen's output (schema-screen.ts): node counts, the `definitions` that hold
// referenced schemas for ajv, and de-duplicated branches.

import { isJsonObject, type JsonValue } from "./json-boundary.ts";

export type AjvSchema = boolean | { [k: string]: unknown };

export /** JSON nodes of a value (every value is a node, keys are not: limitError's count). */
function jsonNodes(v: JsonValue): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + jsonNodes(x), 1);
  if (isJsonObject(v)) {
    let n = 1;
    for (const x of v.values()) n += jsonNodes(x);
    return n;
  }
  return 1;
}

// The name a referenced position gets in the `definitions` of the schema handed to ajv.
export const REF_CONTAINER = "definitions";

/**
 * The schema for ajv with every referenced position under `definitions` (each `$ref` was written as
 * `#/definitions/chatdRefN`). When the root itself is referenced, the root becomes one of them and
 * the document is a `$ref` to it (ajv does not resolve "#" from a root without `$id`, and the root
 * cannot hold a container that holds itself).
 */
export function withReferenced(root: AjvSchema, refNames: ReadonlyMap<string, string>, screened: ReadonlyMap<string, AjvSchema>): AjvSchema {
  if (refNames.size === 0 || typeof root !== "object") return root;
  const defs: { [k: string]: unknown } = Object.create(null) as { [k: string]: unknown };
  for (const [target, name] of refNames) defs[name] = screened.get(target);
  const rootName = refNames.get("");
  const holder: { [k: string]: unknown } = rootName === undefined ? root : (Object.create(null) as { [k: string]: unknown });
  if (rootName !== undefined) holder.$ref = `#/${REF_CONTAINER}/${rootName}`;
  holder[REF_CONTAINER] = defs;
  return holder;
}

/** The branches without repeats (by their JSON text: same keywords in the same order), first ones kept. */
export function distinctBranches(branches: AjvSchema[]): AjvSchema[] {
  if (branches.length < 2) return branches;
  const seen = new Set<string>();
  return branches.filter((b) => {
    const key = JSON.stringify(b);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
