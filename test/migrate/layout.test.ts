// The repeatable layer holds only what `chatd migrate` can replace without a table lock: functions, views,
// comments, and the grants next to them. Anything with state or locks (types, tables, triggers, policies, row-level
// security, table grants, rows, drops) is a numbered migration (sql/README.md).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readSqlFiles } from "../../src/db/repeatable.ts";

/** Top-level statements of a SQL file: comments dropped, quoted text and dollar-quoted bodies kept whole. */
function statements(sql: string): string[] {
  const out: string[] = [];
  let current = "";
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const dollar = /^\$[A-Za-z_]*\$/.exec(rest);
    if (rest.startsWith("--")) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
    } else if (dollar) {
      const end = sql.indexOf(dollar[0], i + dollar[0].length);
      current += sql.slice(i, end + dollar[0].length);
      i = end + dollar[0].length;
    } else if (sql[i] === "'") {
      const escapes = /[Ee]$/.test(current);
      let j = i + 1;
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "\\" && escapes ? 2 : sql[j] === "'" ? 2 : 1;
      current += sql.slice(i, j + 1);
      i = j + 1;
    } else if (sql[i] === ";") {
      if (current.trim()) out.push(current.trim());
      current = "";
      i += 1;
    } else {
      current += sql[i];
      i += 1;
    }
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

const files = readSqlFiles();
const views = new Set(files.flatMap((file) => statements(file.text))
  .map((statement) => /^create or replace view (\S+)/i.exec(statement)?.[1]).filter((name) => name !== undefined));

/** Why a statement does not belong in sql/, or null when it does. */
function misplaced(raw: string): string | null {
  const statement = raw.replace(/\s+/g, " ");
  if (/^create or replace (function|view) /i.test(statement) || /^comment on /i.test(statement)) return null;
  if (/^(grant|revoke) [a-z, ]+ on (all functions in schema|function) /i.test(statement)) return null;
  // A function's EXECUTE rights, set next to it (sql/005_execute_grants.sql).
  if (/^select chat_private\.grant_execute\('[^']+', '\{[a-z_, ]*\}'\)$/i.test(statement)) return null;
  const viewGrant = /^grant select on (.+) to [a-z_, ]+$/i.exec(statement);
  if (viewGrant) {
    const targets = viewGrant[1]!.split(",").map((name) => name.trim());
    return targets.every((name) => views.has(name)) ? null : "a table grant (a migration)";
  }
  // A DO block may only write comments (085 tags the comments of objects other files made): no DDL or DML in its
  // code, nor at the start of a string it could execute.
  const body = /^do \$\$([\s\S]*)\$\$$/i.exec(raw)?.[1];
  if (body !== undefined) {
    const code = body.replace(/--[^\n]*/g, "");
    const literals = code.match(/'(?:[^']|'')*'/g) ?? [];
    const outside = code.replace(/'(?:[^']|'')*'/g, "''");
    const writes = /\b(create|alter|drop|insert|update|delete|truncate|grant|revoke)\b/i;
    return writes.test(outside) || literals.some((literal) => writes.test(literal.slice(1, 12))) ? "a DO block with DDL or DML" : null;
  }
  return "not replaceable (a migration)";
}

test("every statement in sql/ is a function, a view, a comment or a grant next to them", () => {
  const found = files.flatMap((file) => statements(file.text).map((statement) => ({ file: file.name, statement })))
    .map(({ file, statement }) => ({ file, statement: statement.replace(/\s+/g, " ").slice(0, 100), why: misplaced(statement) }))
    .filter((entry) => entry.why !== null);
  assert.equal(found, []);
});

test("the check finds what used to live here", () => {
  for (const statement of [
    "create trigger _100_touch before update on chat_public.chats for each row execute function chat_private.tg_chats__touch()",
    "drop trigger if exists _200_guard_receipts on chat_public.chat_messages",
    "create policy select_own on chat_public.users for select to chat_user using (true)",
    "alter table chat_public.users enable row level security",
    "grant select on chat_public.users to chat_user",
    "insert into chat_private.settings (name, value, description) values ('a', '1', 'b')",
    "truncate chat_private.transition_rules",
    "do $$ begin create type chat_private.fence as (runner_id uuid); end $$",
  ]) {
    assert.ok(misplaced(statements(`${statement};`)[0]!) !== null, statement);
  }
});

test.run();
