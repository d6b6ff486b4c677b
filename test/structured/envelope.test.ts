import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validateResponseFormat } from "../../src/structured/index.ts";

interface Case {
  name: string;
  text: string;
  valid: boolean;
  field?: string;
  sql: boolean;
}

const cases = JSON.parse(readFileSync(new URL("../fixtures/response-format-envelope.json", import.meta.url), "utf8")) as Case[];

test("fixture has the agreed shape", () => {
  assert.ok(cases.length >= 40);
  const names = new Set<string>();
  for (const c of cases) {
    assert.equal(Object.keys(c).sort(), (c.valid ? ["name", "sql", "text", "valid"] : ["field", "name", "sql", "text", "valid"]).sort(), c.name);
    assert.type(c.text, "string");
    assert.type(c.sql, "boolean");
    assert.not.ok(names.has(c.name), `duplicate name ${c.name}`);
    names.add(c.name);
  }
});

test("sql cases are plain JSON without duplicate keys or unusual numbers", () => {
  for (const c of cases.filter((x) => x.sql)) {
    // A jsonb round trip must not change what the envelope says.
    assert.is(JSON.stringify(JSON.parse(c.text)), c.text, c.name);
  }
});

for (const c of cases) {
  test(`envelope: ${c.name}`, () => {
    const r = validateResponseFormat(c.text);
    if (c.valid) {
      assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.errors));
    } else {
      assert.not.ok(r.ok, "expected rejection");
      if (!r.ok) {
        assert.is(r.errors[0]?.field, c.field, JSON.stringify(r.errors));
        assert.ok((r.errors[0]?.detail ?? "").length > 0);
      }
    }
  });
}

test("text format result", () => {
  assert.equal(validateResponseFormat('{"type":"text"}'), { ok: true, format: { type: "text" } });
});

test("json_schema result carries name, description, canonical text and hash", () => {
  const r = validateResponseFormat('{"type":"json_schema","json_schema":{"name":"r","description":"d","schema":{"type":"object","maximum":1e2}}}');
  assert.ok(r.ok);
  if (r.ok && r.format.type === "json_schema") {
    assert.is(r.format.name, "r");
    assert.is(r.format.description, "d");
    assert.is(r.format.schemaText, '{"type": "object", "maximum": 100}');
    assert.match(r.format.schemaSha256, /^[0-9a-f]{64}$/);
  }
});

test("description is omitted when absent", () => {
  const r = validateResponseFormat('{"type":"json_schema","json_schema":{"name":"r","schema":{}}}');
  assert.ok(r.ok && r.format.type === "json_schema" && !("description" in r.format));
});

test("bytes input is accepted and invalid UTF-8 is rejected at response_format", () => {
  assert.ok(validateResponseFormat(new TextEncoder().encode('{"type":"text"}')).ok);
  const r = validateResponseFormat(Uint8Array.from([0x7b, 0xff, 0x7d]));
  assert.not.ok(r.ok);
  if (!r.ok) {
    assert.is(r.errors[0]?.field, "response_format");
    assert.match(r.errors[0]?.detail ?? "", /invalid-utf8/);
  }
});

test("schema content errors name the schema field and the pointer inside it", () => {
  const r = validateResponseFormat('{"type":"json_schema","json_schema":{"name":"r","schema":{"properties":{"a":{"$ref":"#/nowhere"}}}}}');
  assert.not.ok(r.ok);
  if (!r.ok) {
    assert.is(r.errors[0]?.field, "response_format.json_schema.schema");
    assert.match(r.errors[0]?.detail ?? "", "/properties/a/$ref");
  }
});

test.run();
