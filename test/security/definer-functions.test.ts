// Security definer functions run with their owner's rights, so nothing a caller can create may stand in for an
// object they name. Every such function in chatd's schemas pins search_path with pg_catalog first and pg_temp
// explicitly last, names no temporary object, and qualifies every relation; the database gives TEMP to no caller.
// The regression: a caller plants pg_temp.edit_superseded with a trigger and edits a message (it used to run the
// trigger as the owner, reading chat_private.model_config_secrets).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { createChat, createUser, text } from "../support/chats.ts";
import { apiSession, inSession, ownerSession } from "./support.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  // The clone of the template has the default database ACL (CREATE DATABASE resets it): chatd migrate re-asserts it.
  await migrate(db.url);
  await db.pool.query("insert into chat_private.model_config_secrets (model_config_id, api_key) values ('scripted', 'sk-stolen')");
});
test.after(async () => {
  await db.drop();
});

interface DefinerFunction {
  name: string;
  language: string;
  config: string[] | null;
  body: string;
  /** The transition tables of the triggers that call it: ephemeral, looked up before any schema. */
  transitionTables: string[];
}

async function definerFunctions(): Promise<DefinerFunction[]> {
  const { rows } = await db.pool.query<DefinerFunction>(
    `select p.oid::regprocedure::text as name, l.lanname as language, p.proconfig as config, p.prosrc as body,
            array(select t.name::text from pg_catalog.pg_trigger g, unnest(array[g.tgoldtable, g.tgnewtable]) t(name)
                  where g.tgfoid = p.oid and t.name is not null) as "transitionTables"
     from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
     join pg_catalog.pg_language l on l.oid = p.prolang
     where p.prosecdef and n.nspname in ('chat_public', 'chat_private', 'chatd_meta') order by 1`);
  return rows;
}

/** The pinned search_path of a function, as a list of schema names, or null when it is not pinned. */
function searchPath(config: string[] | null): string[] | null {
  const entry = config?.find((setting) => setting.startsWith("search_path="));
  return entry ? entry.slice("search_path=".length).split(",").map((schema) => schema.trim().replace(/^"|"$/g, "")) : null;
}

/** The body without comments and string literals, lower-cased: what the scanner below reads. */
function code(body: string): string {
  return body.replace(/--[^\n]*/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ").replace(/E?'(?:[^']|'')*'/g, "''").toLowerCase();
}

/** Words that follow FROM/JOIN/INTO/UPDATE/TABLE without naming a relation. */
const NOT_RELATIONS = new Set(["lateral", "only", "strict", "of", "skip", "nowait", "select", "set", "jsonb_array_elements"]);

/**
 * Relation names used without a schema in FROM, JOIN, INSERT INTO, UPDATE, DELETE FROM or TRUNCATE. A
 * deliberately simple scanner (PL/pgSQL has no parser here): names that are variables (v_, p_), CTEs, function calls
 * (followed by a parenthesis) and `is distinct from` operands are not relations.
 */
function unqualifiedRelations(body: string, transitionTables: string[] = []): string[] {
  const text = code(body);
  const ctes = new Set([...text.matchAll(/(?:\bwith(?:\s+recursive)?|,)\s+([a-z_][a-z0-9_]*)\s+as\s+(?:not\s+)?(?:materialized\s+)?\(/g)]
    .map((match) => match[1]!).concat(transitionTables));
  const found: string[] = [];
  const pattern = /\b(from|join|insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+([a-z_][a-z0-9_$]*)\s*(\.|\()?/g;
  for (const match of text.matchAll(pattern)) {
    const [, keyword, name, next] = match;
    if (next || !name || !keyword) continue;
    if (/^[vp]_/.test(name) || ctes.has(name) || NOT_RELATIONS.has(name)) continue;
    const before = text.slice(Math.max(0, match.index - 20), match.index);
    if (keyword === "from" && /distinct\s*$/.test(before)) continue;
    if (keyword === "update" && /\bfor\s+(no\s+key\s+)?$/.test(before)) continue;
    found.push(name);
  }
  return found;
}

test("chatd has security definer functions to check (the enumeration is not vacuous)", async () => {
  const functions = await definerFunctions();
  assert.ok(functions.length > 50, `${functions.length} security definer functions`);
  assert.ok(functions.some((fn) => fn.name.startsWith("chat_public.edit_chat_message(")));
});

test("every security definer function pins search_path: pg_catalog first, pg_temp explicitly last", async () => {
  const wrong = (await definerFunctions()).flatMap((fn) => {
    const path = searchPath(fn.config);
    if (!path) return [`${fn.name}: search_path not pinned`];
    if (path[0] !== "pg_catalog" || path.at(-1) !== "pg_temp") return [`${fn.name}: search_path ${path.join(", ")}`];
    return [];
  });
  assert.equal(wrong, []);
});

test("no role but the owner can create objects in a schema on those paths", async () => {
  const schemas = new Set((await definerFunctions()).flatMap((fn) => searchPath(fn.config) ?? []));
  schemas.delete("pg_temp");
  const { rows } = await db.pool.query<{ role: string; schema: string }>(
    `select r.rolname as role, s as schema from pg_catalog.pg_roles r, unnest($1::text[]) s
     where not r.rolsuper and has_schema_privilege(r.oid, s, 'CREATE')
       and r.oid <> (select nspowner from pg_catalog.pg_namespace where nspname = s)
       and r.rolname not like 'pg\\_%'`, [[...schemas]]);
  assert.equal(rows, []);
});

test("no security definer function names a temporary object", async () => {
  const wrong = (await definerFunctions())
    .filter((fn) => /\b(temp|temporary)\s+table\b|\bpg_temp\b/.test(code(fn.body)))
    .map((fn) => fn.name);
  assert.equal(wrong, []);
});

test("every relation a security definer function names is schema-qualified", async () => {
  const wrong = (await definerFunctions()).flatMap((fn) => unqualifiedRelations(fn.body, fn.transitionTables).map((name) => `${fn.name}: ${name}`));
  assert.equal(wrong, []);
});

test("the scanner finds what it looks for (an unqualified table, a temporary table)", () => {
  assert.equal(unqualifiedRelations("begin update chats set x = 1; select 1 from chat_public.chats c join users u on true; end"),
    ["chats", "users"]);
  assert.equal(unqualifiedRelations("begin select 1 from chat_public.chats for update; if a is distinct from b then end if; end"), []);
  assert.ok(/\b(temp|temporary)\s+table\b/.test(code("create temporary table if not exists pg_temp.edit_superseded ()")));
});

test("chatd migrate leaves TEMP on chatd's database to no caller role", async () => {
  const { rows } = await db.pool.query<{ role: string; temp: boolean }>(
    `select r as role, has_database_privilege(r, current_database(), 'TEMP') as temp
     from unnest(array['public', 'chat_anonymous', 'chat_user', 'chat_operator', 'chat_worker', 'chatd_api']) r order by 1`);
  assert.equal(rows.filter((row) => row.temp), []);
});

/** The shape edit_chat_message's temporary table had, so that `create ... if not exists` would have adopted it. */
const PLANT = "create temporary table edit_superseded (ord bigserial, request_id uuid)";

test("chat_user cannot create a temporary table (42501), in a new session or after set role from chatd_api", async () => {
  const user = await createUser(db, "planter");
  for (const connect of [() => ownerSession(db), () => apiSession(db)]) {
    const state = await inSession(connect, "chat_user", user, (client) => sqlState(client.query(PLANT)));
    assert.is(state, "42501");
  }
});

test("chatd_api itself cannot create a temporary table (42501)", async () => {
  const client = await apiSession(db);
  try {
    assert.is(await sqlState(client.query(PLANT)), "42501");
  } finally {
    await client.end();
  }
});

test("a planted pg_temp.edit_superseded with a trigger is not used by edit_chat_message, even where TEMP is granted", async () => {
  const user = await createUser(db, "hijacker");
  const chat = await createChat(db, user, "to be edited");
  // The strongest caller: TEMP granted back explicitly, so only the function itself stands between the plant and
  // the owner's rights.
  await db.pool.query(`grant temporary on database ${await databaseName()} to chat_user`);
  try {
    const loot = await inSession(() => ownerSession(db), "chat_user", user, async (client) => {
      await client.query("create temporary table loot (secret text)");
      await client.query(`create function pg_temp.steal() returns trigger language plpgsql as $$
        begin insert into pg_temp.loot select s.api_key from chat_private.model_config_secrets s; return new; end $$`);
      await client.query(PLANT);
      await client.query(`create trigger steal after insert on pg_temp.edit_superseded for each statement execute function pg_temp.steal()`);
      await client.query("select * from chat_public.edit_chat_message($1, $2)", [chat.message_id, text("edited")]);
      return (await client.query<{ secret: string }>("select secret from pg_temp.loot")).rows.map((row) => row.secret);
    });
    assert.equal(loot, []);
  } finally {
    await db.pool.query(`revoke temporary on database ${await databaseName()} from chat_user`);
  }
  const { rows } = await db.pool.query("select 1 from chat_public.chat_messages where chat_id = $1 and not deleted and kind = 'message' and role = 'user'", [chat.chat_id]);
  assert.is(rows.length, 1, "the edit itself went through");
});

async function databaseName(): Promise<string> {
  const { rows } = await db.pool.query<{ name: string }>("select quote_ident(current_database()) as name");
  return rows[0]!.name;
}

test.run();
