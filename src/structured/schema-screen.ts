// Schema screening: walks the exact schema tree knowing which positions hold schemas and which
// hold literal data (const, enum, default, examples, property names), rejects what we do not
// support, enforces the structural caps, and produces the schema object handed to ajv. That object
// replaces every numeric/equality keyword with an exact counterpart (see exact-keywords.ts) and drops
// annotations that carry arbitrary data, so ajv never decides anything on a float64.

import {
  SCHEMA_MAX_BRANCHES,
  SCHEMA_MAX_DEPTH,
  SCHEMA_MAX_ENUM_ITEMS,
  SCHEMA_MAX_PATTERNS,
} from "./caps.ts";
import { equalityKey } from "./canonical.ts";
import { parseDecimal } from "./decimal.ts";
import { ANNOTATION_FORMATS, isSupportedFormat } from "./formats.ts";
import { escapePointerSegment, isJsonNumber, isJsonObject, JsonNumber, type JsonObject, type JsonValue } from "./json-boundary.ts";
import { localRefTarget } from "./local-ref.ts";
import { patternProblem, type PatternProgram } from "./patterns.ts";
import { distinctBranches, jsonNodes, REF_CONTAINER, withReferenced, type AjvSchema } from "./screen-parts.ts";
import { expandedSize, GraphFailure, type ExpandedSize, type SchemaPosition, type SizeCounts, type Step } from "./schema-graph.ts";

export interface SchemaError {
  /** JSON pointer into the schema document ("" is the root). */
  pointer: string;
  detail: string;
}

export const DRAFT07_URIS: readonly string[] = ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"];
/** zod 4 writes the first by default. A schema without `$schema` is draft-07. */
export const DRAFT2020_URIS: readonly string[] = ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"];

// Draft-07 keywords whose 2020-12 meaning differs or that 2020-12 replaced with keywords chatd does
// not implement: refused in a 2020-12 schema, never reinterpreted.
const NOT_IN_2020: Readonly<Record<string, string>> = {
  additionalItems: "additionalItems is not part of draft 2020-12: use items after prefixItems",
  dependencies: "dependencies is not part of draft 2020-12 (dependentRequired and dependentSchemas are not supported)",
};

/** Exact keywords understood by exact-keywords.ts; the ajv schema carries them instead of the originals. */
export const EXACT_KEYWORDS = {
  minimum: "chatdMinimum",
  maximum: "chatdMaximum",
  exclusiveMinimum: "chatdExclusiveMinimum",
  exclusiveMaximum: "chatdExclusiveMaximum",
  multipleOf: "chatdMultipleOf",
} as const;

const FORBIDDEN: Readonly<Record<string, string>> = {
  $id: "$id is not supported: references resolve only as JSON pointers inside this document",
  id: "id is not supported: references resolve only as JSON pointers inside this document",
  $anchor: "$anchor is not supported: refer to the schema with a JSON pointer such as #/$defs/Name",
  $dynamicRef: "$dynamicRef is not supported",
  $dynamicAnchor: "$dynamicAnchor is not supported",
  $recursiveRef: "$recursiveRef is not supported",
  $recursiveAnchor: "$recursiveAnchor is not supported",
};

// What may stand beside a $ref: annotations, the definitions containers and the root's $schema.
// Draft-07 ignores every other keyword there, so a schema that has one does not mean what it says.
const REF_SIBLINGS = new Set(["title", "description", "$comment", "default", "examples", "readOnly", "writeOnly", "$defs", "definitions", "$schema"]);

const PASS_THROUGH = new Set([
  "title",
  "description",
  "$comment",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "contentEncoding",
  "required",
  "maxLength",
  "minLength",
  "maxItems",
  "minItems",
  "maxProperties",
  "minProperties",
]);


/**
 * Plain JS value for ajv. Keys are defined as own data properties so "__proto__" stays an ordinary
 * key; `ordinary` keeps Object.prototype, which ajv's meta-validation (fast-deep-equal) needs.
 */
export function toPlain(v: JsonValue, ordinary = false): unknown {
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map((x) => toPlain(x, ordinary));
  if (isJsonObject(v)) {
    const o = (ordinary ? {} : Object.create(null)) as Record<string, unknown>;
    for (const [k, x] of v) Object.defineProperty(o, k, { value: toPlain(x, ordinary), enumerable: true, writable: true, configurable: true });
    return o;
  }
  return v;
}

export type ScreenResult =
  | { ok: true; ajvSchema: AjvSchema; written: SizeCounts; expanded: ExpandedSize; compiledPatterns: Map<string, PatternProgram> }
  | { ok: false; errors: SchemaError[] };

class ScreenFailure extends Error {
  readonly pointer: string;
  constructor(pointer: string, detail: string) {
    super(detail);
    this.pointer = pointer;
  }
}

const SUBSCHEMA_KEYWORDS = new Set([
  "prefixItems", "$defs", "definitions", "properties", "patternProperties", "additionalProperties", "dependencies", "items", "additionalItems",
  "contains", "propertyNames", "not", "if", "then", "else", "allOf", "anyOf", "oneOf",
]);
const ANY_KEY: Step = { kind: "anyKey" };
const ANY_INDEX: Step = { kind: "anyIndex" };

export function screenSchema(root: JsonObject): ScreenResult {
  const declared = root.get("$schema");
  const draft2020 = typeof declared === "string" && DRAFT2020_URIS.includes(declared);
  let patterns = 0;
  // Each distinct pattern is compiled once per schema, here, and reused by ajv (a 512-character
  // pattern takes ~1.5 ms to compile; the worst schema used to compile each of its 32 twice or more).
  const compiledPatterns = new Map<string, PatternProgram>();
  let branches = 0;
  let maxDepth = 0;

  const countPattern = (pointer: string, position: SchemaPosition): void => {
    position.patterns++;
    if (++patterns > SCHEMA_MAX_PATTERNS) throw new ScreenFailure(pointer, `more than ${SCHEMA_MAX_PATTERNS} patterns`);
  };
  const countBranches = (n: number, pointer: string, position: SchemaPosition): void => {
    position.branches += n;
    branches += n;
    if (branches > SCHEMA_MAX_BRANCHES) {
      throw new ScreenFailure(pointer, `more than ${SCHEMA_MAX_BRANCHES} combinator branches in total`);
    }
  };
  const needObject = (v: JsonValue, pointer: string): JsonObject => {
    if (!isJsonObject(v)) throw new ScreenFailure(pointer, "must be an object");
    return v;
  };
  const needArray = (v: JsonValue, pointer: string): JsonValue[] => {
    if (!Array.isArray(v)) throw new ScreenFailure(pointer, "must be an array");
    return v;
  };

  // Every schema position of the document as written (schema-graph.ts), its screened form, and the
  // references: target pointer -> name under ajv's definitions, and where each was written.
  const positions = new Map<string, SchemaPosition>();
  const screened = new Map<string, AjvSchema>();
  const refNames = new Map<string, string>();
  const refSites: { at: string; target: string; out: { [k: string]: unknown } }[] = [];

  const walk = (node: JsonValue, pointer: string, depth: number): AjvSchema => {
    const position: SchemaPosition = { ownNodes: 1, branches: 0, patterns: 0, edges: [] };
    positions.set(pointer, position);
    if (typeof node === "boolean") {
      screened.set(pointer, node);
      return node;
    }
    if (!isJsonObject(node)) throw new ScreenFailure(pointer, "a schema must be an object or a boolean");
    if (depth > SCHEMA_MAX_DEPTH) throw new ScreenFailure(pointer, `schema nesting deeper than ${SCHEMA_MAX_DEPTH}`);
    if (depth > maxDepth) maxDepth = depth;
    const out: { [k: string]: unknown } = Object.create(null) as { [k: string]: unknown };
    screened.set(pointer, out);
    // A subschema; `step` is what it applies to: the same value (undefined), a child, or nothing
    // validation reaches (a definition, reached only through a $ref).
    const sub = (v: JsonValue, p: string, step: Step | undefined | "definition"): AjvSchema => {
      if (step !== "definition") position.edges.push({ to: p, step });
      return walk(v, p, depth + 1);
    };
    let protoDependency: AjvSchema | undefined;
    const ref = node.get("$ref");
    if (ref !== undefined) {
      for (const k of node.keys()) {
        if (k !== "$ref" && !REF_SIBLINGS.has(k)) {
          throw new ScreenFailure(`${pointer}/${escapePointerSegment(k)}`, `${JSON.stringify(k.slice(0, 64))} beside $ref: draft-07 ignores every keyword next to a $ref; put the $ref and this keyword in an allOf`);
        }
      }
      const at = `${pointer}/$ref`;
      if (typeof ref !== "string") throw new ScreenFailure(at, "must be a string");
      const target = localRefTarget(ref);
      if (!target.ok) throw new ScreenFailure(at, target.detail);
      refSites.push({ at, target: target.pointer, out });
      position.edges.push({ to: target.pointer, step: undefined, refAt: at });
      let name = refNames.get(target.pointer);
      if (name === undefined) {
        name = `chatdRef${refNames.size}`;
        refNames.set(target.pointer, name);
      }
      out.$ref = `#/${REF_CONTAINER}/${name}`;
    }
    for (const [k, v] of node) {
      const p = `${pointer}/${escapePointerSegment(k)}`;
      const forbidden = FORBIDDEN[k] ?? (draft2020 ? NOT_IN_2020[k] : undefined);
      if (forbidden !== undefined) throw new ScreenFailure(p, forbidden);
      if (k === "$ref") {
        position.ownNodes += 1;
        continue;
      }
      if (ref !== undefined && k !== "$defs" && k !== "definitions" && k !== "$schema") {
        // Annotations beside a $ref are not shown to ajv.
        position.ownNodes += jsonNodes(v);
        continue;
      }
      if (PASS_THROUGH.has(k)) {
        position.ownNodes += jsonNodes(v);
        out[k] = toPlain(v);
        continue;
      }
      if (!SUBSCHEMA_KEYWORDS.has(k)) position.ownNodes += jsonNodes(v);
      else if (k !== "$defs" && k !== "definitions" && (isJsonObject(v) || Array.isArray(v))) position.ownNodes += 1;
      switch (k) {
        case "$defs":
        case "definitions":
          for (const [dk, dv] of needObject(v, p)) sub(dv, `${p}/${escapePointerSegment(dk)}`, "definition");
          break;
        case "$schema":
          if (pointer !== "") throw new ScreenFailure(p, "$schema is only allowed at the root");
          if (typeof v !== "string" || !(DRAFT07_URIS.includes(v) || DRAFT2020_URIS.includes(v))) {
            throw new ScreenFailure(p, "$schema must be http://json-schema.org/draft-07/schema# or https://json-schema.org/draft/2020-12/schema");
          }
          break;
        case "discriminator":
          // OpenAPI's hint for the oneOf beside it (Pydantic writes it): no assertion, never shown to ajv.
          break;
        case "prefixItems":
          if (!draft2020) throw new ScreenFailure(p, "prefixItems is a draft 2020-12 keyword: declare $schema https://json-schema.org/draft/2020-12/schema, or use items as an array");
          out.items = needArray(v, p).map((x, i) => sub(x, `${p}/${i}`, { kind: "index", index: i }));
          break;
        case "default":
        case "examples":
          // Annotations with arbitrary data: never shown to ajv, never interpreted.
          break;
        case "type": {
          const types = Array.isArray(v) ? v : [v];
          if (!types.every((t) => typeof t === "string")) throw new ScreenFailure(p, "must be a string or an array of strings");
          const names = types as string[];
          if (names.includes("integer")) {
            const mapped = [...new Set(names.map((t) => (t === "integer" ? "number" : t)))];
            out[k] = Array.isArray(v) ? mapped : "number";
            // "number" beside "integer" already admits every number.
            if (!names.includes("number")) out.chatdInteger = true;
          } else {
            out[k] = toPlain(v);
          }
          break;
        }
        case "enum": {
          const items = needArray(v, p);
          if (items.length > SCHEMA_MAX_ENUM_ITEMS) throw new ScreenFailure(p, `more than ${SCHEMA_MAX_ENUM_ITEMS} enum items`);
          out.chatdEnum = items.map(equalityKey);
          break;
        }
        case "const":
          out.chatdConst = equalityKey(v);
          break;
        case "minimum":
        case "maximum":
        case "exclusiveMinimum":
        case "exclusiveMaximum":
        case "multipleOf": {
          if (!isJsonNumber(v)) throw new ScreenFailure(p, "must be a number");
          if (k === "multipleOf" && (parseDecimal(v.text).neg || parseDecimal(v.text).coef === 0n)) {
            throw new ScreenFailure(p, "must be greater than 0");
          }
          out[EXACT_KEYWORDS[k]] = v.text;
          break;
        }
        case "uniqueItems":
          if (typeof v !== "boolean") throw new ScreenFailure(p, "must be a boolean");
          if (v) out.chatdUniqueItems = true;
          break;
        case "format":
          if (typeof v !== "string") throw new ScreenFailure(p, "must be a string");
          if (ANNOTATION_FORMATS.includes(v)) break;
          if (!isSupportedFormat(v)) throw new ScreenFailure(p, `format ${JSON.stringify(v.slice(0, 64))} is not supported`);
          out[k] = v;
          break;
        case "pattern": {
          if (typeof v !== "string") throw new ScreenFailure(p, "must be a string");
          countPattern(p, position);
          const problem = patternProblem(v, compiledPatterns, true);
          if (problem !== undefined) throw new ScreenFailure(p, problem);
          out[k] = v;
          break;
        }
        case "patternProperties": {
          const o: { [k: string]: unknown } = Object.create(null) as { [k: string]: unknown };
          for (const [pk, pv] of needObject(v, p)) {
            const pp = `${p}/${escapePointerSegment(pk)}`;
            countPattern(pp, position);
            const problem = patternProblem(pk, compiledPatterns, false);
            if (problem !== undefined) throw new ScreenFailure(pp, problem);
            o[pk] = sub(pv, pp, ANY_KEY);
          }
          out[k] = o;
          break;
        }
        case "properties": {
          const o: { [k: string]: unknown } = Object.create(null) as { [k: string]: unknown };
          for (const [pk, pv] of needObject(v, p)) o[pk] = sub(pv, `${p}/${escapePointerSegment(pk)}`, { kind: "name", name: pk });
          out[k] = o;
          break;
        }
        case "dependencies": {
          const o: { [k: string]: unknown } = Object.create(null) as { [k: string]: unknown };
          for (const [dk, dv] of needObject(v, p)) {
            const dp = `${p}/${escapePointerSegment(dk)}`;
            let dep: unknown;
            if (Array.isArray(dv)) {
              position.ownNodes += jsonNodes(dv);
              dep = toPlain(dv);
            } else {
              countBranches(1, dp, position);
              dep = sub(dv, dp, undefined);
            }
            // ajv's dependencies keyword skips a "__proto__" entry (it copies entries into ordinary
            // objects), so that one is handed to ajv as its exact equivalent:
            // if the property is present, then the array's names are required / the schema applies.
            if (dk === "__proto__") protoDependency = { if: { required: ["__proto__"] }, then: Array.isArray(dv) ? { required: dep } : dep };
            else o[dk] = dep;
          }
          out[k] = o;
          break;
        }
        case "additionalProperties":
          out[k] = sub(v, p, ANY_KEY);
          break;
        case "additionalItems":
        case "contains":
          out[k] = sub(v, p, ANY_INDEX);
          break;
        case "propertyNames":
          out[k] = sub(v, p, { kind: "keyString" });
          break;
        case "not":
          out[k] = sub(v, p, undefined);
          break;
        case "if":
        case "then":
        case "else":
          countBranches(1, p, position);
          out[k] = sub(v, p, undefined);
          break;
        case "items":
          if (draft2020) {
            if (Array.isArray(v)) throw new ScreenFailure(p, "in draft 2020-12 items is a schema: tuples use prefixItems");
            // After prefixItems, items applies to the items beyond them (draft-07's additionalItems).
            if (node.has("prefixItems")) out.additionalItems = sub(v, p, ANY_INDEX);
            else out.items = sub(v, p, ANY_INDEX);
            break;
          }
          out[k] = Array.isArray(v) ? v.map((x, i) => sub(x, `${p}/${i}`, { kind: "index", index: i })) : sub(v, p, ANY_INDEX);
          break;
        case "allOf":
        case "anyOf":
        case "oneOf": {
          const items = needArray(v, p);
          countBranches(items.length, p, position);
          const branches = items.map((x, i) => sub(x, `${p}/${i}`, undefined));
          // A repeated allOf/anyOf branch decides nothing its first occurrence does not (feedback shows no
          // schema paths), so ajv gets each distinct branch once: 32 equal branches over 4,000 keys cost one.
          // Not oneOf, where a second match is what fails.
          out[k] = k === "oneOf" ? branches : distinctBranches(branches);
          break;
        }
        default:
          throw new ScreenFailure(p, `unknown keyword ${JSON.stringify(k.slice(0, 64))}`);
      }
    }
    if (protoDependency !== undefined) out.allOf = [...((out.allOf as AjvSchema[] | undefined) ?? []), protoDependency];
    return out;
  };

  try {
    const ajvSchema = walk(root, "", 1);
    for (const { at, target } of refSites) {
      if (!positions.has(target)) throw new ScreenFailure(at, "the reference does not point to a schema in this document (only schema positions, such as #/$defs/Name, can be referred to)");
    }
    const { size: expanded, recursive } = expandedSize(positions);
    const forAjv = withReferenced(ajvSchema, refSites, refNames, screened, recursive);
    return { ok: true, ajvSchema: forAjv, written: { nodes: jsonNodes(root), branches, patterns, depth: maxDepth }, expanded, compiledPatterns };
  } catch (e) {
    if (e instanceof ScreenFailure || e instanceof GraphFailure) return { ok: false, errors: [{ pointer: e.pointer, detail: e.message }] };
    throw e;
  }
}
