import dns from "node:dns";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import tls from "node:tls";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { clearCompileCache } from "../../src/structured/compile.ts";
import { compileSchema, parseJsonSafe, SCHEMA_LIMITS, validateResponseFormat, validateValue } from "../../src/structured/index.ts";

type Target = Record<string, unknown>;

const touched: string[] = [];
const restore: (() => void)[] = [];

function trap(obj: object, name: string, label: string): void {
  const target = obj as Target;
  const original = target[name];
  if (typeof original !== "function") return;
  target[name] = function trapped(): never {
    touched.push(label);
    throw new Error(`hermeticity violation: ${label}`);
  };
  restore.push(() => {
    target[name] = original;
  });
}

function armTraps(): void {
  for (const n of ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny"]) trap(dns, n, `dns.${n}`);
  for (const n of ["lookup", "resolve", "resolve4", "resolve6"]) trap(dns.promises, n, `dns.promises.${n}`);
  for (const n of ["connect", "createConnection"]) trap(net, n, `net.${n}`);
  trap(net.Socket.prototype, "connect", "net.Socket#connect");
  trap(tls, "connect", "tls.connect");
  for (const n of ["request", "get"]) {
    trap(http, n, `http.${n}`);
    trap(https, n, `https.${n}`);
  }
  trap(globalThis, "fetch", "fetch");
  for (const n of ["readFileSync", "readFile", "openSync", "open", "existsSync", "statSync", "stat", "readdirSync", "createReadStream", "accessSync"]) trap(fs, n, `fs.${n}`);
  for (const n of ["readFile", "open", "stat", "readdir", "access"]) trap(fs.promises, n, `fs.promises.${n}`);
  syncBuiltinESMExports();
}

function disarm(): void {
  while (restore.length > 0) restore.pop()?.();
  syncBuiltinESMExports();
}

const hostileEnvelopes = [
  { $ref: "http://127.0.0.1:9/schema.json" },
  { $ref: "https://example.com/evil#/definitions/x" },
  { $ref: "file:///etc/passwd" },
  { $id: "http://example.com/root", properties: { a: { $ref: "#" } } },
  { $schema: "https://json-schema.org/draft/2020-12/schema", $defs: { a: { prefixItems: [{ $ref: "#" }] } }, items: { $ref: "#/$defs/a" } },
  { $schema: "https://json-schema.org/draft/2019-09/schema" },
  { $schema: "http://example.com/my-meta" },
  { allOf: [{ $ref: "schema.json" }] },
  { definitions: { a: { $ref: "http://x/y" } } },
  { $defs: { a: { $ref: "#a" }, b: { $anchor: "a" } } },
  { $defs: { n: { properties: { next: { $ref: "#/$defs/n" }, u: { format: "uri" } } } }, $ref: "#/$defs/n" },
  { definitions: { "http:~1~1127.0.0.1:9~1x": { type: "string" } }, items: { $ref: "#/definitions/http:~01~01127.0.0.1:9~01x" } },
  { format: "regex" },
  { type: "object", properties: { u: { type: "string", format: "uri" }, h: { format: "hostname" }, e: { format: "email" } } },
  { type: "object", properties: { $ref: { const: { $ref: "http://127.0.0.1:9/x" } }, x: { enum: [{ $id: "http://json-schema.org/draft-07/schema#" }] } } },
  { $schema: "http://json-schema.org/draft-07/schema#", default: { $ref: "http://127.0.0.1:9/" }, examples: [{ $schema: "http://json-schema.org/draft-07/schema#" }] },
  { pattern: "^(a+)+$", patternProperties: { "^\\p{L}+$": { type: "string" } } },
];

test("compile and validate of hostile schemas touch no network, DNS or filesystem", () => {
  clearCompileCache();
  armTraps();
  const outcomes: boolean[] = [];
  try {
    for (const schema of hostileEnvelopes) {
      const envText = JSON.stringify({ type: "json_schema", json_schema: { name: "h", schema } });
      const r = validateResponseFormat(envText);
      outcomes.push(r.ok);
      const parsed = parseJsonSafe(JSON.stringify(schema), SCHEMA_LIMITS);
      if (!parsed.ok) continue;
      const c = compileSchema(parsed.value);
      if (!c.ok) continue;
      for (const v of ['{"u":"http://127.0.0.1:9/","h":"localhost","e":"a@example.com"}', '{"$ref":{"$ref":"http://127.0.0.1:9/x"}}', '"aaaa!"', "null", '{"a":1,"a":2}']) {
        validateValue(c.validator, v);
      }
    }
  } finally {
    disarm();
  }
  assert.equal(touched, []);
  // Both kinds ran: some schemas were accepted and compiled, others rejected.
  assert.ok(outcomes.includes(true) && outcomes.includes(false));
});

test("the traps themselves work", () => {
  armTraps();
  let caught = false;
  try {
    fs.readFileSync("/etc/hostname");
  } catch {
    caught = true;
  } finally {
    disarm();
  }
  assert.ok(caught);
  assert.equal(touched.splice(0), ["fs.readFileSync"]);
});

test.run();
