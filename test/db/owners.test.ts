// One owner per check in the hot SQL: each check below is stated in exactly the functions named for it, and
// everything else asks them. The fence's versions, CHFNC, the transition rule that decides a lock, a turn's end
// state, and the live predicates of leases and worker processes each had several copies that drifted apart (two
// boundaries for a dead worker); this test fails, naming the file and the object, when a copy comes back.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

interface Check {
  what: string;
  pattern: RegExp;
  /** The objects (functions or views) allowed to state it, and why each. */
  owners: string[];
}

const CHECKS: Check[] = [
  { what: "the fence's versions compared", pattern: /history_version\s*(?:=|is distinct from)\s*p_history_version/i,
    owners: ["chat_private._lock_for_worker_transition"] },
  // check_agent_runner refuses a subagent call whose runner lost the parent's lease: CHFNC for the parent, not a
  // transition of the chat it locks.
  { what: "CHFNC raised", pattern: /errcode\s*=\s*'CHFNC'/i,
    owners: ["chat_private._lock_for_worker_transition", "chat_private.check_agent_runner"] },
  { what: "the transition rule deciding a lock", pattern: /_transition_rule\([^;]*?\)\)\.allowed/i,
    owners: ["chat_private._begin_transition", "chat_private._lock_for_worker_transition", "chat_private._check_transition_rule"] },
  // finish_turn had its own copy of this next to _end_turn_and_promote's, which chose after promoting.
  { what: "a turn's end state chosen between running the queue head and waiting",
    pattern: /then\s+'(?:running|waiting)'\s+else\s+'(?:waiting|running)'/i, owners: ["chat_private._end_turn"] },
  { what: "an expiry compared with now() (lease or worker liveness)", pattern: /(?:\b|\bp_)expires_at\s*(?:<=|>=|<|>)\s*now\(\)(?!\s*-)/i,
    owners: ["chat_private.lease_row_is_live", "chat_private.worker_row_is_live"] },
];

/** The objects a SQL file defines, each with its text without comments (a statement outside any object is named
 * after its file). Dollar-quoted bodies are kept whole, so a function's body belongs to that function. */
function objects(file: string, sql: string): { name: string; text: string }[] {
  const code = sql.replace(/--[^\n]*/g, "");
  const out: { name: string; text: string }[] = [];
  const starts = [...code.matchAll(/create or replace (?:function|view) ([\w.]+)/gi)];
  if (starts.length === 0 || starts[0]!.index! > 0) out.push({ name: file, text: code.slice(0, starts[0]?.index ?? code.length) });
  starts.forEach((match, i) => {
    out.push({ name: match[1]!.toLowerCase(), text: code.slice(match.index, starts[i + 1]?.index ?? code.length) });
  });
  return out;
}

/** Where a check is stated outside its owners, as `file: object states <what>`. */
function strayChecks(files: { name: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    for (const object of objects(file.name, file.text)) {
      for (const check of CHECKS) {
        if (check.pattern.test(object.text) && !check.owners.includes(object.name)) {
          found.push(`${file.name}: ${object.name} states ${check.what} (owners: ${check.owners.join(", ")})`);
        }
      }
    }
  }
  return found;
}

const sqlDir = join(projectRoot, "sql");
const files = readdirSync(sqlDir).filter((name) => name.endsWith(".sql")).sort()
  .map((name) => ({ name: `sql/${name}`, text: readFileSync(join(sqlDir, name), "utf8") }));

test("each check of the hot SQL is stated only by its owner", () => {
  assert.equal(strayChecks(files), []);
});

test("every owner exists, and states its check", () => {
  for (const check of CHECKS) {
    const stated = files.flatMap((file) => objects(file.name, file.text)).filter((object) => check.pattern.test(object.text))
      .map((object) => object.name);
    assert.ok(stated.length > 0, `someone states ${check.what}`);
    assert.ok(stated.every((name) => check.owners.includes(name)), `${check.what}: ${stated.join(", ")}`);
  }
});

test("the check finds copies that used to live outside their owners", () => {
  const planted = [
    ["create or replace function chat_private.finish_turn(p uuid) returns void as $$ begin perform 1 from chat_public.chats c",
      "where c.history_version = p_history_version and (chat_private._transition_rule('finish_turn', chat_private.chat_state(c))).allowed",
      "for no key update; raise exception 'fence lost' using errcode = 'CHFNC'; end; $$ language plpgsql;"].join("\n"),
    "create or replace view chat_private.job_queue as select 1 from chat_private.worker_processes w where w.expires_at < now();",
    "create or replace view chat_private.lease_holders as select l.expires_at > now() as live from chat_private.chat_leases l;",
  ].join("\n");
  assert.equal(strayChecks([{ name: "sql/planted.sql", text: planted }]), [
    "sql/planted.sql: chat_private.finish_turn states the fence's versions compared (owners: chat_private._lock_for_worker_transition)",
    "sql/planted.sql: chat_private.finish_turn states CHFNC raised (owners: chat_private._lock_for_worker_transition, chat_private.check_agent_runner)",
    "sql/planted.sql: chat_private.finish_turn states the transition rule deciding a lock (owners: chat_private._begin_transition, chat_private._lock_for_worker_transition, chat_private._check_transition_rule)",
    "sql/planted.sql: chat_private.job_queue states an expiry compared with now() (lease or worker liveness) (owners: chat_private.lease_row_is_live, chat_private.worker_row_is_live)",
    "sql/planted.sql: chat_private.lease_holders states an expiry compared with now() (lease or worker liveness) (owners: chat_private.lease_row_is_live, chat_private.worker_row_is_live)",
  ]);
  // The two ways the end of a turn used to be chosen, the one before the receipts and the one after promoting.
  assert.equal(strayChecks([{ name: "sql/planted.sql", text: [
    "create or replace function chat_private.finish_turn(p_chat_id uuid) returns void as $$ update chat_public.chats c",
    "set status = case when exists (select 1 from chat_public.chat_queued_messages q where q.chat_id = p_chat_id) then 'running' else 'waiting' end",
    "$$ language sql;",
    "create or replace function chat_private._end_turn_and_promote(p_chat_id uuid) returns text as $$ select",
    "case when chat_private._promote_queue_head(p_chat_id) is null then 'waiting' else 'running' end $$ language sql;",
  ].join("\n") }]), [
    "sql/planted.sql: chat_private.finish_turn states a turn's end state chosen between running the queue head and waiting (owners: chat_private._end_turn)",
    "sql/planted.sql: chat_private._end_turn_and_promote states a turn's end state chosen between running the queue head and waiting (owners: chat_private._end_turn)",
  ]);
  // A retention threshold is not a liveness check.
  assert.equal(strayChecks([{ name: "sql/planted.sql",
    text: "create or replace function chat_private.prune() returns void as $$ delete from w where w.expires_at < now() - interval '1 hour' $$ language sql;" }]), []);
  // Nor is another column's expiry, such as a webhook secret's overlap (sql/150).
  assert.equal(strayChecks([{ name: "sql/planted.sql",
    text: "create or replace function chat_private.secrets() returns boolean as $$ select e.previous_secret_expires_at > now() from e $$ language sql;" }]), []);
});

test.run();
