// bench/sql-floor.ts turns the statements the worker sent into a pgbench script: these pin how parameters become
// pgbench variables, so that the replay sends what the worker sent.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { floorScript, type CapturedStatement } from "../../bench/sql-floor.ts";

const client = { createChat: "select chat_id from chat_public.create_chat(content => $1, response_format => $2)", values: ["[1]", "{}"] };
const fenced = (extra: unknown[]): CapturedStatement => ({
  text: `select * from f(${["$1", "$2", "$3", "$4", ...extra.map((_, i) => `$${i + 5}`)].join(", ")})`,
  values: ["chat", "runner", "3", "0", ...extra],
});
const statements: Record<string, CapturedStatement> = {
  chatd_acquire_lease: { text: "select f.*, g($1) from a($1, $2) f", values: ["chat", "worker-1"] },
  chatd_commit_step: fenced(["[{\"a\":1}]", "{}", null]),
  chatd_commit_step_and_finish_turn: fenced(["[]", "{}", null, ["x\"y", "a\\b"], 5, 6, 7, 8, 9]),
};

test("the fence comes from the statement before, other values become -D variables", () => {
  const built = floorScript(client, statements);
  if ("skipped" in built) throw new Error(built.skipped);
  const lines = built.script.trim().split("\n");
  assert.equal(lines[2], "select chat_id from chat_public.create_chat(content => :client_1, response_format => :client_2) \\gset");
  assert.equal(lines[4], "select f.*, g(:chat_id) from a(:chat_id, :chatd_acquire_lease_2) f \\gset");
  assert.equal(lines[5], "select * from f(:chat_id, :runner_id, :history_version, :generation_attempt, :chatd_commit_step_5, :chatd_commit_step_6, null) \\gset");
  assert.equal(built.variables.client_1, "[1]");
  assert.equal(built.variables.chatd_acquire_lease_2, "worker-1");
  assert.equal(built.variables.chatd_commit_step_5, "[{\"a\":1}]");
  assert.is(built.variables.chatd_commit_step_7, undefined);
});

test("$13 is bound as itself, not as $1 followed by 3; arrays become PostgreSQL array text", () => {
  const built = floorScript(client, statements);
  if ("skipped" in built) throw new Error(built.skipped);
  const finish = built.script.split("\n")[6]!;
  assert.ok(finish.includes(":chatd_commit_step_and_finish_turn_13)"), finish);
  assert.not.ok(finish.includes(":chat_id3"), finish);
  assert.equal(built.variables.chatd_commit_step_and_finish_turn_8, "{\"x\\\"y\",\"a\\\\b\"}");
  assert.equal(built.variables.chatd_commit_step_and_finish_turn_9, "5");
});

test("a statement the worker never sent makes the floor skip, naming it", () => {
  const { chatd_commit_step: _omitted, ...rest } = statements;
  const built = floorScript(client, rest);
  assert.ok("skipped" in built);
  if ("skipped" in built) assert.match(built.skipped, /chatd_commit_step\b/);
});

test.run();
