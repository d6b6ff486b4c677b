// Builds a plausible value for a JSON Schema, so the scripted provider can call the
// finalizer with something that usually validates. Not a general generator: it follows
// the literal hints first (const, enum, examples, default), then simple types, and local
// `$ref`s (`#`, `#/$defs/Name`, any JSON pointer into the same document) as chatd's validator
// accepts them; anything else a `$ref` names gives null.
import type { JSONValue } from "../types.ts";

type Schema = Record<string, unknown>;

const MAX_DEPTH = 32;
// Values built per call: a recursive schema whose required properties branch (a tree with required
// `left` and `right`) would otherwise double at every level down to MAX_DEPTH.
const MAX_NODES = 4096;

interface Build {
  /** The document `$ref`s point into. */
  readonly root: unknown;
  /** The schemas reached through a `$ref` on the current path (recursion). */
  readonly expanding: Set<Schema>;
  nodes: number;
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2024-01-01T00:00:00Z",
  date: "2024-01-01",
  time: "00:00:00Z",
  email: "user@example.com",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
};

function isSchema(value: unknown): value is Schema {
  return value != null && typeof value === "object" && !Array.isArray(value);
}

function firstType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    // Prefer a concrete type over null so optional-by-nullable fields still show a value.
    const concrete = t.find((x) => typeof x === "string" && x !== "null");
    return (concrete ?? t[0]) as string | undefined;
  }
  if (isSchema(schema.properties) || Array.isArray(schema.required)) return "object";
  if (schema.items != null) return "array";
  return undefined;
}

function exampleString(schema: Schema): string {
  const format = typeof schema.format === "string" ? FORMAT_EXAMPLES[schema.format] : undefined;
  let value = format ?? "example";
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  if (value.length < min) value = value.padEnd(min, "x");
  if (value.length > max) value = value.slice(0, max);
  return value;
}

function exampleNumber(schema: Schema, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  if (typeof schema.minimum === "number") return integer ? Math.ceil(schema.minimum) : schema.minimum;
  if (typeof schema.exclusiveMinimum === "number") {
    return integer ? Math.floor(schema.exclusiveMinimum) + 1 : schema.exclusiveMinimum + step;
  }
  if (typeof schema.maximum === "number" && schema.maximum < 0) {
    return integer ? Math.floor(schema.maximum) : schema.maximum;
  }
  if (typeof schema.exclusiveMaximum === "number" && schema.exclusiveMaximum <= 0) {
    return integer ? Math.ceil(schema.exclusiveMaximum) - 1 : schema.exclusiveMaximum - step;
  }
  return 0;
}

/** The schema a local `$ref` names in `root` (URI fragment, then JSON pointer), or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined;
  let at: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const name = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(at)) at = /^(0|[1-9][0-9]*)$/.test(name) ? at[Number(name)] : undefined;
    else at = isSchema(at) && Object.hasOwn(at, name) ? at[name] : undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** The referenced schema of a `$ref` schema, else undefined. */
function refTarget(schema: unknown, b: Build): Schema | undefined {
  if (!isSchema(schema) || typeof schema.$ref !== "string") return undefined;
  const target = resolveRef(b.root, schema.$ref);
  return isSchema(target) ? target : undefined;
}

/** The first branch that does not lead back into a schema being expanded (so recursion can end), else the first. */
function pickBranch(branches: unknown[], b: Build): unknown {
  return branches.find((x) => {
    const target = refTarget(x, b);
    return target === undefined || !b.expanding.has(target);
  }) ?? branches[0];
}

function build(schema: unknown, depth: number, b: Build): JSONValue {
  if (schema === true || !isSchema(schema) || depth > MAX_DEPTH || ++b.nodes > MAX_NODES) return null;
  if (typeof schema.$ref === "string") {
    const target = refTarget(schema, b);
    if (target === undefined) return null;
    const outer = b.expanding.has(target);
    b.expanding.add(target);
    try {
      return build(target, depth + 1, b);
    } finally {
      if (!outer) b.expanding.delete(target);
    }
  }
  if ("const" in schema) return schema.const as JSONValue;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as JSONValue;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as JSONValue;
  if ("default" in schema) return schema.default as JSONValue;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return build(pickBranch(branches, b), depth + 1, b);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    // Merge object-shaped branches so required properties from every branch appear.
    const merged: Schema = { ...schema, allOf: undefined };
    const properties: Schema = isSchema(schema.properties) ? { ...schema.properties } : {};
    const required = new Set<string>(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const written of schema.allOf) {
      const branch = refTarget(written, b) ?? written;
      if (!isSchema(branch)) continue;
      if (isSchema(branch.properties)) Object.assign(properties, branch.properties);
      if (Array.isArray(branch.required)) for (const r of branch.required) required.add(String(r));
      if (merged.type == null && branch.type != null) merged.type = branch.type;
    }
    delete merged.allOf;
    return build({ ...merged, properties, required: [...required] }, depth + 1, b);
  }
  switch (firstType(schema)) {
    case "object": {
      const out: { [key: string]: JSONValue } = {};
      const properties = isSchema(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      for (const name of required) {
        if (typeof name === "string") out[name] = build(properties[name] ?? {}, depth + 1, b);
      }
      return out;
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 0;
      const items = schema.items;
      const out: JSONValue[] = [];
      for (let i = 0; i < count; i++) {
        out.push(build(Array.isArray(items) ? (items[i] ?? schema.additionalItems ?? {}) : (items ?? {}), depth + 1, b));
      }
      return out;
    }
    case "string":
      return exampleString(schema);
    case "integer":
      return exampleNumber(schema, true);
    case "number":
      return exampleNumber(schema, false);
    case "boolean":
      return true;
    default:
      return null;
  }
}

/**
 * An example value for `schema`: its `const`, first `enum` value, first `examples` entry or
 * `default`, else a value of the (first) type — objects with their required properties,
 * "example" strings, 0 or the minimum for numbers, true, [] or `minItems` items, null. A `$ref`
 * is followed into `root` (the document `schema` sits in; itself by default); an `anyOf`/`oneOf`
 * takes its first branch that does not recurse. Bounded: 32 levels, 4,096 values.
 */
export function exampleFromSchema(schema: unknown, root: unknown = schema): JSONValue {
  return build(schema, 0, { root, expanding: new Set(), nodes: 0 });
}
