// The console's check of its "Client tools" box, which mirrors chatd's check_dynamic_tools so that a mistake is
// shown at the field before anything is sent (the browser test shows the server's refusals at the same field).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseClientTools } from "../../console/src/client-tools.ts";

const schema = { type: "object" };
const fields = (text: string) => parseClientTools(text).errors.map((e) => e.field);

test("an empty box declares no tools; a valid array is passed on as written, in either spelling of the schema", () => {
  assert.equal(parseClientTools("  "), { tools: [], errors: [] });
  const tools = [{ name: "ask_user", description: "ask", inputSchema: schema }, { name: "pick-1", input_schema: schema, plan_safe: true }];
  assert.equal(parseClientTools(JSON.stringify(tools)), { tools, errors: [] });
});

test("what chatd would refuse is an error at its field, every one of them, and no tools", () => {
  assert.equal(fields("[{"), ["dynamic_tools"]);
  assert.match(parseClientTools("[{").errors[0]!.detail, /^is not JSON/);
  assert.equal(fields('{"name": "x"}'), ["dynamic_tools"]);
  assert.equal(fields(JSON.stringify(["x", { name: "bad name", inputSchema: schema }, { name: "ok", description: 1, inputSchema: schema }])),
    ["dynamic_tools[0]", "dynamic_tools[1].name", "dynamic_tools[2].description"]);
  assert.equal(fields(JSON.stringify([{ name: "a", inputSchema: schema }, { name: "a", inputSchema: schema }])), ["dynamic_tools[1].name"]);
  assert.equal(fields(JSON.stringify([{ name: "coder_structured_output", inputSchema: schema }])), ["dynamic_tools[0].name"]);
  assert.equal(fields(JSON.stringify([{ name: "no_schema" }, { name: "array_schema", inputSchema: [] }])),
    ["dynamic_tools[0].inputSchema", "dynamic_tools[1].inputSchema"]);
  assert.equal(fields(JSON.stringify([{ name: "extra", inputSchema: schema, execute: "x" }])), ["dynamic_tools[0]"]);
  assert.is(parseClientTools(JSON.stringify([{ name: "extra", inputSchema: schema, execute: "x" }])).tools, null);
});

test.run();
