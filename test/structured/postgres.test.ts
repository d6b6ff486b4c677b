// Round trips against the real PostgreSQL: our canonical text must be exactly what jsonb prints,
// and what jsonb prints must parse back to the same exact value.
import fc from "fast-check";
import type pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { canonicalJson, jsonEquals, parseJsonSafe, sha256Hex, validateResponseFormat } from "../../src/structured/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { jsonText, numberLiteral } from "./arbitraries.ts";

// The suite's own database (a clone for this file, from the runner: test/support/db.ts), never a guessed server.
let database: TestDatabase | undefined;
let client: pg.PoolClient | undefined;

async function db(): Promise<pg.PoolClient> {
  if (client !== undefined) return client;
  database = await createTestDatabase();
  client = await database.pool.connect();
  return client;
}

async function roundTrip(text: string): Promise<void> {
  const parsed = parseJsonSafe(text);
  if (!parsed.ok) return;
  const ours = canonicalJson(parsed.value);
  const c = await db();
  const r = await c.query<{ pgtext: string; same: boolean; sha: string }>(
    "select ($1::jsonb)::text as pgtext, $1::jsonb = $2::jsonb as same, encode(sha256(convert_to(($1::jsonb)::text, 'UTF8')), 'hex') as sha",
    [text, ours],
  );
  const row = r.rows[0];
  assert.ok(row !== undefined);
  assert.is(ours, row.pgtext, `canonical text differs for ${text}`);
  assert.ok(row.same, `jsonb values differ for ${text}`);
  assert.is(sha256Hex(ours), row.sha);
  const back = parseJsonSafe(row.pgtext);
  assert.ok(back.ok, `PostgreSQL output does not parse: ${row.pgtext.slice(0, 200)}`);
  if (back.ok) {
    assert.ok(jsonEquals(back.value, parsed.value), `value changed through jsonb: ${text}`);
    assert.is(canonicalJson(back.value), ours);
  }
}

test("documented number normalizations match PostgreSQL", async () => {
  for (const t of ["[1e2, 1.0, 1E+2, 0.10, -0, 1e-3, -0.0, 12.500e1, 0.000e-5, 1e63, -1e-62, 0e-62, 9007199254740993]"]) {
    await roundTrip(t);
  }
});

test("strings, escapes and key order match PostgreSQL", async () => {
  await roundTrip('{"b":1,"aa":2,"a":3,"\\u0001x":"\\u007f\\u001f\\t\\n\\b\\f\\r/\\\\\\"\u00e9\u2028\\ud83d\\ude00","\uff61":0,"\u00e9x":1,"\u{1F600}":2}');
});

test("fast-check: accepted JSON round-trips exactly through jsonb", async () => {
  await fc.assert(fc.asyncProperty(jsonText, roundTrip), { numRuns: 300 });
});

test("fast-check: number literals print exactly as numeric", async () => {
  await fc.assert(fc.asyncProperty(fc.array(numberLiteral, { minLength: 1, maxLength: 20 }), (ns) => roundTrip(`[${ns.join(",")}]`)), { numRuns: 150 });
});

test("fast-check: schema hash equals sha256 of jsonb::text", async () => {
  const c = await db();
  await fc.assert(
    fc.asyncProperty(jsonText, async (desc) => {
      const env = `{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","properties":{"x":{"default":${desc}}}}}}`;
      const r = validateResponseFormat(env);
      if (!r.ok || r.format.type !== "json_schema") return;
      const schemaJson = `{"type":"object","properties":{"x":{"default":${desc}}}}`;
      const q = await c.query<{ sha: string; t: string }>("select encode(sha256(convert_to(($1::jsonb)::text,'UTF8')),'hex') as sha, ($1::jsonb)::text as t", [schemaJson]);
      assert.is(r.format.schemaText, q.rows[0]?.t);
      assert.is(r.format.schemaSha256, q.rows[0]?.sha);
    }),
    { numRuns: 100 },
  );
});

test.after(async () => {
  client?.release();
  await database?.drop();
});

test.run();
