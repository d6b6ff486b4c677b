// The generated corpus (test/fixtures/structured-corpus): schemas as Pydantic, the OpenAI SDK's strict
// helper and zod emit them, each accepted by `chatd schema check` and deciding every instance as the
// independent validator (Python jsonschema, verdicts committed with the corpus) decided it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runSchemaCheck } from "../../src/cli/schema-command.ts";
import { validateValue } from "../../src/structured/index.ts";
import { compile } from "./helpers.ts";
import { parseKeepingNumbers, stringify, type Raw } from "./suite.ts";

interface Entry {
  name: string;
  generator: string;
  validator: string;
  schema: Raw;
  instances: { description: string; data: Raw; valid: boolean }[];
}

const CORPUS = join(import.meta.dirname, "..", "fixtures", "structured-corpus", "corpus.json");
// Number literals kept as written (`1.0` stays `1.0`): Python writes each float as its shortest repr.
const entries = parseKeepingNumbers(readFileSync(CORPUS, "utf8")) as unknown as Entry[];

function sink(): { stream: Writable; text: () => string } {
  let text = "";
  return { stream: new Writable({ write(chunk: Buffer, _enc, done) { text += chunk.toString(); done(); } }), text: () => text };
}

test("the corpus is all there: Pydantic, OpenAI strict and zod (both dialects)", () => {
  assert.is(entries.length, 15);
  for (const prefix of ["pydantic/", "openai-strict/", "zod/"]) assert.ok(entries.some((e) => e.name.startsWith(prefix)), prefix);
  const instances = entries.reduce((n, e) => n + e.instances.length, 0);
  assert.is(instances, 95);
  assert.ok(entries.every((e) => e.instances.some((i) => i.valid) && e.instances.some((i) => !i.valid)));
  assert.ok(readFileSync(CORPUS, "utf8").includes('"quantity": 1.0'), "a literal 1.0 reaches the validator as written");
});

test("every corpus schema passes chatd schema check", () => {
  for (const e of entries) {
    const out = sink();
    const err = sink();
    assert.is(runSchemaCheck(stringify(e.schema), out.stream, err.stream), 0, `${e.name}: ${err.text()}`);
  }
});

test("every corpus instance gets the independent validator's verdict", () => {
  const wrong: string[] = [];
  for (const e of entries) {
    const v = compile(stringify(e.schema));
    for (const i of e.instances) {
      if (validateValue(v, stringify(i.data)).ok !== i.valid) wrong.push(`${e.name} / ${i.description}: expected ${i.valid ? "valid" : "invalid"}`);
    }
  }
  assert.equal(wrong, []);
});

test.run();
