import { test } from "uvu";
import * as assert from "uvu/assert";
import { validateValue } from "../../src/structured/index.ts";
import { compile, schemaErrors } from "./helpers.ts";

function rejected(schemaText: string, pointer: string, detail?: RegExp): void {
  const errs = schemaErrors(schemaText);
  assert.ok(errs.length > 0, `expected rejection of ${schemaText}`);
  assert.is(errs[0]?.field, pointer, JSON.stringify(errs));
  if (detail) assert.match(errs[0]?.detail ?? "", detail);
}

test("$id, id and non-local $ref are rejected at schema positions", () => {
  rejected('{"$ref":"http://example.com/s.json"}', "/$ref", /only local references/);
  rejected('{"properties":{"a":{"$id":"x"}}}', "/properties/a/$id");
  rejected('{"items":{"id":"x"}}', "/items/id");
  rejected('{"anyOf":[{"type":"string"},{"$ref":"#/definitions/x"}]}', "/anyOf/1/$ref", /does not point to a schema/);
  rejected('{"patternProperties":{"^x":{"$id":"y"}}}', "/patternProperties/^x/$id");
  rejected('{"$defs":{"a":{"$id":"y"}}}', "/$defs/a/$id");
});

test("unknown keywords and vocabularies are rejected", () => {
  rejected('{"strict":true}', "/strict", /unknown keyword/);
  rejected('{"x-order":1}', "/x-order");
  rejected('{"properties":{"a":{"nullable":true}}}', "/properties/a/nullable");
  rejected('{"unevaluatedProperties":false}', "/unevaluatedProperties");
  rejected('{"$vocabulary":{}}', "/$vocabulary");
  rejected('{"dependentSchemas":{}}', "/dependentSchemas");
  rejected('{"deprecated":true}', "/deprecated");
});

test("$schema: only the draft-07 (with or without #) and 2020-12 URIs, only at the root", () => {
  assert.ok(compile('{"$schema":"http://json-schema.org/draft-07/schema#"}'));
  assert.ok(compile('{"$schema":"http://json-schema.org/draft-07/schema"}'));
  assert.ok(compile('{"$schema":"https://json-schema.org/draft/2020-12/schema"}'));
  rejected('{"$schema":"https://json-schema.org/draft/2019-09/schema"}', "/$schema");
  rejected('{"$schema":"http://json-schema.org/draft-04/schema#"}', "/$schema");
  rejected('{"$schema":"https://json-schema.org/draft-07/schema#"}', "/$schema");
  rejected('{"properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}', "/properties/a/$schema");
});

test("forbidden words are fine as property names and inside const, enum, default, examples", () => {
  const s = compile(`{"type":"object",
    "properties":{
      "$ref":{"type":"string"}, "$id":{"const":{"$ref":"http://example.com/evil.json","$id":"http://json-schema.org/draft-07/schema#"}},
      "definitions":{"enum":[{"$ref":"#"},{"$schema":"http://json-schema.org/draft-07/schema#"}]},
      "$schema":{"default":{"$ref":"#/definitions/x"},"examples":[{"$defs":{"a":{"$ref":"#"}}}]},
      "id":{"type":"integer"}
    },
    "required":["$ref","$id"],
    "default":{"$ref":"#"},
    "examples":[{"$ref":"x"}]}`);
  assert.ok(validateValue(s, '{"$ref":"#","$id":{"$id":"http://json-schema.org/draft-07/schema#","$ref":"http://example.com/evil.json"}}').ok);
  assert.not.ok(validateValue(s, '{"$ref":"#","$id":{"$ref":"#"}}').ok);
  assert.ok(validateValue(s, '{"$ref":"a","$id":{"$ref":"http://example.com/evil.json","$id":"http://json-schema.org/draft-07/schema#"},"definitions":{"$ref":"#"}}').ok);
  assert.not.ok(validateValue(s, '{"$ref":"a","$id":{"$ref":"http://example.com/evil.json","$id":"http://json-schema.org/draft-07/schema#"},"definitions":{"$ref":"y"}}').ok);
  // A default is never applied and never loaded.
  const r = validateValue(s, '{"$ref":"a","$id":{"$ref":"http://example.com/evil.json","$id":"http://json-schema.org/draft-07/schema#"}}');
  assert.ok(r.ok);
  if (r.ok) assert.not.match(r.canonicalText, "$schema");
});

test("a property named like a keyword does not shadow the keyword", () => {
  const s = compile('{"properties":{"type":{"type":"number"},"maximum":{"maximum":1}},"maximum":5}');
  assert.ok(validateValue(s, '{"type": 1, "maximum": 0}').ok);
  assert.not.ok(validateValue(s, '{"type": "x"}').ok);
  assert.not.ok(validateValue(s, '{"maximum": 2}').ok);
});

test("__proto__ and constructor in values and schemas", () => {
  const s = compile('{"type":"object","properties":{"constructor":{"type":"integer"},"a":{}},"required":["__proto__"],"additionalProperties":false,"patternProperties":{"^_":{"type":"string"}}}');
  assert.ok(validateValue(s, '{"__proto__":"x","constructor":1}').ok);
  assert.not.ok(validateValue(s, '{"__proto__":1}').ok);
  assert.not.ok(validateValue(s, '{"constructor":1}').ok);
  assert.not.ok(validateValue(s, '{"__proto__":"x","constructor":"1"}').ok);
  assert.not.ok(validateValue(s, '{"__proto__":"x","toString":1}').ok);
  const closed = compile('{"type":"object","additionalProperties":false}');
  assert.not.ok(validateValue(closed, '{"__proto__":{}}').ok);
});

test("__proto__ is an ordinary property name in properties, patternProperties and dependencies", () => {
  const props = compile('{"properties":{"__proto__":{"type":"string"},"toString":{"type":"integer"}},"additionalProperties":false}');
  assert.ok(validateValue(props, '{"__proto__":"x","toString":1}').ok);
  assert.not.ok(validateValue(props, '{"__proto__":1}').ok);
  assert.not.ok(validateValue(props, '{"toString":"1"}').ok);
  assert.not.ok(validateValue(props, '{"valueOf":1}').ok);
  const pattern = compile('{"patternProperties":{"__proto__":{"type":"string"}},"additionalProperties":false}');
  assert.ok(validateValue(pattern, '{"x__proto__y":"s"}').ok);
  assert.not.ok(validateValue(pattern, '{"__proto__":1}').ok);
  assert.not.ok(validateValue(pattern, '{"other":"s"}').ok);
  const arrayDep = compile('{"dependencies":{"__proto__":["a"],"b":["c"]}}');
  assert.ok(validateValue(arrayDep, '{"__proto__":1,"a":2}').ok);
  assert.ok(validateValue(arrayDep, '{"a":2}').ok);
  assert.not.ok(validateValue(arrayDep, '{"__proto__":1}').ok);
  assert.not.ok(validateValue(arrayDep, '{"b":1}').ok);
  const schemaDep = compile('{"allOf":[{"minProperties":1}],"dependencies":{"__proto__":{"required":["z"]}}}');
  assert.ok(validateValue(schemaDep, '{"z":1,"__proto__":0}').ok);
  assert.ok(validateValue(schemaDep, '{"y":1}').ok);
  assert.not.ok(validateValue(schemaDep, '{"__proto__":0}').ok);
  assert.not.ok(validateValue(schemaDep, "{}").ok, "the schema's own allOf still applies");
});

test("formats: the design list is accepted, regex and everything else rejected", () => {
  for (const f of ["date", "time", "date-time", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uri-template", "json-pointer", "relative-json-pointer", "uuid"]) {
    assert.ok(compile(`{"type":"string","format":"${f}"}`), f);
  }
  for (const f of ["regex", "url", "byte", "int32", "iso-date-time", "idn-email", "iri", "nope", ""]) {
    rejected(`{"format":"${f}"}`, "/format", /not supported/);
  }
});

test("patterns RE2 cannot compile are schema errors naming the field", () => {
  rejected('{"pattern":"(?=a)"}', "/pattern", /RE2/);
  rejected('{"pattern":"(a)\\\\1"}', "/pattern", /RE2/);
  rejected('{"properties":{"a":{"pattern":"(?<=a)b"}}}', "/properties/a/pattern", /RE2/);
  rejected('{"patternProperties":{"(?!x)":{}}}', "/patternProperties/(?!x)", /RE2/);
  rejected('{"pattern":"a{1001}"}', "/pattern", /RE2/);
  rejected('{"pattern":"("}', "/pattern", /RE2/);
});

test("structurally wrong keyword values are schema errors", () => {
  rejected('{"properties":[]}', "/properties");
  rejected('{"allOf":{}}', "/allOf");
  rejected('{"items":[1]}', "/items/0");
  rejected('{"minimum":"1"}', "/minimum");
  rejected('{"multipleOf":0}', "/multipleOf");
  rejected('{"multipleOf":-1}', "/multipleOf");
  rejected('{"type":"strin"}', "/type");
  rejected('{"maxLength":-1}', "/maxLength");
  rejected('{"required":"a"}', "/required");
  rejected('{"uniqueItems":1}', "/uniqueItems");
});

test("non-object schema documents are rejected", () => {
  assert.is(schemaErrors("true")[0]?.field, "");
  assert.is(schemaErrors("[]")[0]?.field, "");
});

test("draft-07 applicators work", () => {
  const s = compile(`{"type":"object",
    "properties":{"kind":{"enum":["a","b"]},"n":{"type":"integer"}},
    "if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["n"]},"else":{"not":{"required":["n"]}},
    "dependencies":{"x":["kind"],"y":{"required":["n"]}},
    "propertyNames":{"maxLength":4},
    "patternProperties":{"^z":{"type":"boolean"}}}`);
  assert.ok(validateValue(s, '{"kind":"a","n":1}').ok);
  assert.not.ok(validateValue(s, '{"kind":"a"}').ok);
  assert.not.ok(validateValue(s, '{"kind":"b","n":1}').ok);
  assert.not.ok(validateValue(s, '{"x":1}').ok);
  assert.not.ok(validateValue(s, '{"kind":"b","y":1}').ok);
  assert.not.ok(validateValue(s, '{"kind":"b","toolong":1}').ok);
  assert.not.ok(validateValue(s, '{"kind":"b","zz":1}').ok);
  assert.ok(validateValue(s, '{"kind":"b","zz":true}').ok);
});



test("repeated allOf/anyOf branches decide as written; repeated oneOf branches still count twice", () => {
  const allOf = compile('{"allOf":[{"minimum":1},{"minimum":1},{"maximum":5},{"minimum":1}]}');
  assert.ok(validateValue(allOf, "3").ok);
  assert.not.ok(validateValue(allOf, "0").ok);
  assert.not.ok(validateValue(allOf, "6").ok);
  const anyOf = compile('{"anyOf":[{"type":"string"},{"type":"string"},{"minimum":10}]}');
  assert.ok(validateValue(anyOf, '"x"').ok);
  assert.ok(validateValue(anyOf, "10").ok);
  assert.not.ok(validateValue(anyOf, "9").ok);
  const oneOf = compile('{"oneOf":[{"type":"string"},{"type":"string"}]}');
  assert.not.ok(validateValue(oneOf, '"x"').ok, "two branches match");
});
test("unknown keywords are refused at every schema position (ajv's strict mode is off; the screen decides)", () => {
  const X = '{"nope":1}';
  const positions: [string, string][] = [
    [`{"properties":{"a":${X}}}`, "/properties/a/nope"], [`{"patternProperties":{"^x":${X}}}`, "/patternProperties/^x/nope"],
    [`{"additionalProperties":${X}}`, "/additionalProperties/nope"], [`{"propertyNames":${X}}`, "/propertyNames/nope"],
    [`{"dependencies":{"a":${X}}}`, "/dependencies/a/nope"], [`{"items":${X}}`, "/items/nope"], [`{"items":[{},${X}]}`, "/items/1/nope"],
    [`{"additionalItems":${X}}`, "/additionalItems/nope"], [`{"contains":${X}}`, "/contains/nope"], [`{"not":${X}}`, "/not/nope"],
    [`{"if":${X}}`, "/if/nope"], [`{"then":${X}}`, "/then/nope"], [`{"else":${X}}`, "/else/nope"],
    [`{"allOf":[{},${X}]}`, "/allOf/1/nope"], [`{"anyOf":[${X}]}`, "/anyOf/0/nope"], [`{"oneOf":[${X}]}`, "/oneOf/0/nope"],
    [X, "/nope"],
  ];
  for (const [schema, pointer] of positions) rejected(schema, pointer, /unknown keyword "nope"/);
});

test.run();
