// What generators emit beyond plain draft-07: the 2020-12 dialect (with its own meaning for items),
// the formats they write, the annotation-only formats, and OpenAPI's discriminator.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validateValue } from "../../src/structured/index.ts";
import { compile, schemaErrors } from "./helpers.ts";

const S2020 = '"$schema":"https://json-schema.org/draft/2020-12/schema"';
const S07 = '"$schema":"http://json-schema.org/draft-07/schema#"';

function verdicts(schemaText: string, values: string[]): boolean[] {
  const v = compile(schemaText);
  return values.map((x) => validateValue(v, x).ok);
}

test("2020-12: prefixItems are the tuple, items the rest; draft-07's array items mean the same there", () => {
  const tuple = ["[\"a\",1]", "[\"a\",1,2]", "[1,\"a\"]", "[\"a\"]"];
  assert.equal(verdicts(`{${S2020},"prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`, tuple), [true, false, false, true]);
  assert.equal(verdicts(`{${S07},"items":[{"type":"string"},{"type":"number"}],"additionalItems":false}`, tuple), [true, false, false, true]);
  // items alone applies to every item, in both drafts.
  assert.equal(verdicts(`{${S2020},"items":{"type":"integer"}}`, ["[1,2]", "[1,\"x\"]"]), [true, false]);
  assert.equal(verdicts(`{${S2020},"$defs":{"A":{"const":1}},"items":{"$ref":"#/$defs/A"}}`, ["[1]", "[2]"]), [true, false]);
});

test("2020-12: keywords whose meaning differs or that chatd does not implement there are refused, not reinterpreted", () => {
  const refused = (text: string, field: string, detail: RegExp): void => {
    const e = schemaErrors(text)[0];
    assert.is(e?.field, field, JSON.stringify(e));
    assert.match(e?.detail ?? "", detail);
  };
  refused(`{${S2020},"items":[{"type":"string"}]}`, "/items", /tuples use prefixItems/);
  refused(`{${S2020},"additionalItems":false}`, "/additionalItems", /not part of draft 2020-12/);
  refused(`{${S2020},"dependencies":{"a":["b"]}}`, "/dependencies", /not part of draft 2020-12/);
  refused(`{${S2020},"dependentRequired":{"a":["b"]}}`, "/dependentRequired", /unknown keyword/);
  refused(`{${S2020},"unevaluatedProperties":false}`, "/unevaluatedProperties", /unknown keyword/);
  refused(`{${S2020},"contains":{},"minContains":2}`, "/minContains", /unknown keyword/);
  refused(`{${S07},"prefixItems":[{}]}`, "/prefixItems", /2020-12 keyword/);
  refused('{"prefixItems":[{}]}', "/prefixItems", /2020-12 keyword/);
  refused('{"$schema":"https://json-schema.org/draft/2019-09/schema"}', "/$schema", /draft-07.*2020-12/);
});

test("formats generators write: duration (RFC 3339 appendix A) and ulid are checked", () => {
  const d = ["P1Y", "P1Y2M3D", "P1DT2H", "PT1H30M", "PT5S", "P3W", "P", "PT", "P1D2Y", "P1W1D", "P1YT", "p1d", "P1.5D", "P1Y1D", "PT1H1S"];
  assert.equal(verdicts('{"format":"duration"}', d.map((s) => JSON.stringify(s))), [true, true, true, true, true, true, false, false, false, false, false, false, false, false, false]);
  const u = ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5FA"];
  assert.equal(verdicts('{"format":"ulid"}', u.map((s) => JSON.stringify(s))), [true, true, false, false, false]);
});

test("password, binary and path are annotations (an explicit list); other unknown formats stay refused", () => {
  for (const f of ["password", "binary", "path"]) assert.equal(verdicts(`{"format":"${f}"}`, ['""', '"anything at all"', "1"]), [true, true, true]);
  for (const f of ["byte", "int64", "file-path", "regex", "iri"]) assert.match(schemaErrors(`{"format":"${f}"}`)[0]?.detail ?? "", /is not supported/, f);
});

test("Pydantic's discriminator beside oneOf is an annotation: the oneOf decides", () => {
  const s = '{"$defs":{"C":{"properties":{"k":{"const":"c"}},"required":["k"]},"D":{"properties":{"k":{"const":"d"}},"required":["k"]}},"discriminator":{"propertyName":"k","mapping":{"c":"#/$defs/C","d":"#/nowhere"}},"oneOf":[{"$ref":"#/$defs/C"},{"$ref":"#/$defs/D"}]}';
  assert.equal(verdicts(s, ['{"k":"c"}', '{"k":"d"}', '{"k":"e"}']), [true, true, false]);
});

test.run();
