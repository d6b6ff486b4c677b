import fc from "fast-check";
import { canonicalJson, compileSchema, jsonEquals, parseJsonSafe, storedByteLength, validateResponseFormat, validateValue, type JsonValue } from "../../src/structured/index.ts";
import { jsonText } from "./arbitraries.ts";

const schemaFragments = fc.constantFrom(
  '{"type":"integer","maximum":9007199254740992}',
  '{"multipleOf":0.01}',
  '{"enum":[1,"a",null,{"b":[1.0]}]}',
  '{"type":"array","uniqueItems":true,"items":{"type":["number","string"]}}',
  '{"type":"object","additionalProperties":{"type":"string","pattern":"^(a+)+$"}}',
  '{"anyOf":[{"type":"string","format":"email"},{"type":"string","format":"date-time"},{"const":1e2}]}',
  '{"properties":{"$ref":{"const":{"$ref":"#"}}},"required":["$ref"]}',
  '{"$ref":"#"}',
  '{"format":"regex"}',
  '{"not":{"type":"null"}}',
);

/** Throws (failing the run) on any crash or inconsistency. */
export function checkProperties(numRuns: number): void {
  // Arbitrary text, including broken JSON: the boundary answers, never throws.
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: "binary" }), jsonText, jsonText.map((t) => t.slice(0, Math.floor(t.length / 2)))), (text) => {
      const r = parseJsonSafe(text);
      if (!r.ok) return typeof r.error.rule === "string" && r.error.pointer.startsWith("/") !== (r.error.pointer === "");
      // Canonical text is itself accepted and denotes the same value.
      const again = parseJsonSafe(canonicalJson(r.value));
      // The stored size computed without the text is the text's size.
      if (storedByteLength(r.value) !== Buffer.byteLength(canonicalJson(r.value), "utf8")) return false;
      return again.ok && jsonEquals(again.value, r.value) && canonicalJson(again.value) === canonicalJson(r.value);
    }),
    { numRuns },
  );
  // Bytes: invalid UTF-8 is an answer, not an exception.
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const r = parseJsonSafe(bytes);
      return r.ok || r.error.rule.length > 0;
    }),
    { numRuns },
  );
  // Envelopes around arbitrary schema text: a verdict with a field, never a crash.
  fc.assert(
    fc.property(fc.oneof(jsonText, schemaFragments), (schema) => {
      const r = validateResponseFormat(`{"type":"json_schema","json_schema":{"name":"p","schema":${schema}}}`);
      return r.ok || (r.errors.length > 0 && r.errors.every((e) => e.field.startsWith("response_format")));
    }),
    { numRuns },
  );
  // Validation of arbitrary values: success returns the exact value; failure is bounded feedback.
  fc.assert(
    fc.property(schemaFragments, jsonText, (schemaText, valueText) => {
      const s = parseJsonSafe(schemaText);
      if (!s.ok) return false;
      const c = compileSchema(s.value);
      if (!c.ok) return true;
      const r = validateValue(c.validator, valueText);
      if (r.ok) {
        const original = parseJsonSafe(valueText);
        return original.ok && jsonEquals(original.value as JsonValue, r.value) && r.canonicalText === canonicalJson(r.value);
      }
      return r.errors.length >= 1 && r.errors.length <= 8 && Buffer.byteLength(r.feedback) <= 2048;
    }),
    { numRuns },
  );
}
