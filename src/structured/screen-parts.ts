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

type SchemaObject = { [k: string]: unknown };

/**
 * The schema for ajv. A reference whose target is not recursive is replaced by the target's
 * screened form (its keywords copied into the `$ref` object, which held only the `$ref`: a boolean
 * target becomes `{}` or `{"not": {}}`), so ajv compiles it like a schema written inline, within the
 * caps the expansion was checked against; ajv's own reference resolution costs ~1 ms per `$ref` at
 * compile time (200 `$defs` took seconds). A recursive target stays a `$ref` to
 * `#/definitions/chatdRefN`, placed under the root's `definitions`; when the root itself is
 * referenced, the document becomes a `$ref` to it (ajv does not resolve "#" from a root without
 * `$id`, and the root cannot hold a container that holds itself).
 */
export function withReferenced(
  root: AjvSchema,
  sites: readonly { target: string; out: SchemaObject }[],
  refNames: ReadonlyMap<string, string>,
  screened: ReadonlyMap<string, AjvSchema>,
  recursive: ReadonlySet<string>,
): AjvSchema {
  if (sites.length === 0 || typeof root !== "object") return root;
  const siteOf = new Map(sites.map((s) => [s.out, s]));
  const done = new Set<SchemaObject>();
  const kept = new Set<string>();
  const filling = new Set<SchemaObject>();
  // Fills a $ref object from its target (a target that is itself a $ref object is filled first).
  const fill = (site: { target: string; out: SchemaObject }): void => {
    if (done.has(site.out)) return;
    const target = screened.get(site.target);
    // A cycle here lies in definitions validation never reaches (the expansion refuses the others).
    if (recursive.has(site.target) || target === undefined || filling.has(site.out)) {
      kept.add(site.target);
      return;
    }
    filling.add(site.out);
    if (typeof target === "object") {
      const inner = siteOf.get(target);
      if (inner !== undefined) fill(inner);
    }
    filling.delete(site.out);
    if (typeof target === "object" && typeof target.$ref === "string" && siteOf.has(target) && kept.has(siteOf.get(target)?.target ?? "")) {
      site.out.$ref = target.$ref;
    } else {
      delete site.out.$ref;
      Object.assign(site.out, typeof target === "boolean" ? (target ? {} : { not: {} }) : target);
    }
    done.add(site.out);
  };
  for (const site of sites) fill(site);
  if (kept.size === 0) return root;
  const defs: SchemaObject = Object.create(null) as SchemaObject;
  for (const [target, name] of refNames) if (kept.has(target)) defs[name] = screened.get(target);
  const rootName = kept.has("") ? refNames.get("") : undefined;
  const holder: SchemaObject = rootName === undefined ? root : (Object.create(null) as SchemaObject);
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
