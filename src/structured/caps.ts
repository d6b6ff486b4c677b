// Fixed resource caps. The figures and the measurements behind them are in README.md ("Caps").

export const SCHEMA_MAX_BYTES = 64 * 1024;
/** Nesting of subschemas; the root schema is at depth 1. */
export const SCHEMA_MAX_DEPTH = 32;
/** JSON nesting of the schema document (each schema level costs up to 3 JSON levels, e.g. properties/x). */
export const SCHEMA_MAX_JSON_DEPTH = 128;
export const SCHEMA_MAX_NODES = 16_384;
/** allOf/anyOf/oneOf items, schema-form dependencies and each of if/then/else, summed over the schema. */
export const SCHEMA_MAX_BRANCHES = 64;
/** pattern keywords plus patternProperties keys. */
export const SCHEMA_MAX_PATTERNS = 32;
/** In UTF-16 code units, as written in the schema. */
export const SCHEMA_MAX_PATTERN_LENGTH = 512;
export const SCHEMA_MAX_ENUM_ITEMS = 1024;

/** UTF-8 bytes of the value's stored text (`jsonb::text`, what `valueJson` returns), not of what was sent. */
export const VALUE_MAX_BYTES = 256 * 1024;
/**
 * What may be sent: a value's JSON text (a `chatd schema validate` line) or the finalizer's whole
 * arguments, wrapper included. A transport bound: a value at the stored cap, sent as it is stored,
 * always fits (with the wrapper's 11 bytes); the stored size is then what decides (validate.ts). It
 * also bounds what a rejected attempt may leave in the transcript.
 */
export const VALUE_INPUT_MAX_BYTES = VALUE_MAX_BYTES + 64;
/** Container nesting: a scalar is at depth 0, `[]` at depth 1. */
export const VALUE_MAX_DEPTH = 64;
/** Every value counts one node (scalars, arrays, objects); object keys do not count. */
export const VALUE_MAX_NODES = 16_384;

export const NUMBER_MAX_LITERAL_LENGTH = 64;
/** Written exponent bound; keeps zero literals like 0e-99999 printable (PostgreSQL rejects beyond 1000). */
export const NUMBER_MAX_EXPONENT = 400;

/** Compiled validators kept in memory. */
export const COMPILE_CACHE_SIZE = 256;

export const FEEDBACK_MAX_ERRORS = 8;
export const FEEDBACK_MAX_BYTES = 2048;

export interface JsonLimits {
  maxBytes: number;
  maxDepth: number;
  maxNodes: number;
}

/** parseJsonSafe's default: a stored value read back (its text is at most VALUE_MAX_BYTES). */
export const VALUE_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxBytes: VALUE_MAX_BYTES,
  maxDepth: VALUE_MAX_DEPTH,
  maxNodes: VALUE_MAX_NODES,
});

/** The envelope wraps the schema in two objects, hence the small allowances. */
export const ENVELOPE_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxBytes: SCHEMA_MAX_BYTES + 2048,
  maxDepth: SCHEMA_MAX_JSON_DEPTH + 2,
  maxNodes: SCHEMA_MAX_NODES + 8,
});

/** A value as sent; its stored size is checked after parsing (validate.ts). */
export const VALUE_INPUT_LIMITS: Readonly<JsonLimits> = Object.freeze({ ...VALUE_LIMITS, maxBytes: VALUE_INPUT_MAX_BYTES });

export const SCHEMA_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxBytes: SCHEMA_MAX_BYTES,
  maxDepth: SCHEMA_MAX_JSON_DEPTH,
  maxNodes: SCHEMA_MAX_NODES,
});
