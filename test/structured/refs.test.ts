// Local references: what resolves, what is refused (with its field), and the caps counted on what
// validation reaches through `$ref` (each at N and N + 1).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SCHEMA_MAX_BRANCHES, SCHEMA_MAX_DEPTH, SCHEMA_MAX_NODES, SCHEMA_MAX_PATTERNS, validateValue } from "../../src/structured/index.ts";
import { screenSchema } from "../../src/structured/schema-screen.ts";
import { compile, parse, schemaErrors } from "./helpers.ts";

function refused(schemaText: string, field: string, detail: RegExp): void {
  const errs = schemaErrors(schemaText);
  assert.ok(errs.length > 0, `expected refusal: ${schemaText.slice(0, 120)}`);
  assert.is(errs[0]?.field, field, JSON.stringify(errs));
  assert.match(errs[0]?.detail ?? "", detail);
}

function verdicts(schemaText: string, values: string[]): boolean[] {
  const v = compile(schemaText);
  return values.map((x) => validateValue(v, x).ok);
}

test("#/$defs, #/definitions and # resolve, with ~0, ~1 and percent-escapes", () => {
  assert.equal(verdicts('{"$defs":{"A":{"type":"integer"}},"items":{"$ref":"#/$defs/A"}}', ["[1,2]", '[1,"x"]']), [true, false]);
  assert.equal(verdicts('{"definitions":{"A":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/A"}}}', ['{"a":"x"}', '{"a":1}']), [true, false]);
  assert.equal(verdicts('{"$defs":{"a/b~c d%":{"minimum":3}},"$ref":"#/$defs/a~1b~0c%20d%25"}', ["3", "2"]), [true, false]);
  assert.equal(verdicts('{"properties":{"n":{"type":"integer"},"next":{"$ref":"#"}},"required":["n"]}', ['{"n":1,"next":{"n":2}}', '{"n":1,"next":{}}']), [true, false]);
  // A reference to a reference, and $defs below the root.
  assert.equal(verdicts('{"properties":{"x":{"$defs":{"B":{"$ref":"#/$defs/A"}},"$ref":"#/properties/x/$defs/B"}},"$defs":{"A":{"const":1}}}', ['{"x":1}', '{"x":2}']), [true, false]);
  // Annotations beside a $ref are fine.
  assert.ok(compile('{"$defs":{"A":{}},"properties":{"a":{"$ref":"#/$defs/A","title":"t","description":"d","default":1,"examples":[2],"$comment":"c"}}}'));
});

test("recursive schemas validate to the value's own depth", () => {
  const tree = '{"$defs":{"Node":{"type":"object","properties":{"v":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/Node"}';
  const deep = (d: number, leaf: string): string => '{"v":1,"children":['.repeat(d) + leaf + "]}".repeat(d);
  assert.equal(verdicts(tree, [deep(30, '{"v":2}'), deep(30, '{"v":"x"}'), deep(30, '{"v":2,"w":0}')]), [true, false, false]);
  // A binary tree refers to the root twice, once per child: one application per value node.
  const binary = '{"properties":{"l":{"$ref":"#"},"r":{"$ref":"#"},"v":{"type":"number"}}}';
  const v = compile(binary);
  assert.ok(v.size.expanded.perValueNode <= v.size.written.nodes);
  assert.equal(verdicts(binary, ['{"l":{"r":{"l":{"v":1}}}}', '{"l":{"r":{"l":{"v":"1"}}}}']), [true, false]);
});

test("refused references name their field", () => {
  refused('{"properties":{"a":{"$ref":"http://example.com/s.json#/x"}}}', "/properties/a/$ref", /only local references/);
  refused('{"$ref":"other.json"}', "/$ref", /only local references/);
  refused('{"$ref":"/abs#/x"}', "/$ref", /only local references/);
  refused('{"$defs":{"a":{"$anchor":"A"}},"$ref":"#A"}', "/$ref", /plain-name fragments/);
  refused('{"$defs":{"a":{"$anchor":"A"}}}', "/$defs/a/$anchor", /\$anchor is not supported/);
  refused('{"$dynamicRef":"#x"}', "/$dynamicRef", /not supported/);
  refused('{"$defs":{"a":{"$id":"http://x/a"}},"items":{"$ref":"http://x/a"}}', "/$defs/a/$id", /\$id is not supported/);
  refused('{"items":{"$ref":"#/$defs/missing"}}', "/items/$ref", /does not point to a schema/);
  // Non-schema positions: a container, data, a keyword's value.
  refused('{"$defs":{"A":{}},"items":{"$ref":"#/$defs"}}', "/items/$ref", /does not point to a schema/);
  refused('{"enum":[{}],"items":{"$ref":"#/enum/0"}}', "/items/$ref", /does not point to a schema/);
  refused('{"properties":{"a":{}},"items":{"$ref":"#/properties"}}', "/items/$ref", /does not point to a schema/);
  refused('{"default":{"x":{}},"items":{"$ref":"#/default/x"}}', "/items/$ref", /does not point to a schema/);
  refused('{"items":{"$ref":"#/items/~2"}}', "/items/$ref", /not a valid JSON pointer/);
  refused('{"items":{"$ref":"#/%zz"}}', "/items/$ref", /percent-encoding/);
  refused('{"items":{"$ref":1}}', "/items/$ref", /must be a string/);
  // Validation keywords beside a $ref (draft-07 ignores them) are refused at that keyword.
  refused('{"$defs":{"A":{}},"properties":{"a":{"$ref":"#/$defs/A","maxLength":2}}}', "/properties/a/maxLength", /beside \$ref/);
  refused('{"$defs":{"A":{}},"$ref":"#/$defs/A","type":"object"}', "/type", /beside \$ref/);
});

test("a $ref cycle that never steps into the value is refused; one that does is fine", () => {
  refused('{"$ref":"#"}', "/$ref", /never steps into the value/);
  refused('{"allOf":[{"$ref":"#"}]}', "/allOf/0/$ref", /never steps into the value/);
  refused('{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/B"}]},"B":{"not":{"$ref":"#/$defs/A"}}},"items":{"$ref":"#/$defs/A"}}', "/$defs/B/not/$ref", /never steps into the value/);
  refused('{"$defs":{"A":{"if":{"$ref":"#/$defs/A"}}},"$ref":"#/$defs/A"}', "/$defs/A/if/$ref", /never steps into the value/);
  refused('{"$defs":{"A":{"dependencies":{"x":{"$ref":"#/$defs/A"}}}},"$ref":"#/$defs/A"}', "/$defs/A/dependencies/x/$ref", /never steps into the value/);
  assert.ok(compile('{"$defs":{"A":{"anyOf":[{"type":"null"},{"items":{"$ref":"#/$defs/A"}}]}},"$ref":"#/$defs/A"}'));
});

const refs = (target: string, n: number): string => Array(n).fill(`{"$ref":"${target}"}`).join(",");

test("branches through $ref: cap passes, cap + 1 fails (each use counts its target)", () => {
  // 8 uses of a 7-branch anyOf: 8 + 56 = 64 branches reached, 15 written.
  const schema = (extra: string): string => `{"$defs":{"B":{"anyOf":[${Array(7).fill("{}").join(",")}]}},"allOf":[${refs("#/$defs/B", 8)}]${extra}}`;
  const v = compile(schema(""));
  assert.is(v.size.written.branches, 15);
  assert.is(v.size.expanded.branches, SCHEMA_MAX_BRANCHES);
  refused(schema(',"if":{}'), "/allOf/7/$ref", /more than 64 combinator branches/);
  // A reference used in each of 8 branches of each of 8 branches of each of 8 branches.
  refused(`{"$defs":{"A":{"anyOf":[${refs("#/$defs/B", 8)}]},"B":{"anyOf":[${refs("#/$defs/C", 8)}]},"C":{"anyOf":[{},{}]}},"$ref":"#/$defs/A"}`, "/$defs/B/anyOf/0/$ref", /combinator branches/);
});

test("patterns through $ref: cap passes, cap + 1 fails", () => {
  const schema = (n: number): string => `{"$defs":{"P":{"pattern":"^a"}},"allOf":[${refs("#/$defs/P", n)}]}`;
  const v = compile(schema(SCHEMA_MAX_PATTERNS));
  assert.is(v.size.written.patterns, 1);
  assert.is(v.size.expanded.patterns, SCHEMA_MAX_PATTERNS);
  refused(schema(SCHEMA_MAX_PATTERNS + 1), `/allOf/${SCHEMA_MAX_PATTERNS}/$ref`, /more than 32 patterns/);
});

test("nodes through $ref: cap passes, cap + 1 fails", () => {
  // 16 uses of a 1,021-node definition: expanded = 2 (root, allOf) + 16 x (2 + 1,021) + padding.
  const schema = (pad: number): string =>
    `{"$defs":{"E":{"enum":[${Array.from({ length: 1019 }, (_, i) => i).join(",")}]}},"allOf":[${refs("#/$defs/E", 16)}],"required":[${Array.from({ length: pad }, (_, i) => `"r${i}"`).join(",")}]}`;
  const base = compile(schema(0)).size.expanded.nodes;
  const pad = SCHEMA_MAX_NODES - base;
  const v = compile(schema(pad));
  assert.is(v.size.expanded.nodes, SCHEMA_MAX_NODES);
  assert.ok(v.size.written.nodes < 2000);
  refused(schema(pad + 1), "/allOf/15/$ref", /more than 16384 schema nodes/);
});

test("depth through $ref: cap passes, cap + 1 fails (a $ref counts one level)", () => {
  // d_i = {"not": {"$ref": d_(i-1)}}: each definition adds two levels when expanded.
  const schema = (leaf: string): string => {
    const defs = [`"d0":${leaf}`];
    for (let i = 1; i <= 15; i++) defs.push(`"d${i}":{"not":{"$ref":"#/$defs/d${i - 1}"}}`);
    return `{"$defs":{${defs.join(",")}},"$ref":"#/$defs/d15"}`;
  };
  const v = compile(schema("{}"));
  assert.is(v.size.expanded.depth, SCHEMA_MAX_DEPTH);
  assert.is(v.size.written.depth, 3);
  refused(schema('{"not":{}}'), "/$defs/d1/not/$ref", /deeper than 32/);
});

test("recursion that applies more and more schemas per value node: cap passes, cap + 1 fails", () => {
  // Each level applies the root once and T once more than the level above (T refers to itself and the
  // root's second branch starts another T), so the bound grows linearly up to the value depth cap.
  const names = (n: number, p: string): string => Array.from({ length: n }, (_, i) => `"${p}${i}"`).join(",");
  const schema = (tPad: number, pad: number): string =>
    `{"$defs":{"T":{"items":{"$ref":"#/$defs/T"},"required":[${names(tPad, "t")}]}},"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#/$defs/T"}}],"required":[${names(pad, "r")}]}`;
  const bound = (tPad: number, pad: number): number => compile(schema(tPad, pad)).size.expanded.perValueNode;
  // T's padding counts once per level (up to the value depth cap), the root's once in all.
  const slope = bound(1, 0) - bound(0, 0);
  assert.ok(slope >= 60, String(slope));
  const tPad = Math.floor((SCHEMA_MAX_NODES - 100 - bound(0, 0)) / slope);
  const pad = SCHEMA_MAX_NODES - bound(tPad, 0);
  assert.ok(pad > 0 && pad < 200, String(pad));
  assert.is(bound(tPad, pad), SCHEMA_MAX_NODES);
  assert.ok(compile(schema(tPad, pad)).size.written.nodes < 1000);
  refused(schema(tPad, pad + 1), "/anyOf/0/items/$ref", /through recursion, validation can apply more than 16384 schema nodes/);
  // Doubling at each level is refused whatever its size.
  refused('{"anyOf":[{"items":{"$ref":"#"}},{"items":{"anyOf":[{"$ref":"#"},{"items":{"$ref":"#"}}]}}]}', "/anyOf/0/items/$ref", /through recursion/);
  refused('{"items":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}', "/items/allOf/0/$ref", /through recursion/);
});

test("a property named $ref is data; $ref inside const/enum/default is never resolved", () => {
  assert.equal(verdicts('{"properties":{"$ref":{"type":"string"}},"default":{"$ref":"#/nowhere"},"enum":[{"$ref":"http://x"}]}', ['{"$ref":"http://x"}', '{"$ref":1}']), [true, false]);
});

test("ajv gets non-recursive targets inline and only recursion targets as $ref", () => {
  const screened = (text: string): string => {
    const r = screenSchema(parse(text) as never);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return JSON.stringify(r.ajvSchema);
  };
  assert.is(screened('{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"type":"string"},"F":false},"properties":{"a":{"$ref":"#/$defs/A"},"f":{"$ref":"#/$defs/F"}}}'),
    '{"properties":{"a":{"type":"string"},"f":{"not":{}}}}');
  assert.is(screened('{"$defs":{"N":{"items":{"$ref":"#/$defs/N"}}},"properties":{"n":{"$ref":"#/$defs/N"}}}'),
    '{"properties":{"n":{"$ref":"#/definitions/chatdRef0"}},"definitions":{"chatdRef0":{"items":{"$ref":"#/definitions/chatdRef0"}}}}');
  assert.is(screened('{"items":{"$ref":"#"}}'), '{"$ref":"#/definitions/chatdRef0","definitions":{"chatdRef0":{"items":{"$ref":"#/definitions/chatdRef0"}}}}');
});

test.run();
