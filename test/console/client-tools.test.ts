// The console's own check of its "Client tools" box: only what it needs to build the request (JSON, an array).
// The rules for each tool are chatd's (check_dynamic_tools); the browser test shows those refusals at the field.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseClientTools } from "../../console/src/client-tools.ts";

const schema = { type: "object" };

test("an empty box declares no tools; an array is passed on as written, for chatd to check", () => {
  assert.equal(parseClientTools("  "), { tools: [], errors: [] });
  const tools = [{ name: "ask_user", description: "ask", inputSchema: schema }, { name: "bad name", input_schema: schema }];
  assert.equal(parseClientTools(JSON.stringify(tools)), { tools, errors: [] });
});

test("text that is not a JSON array is an error at the field, and no tools", () => {
  assert.equal(parseClientTools("[{").errors.map((e) => e.field), ["dynamic_tools"]);
  assert.match(parseClientTools("[{").errors[0]!.detail, /^is not JSON/);
  assert.equal(parseClientTools('{"name": "x"}'), { tools: null,
    errors: [{ field: "dynamic_tools", detail: "must be a JSON array of {name, description, inputSchema}" }] });
});

test.run();
