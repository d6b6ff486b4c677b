// `npm run bench:delete -- [scale]`: how long deleting takes as what is deleted grows. Seeds, in SQL, chats of
// finished structured turns (per turn: the input with its request, two assistant steps with internals, a tool
// result, the receipt, the turn's progress row, an idempotency key), then times chat_private.operator_delete_chat on
// one chat of 1,000 / 5,000 / 20,000 turns and chat_private.operator_delete_user on a user of 100 / 1,000 / 3,000
// chats of 5 turns, each beside 20,000 turns of other users (so a scan of a whole table shows). Prints the server
// backend's CPU time (read from /proc, embedded server only) and the wall time, per 1,000 rows deleted: flat per-row
// cost means deletion is linear in what goes. First it lists foreign keys whose referencing columns have no index
// (each deleted parent row would scan the referencing table). `scale` multiplies the sizes (default 1).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import pg from "pg";
import { benchDatabase, printTable } from "./support.ts";

const SCALE = Number(process.argv[2] ?? 1);
const n = (x: number) => Math.max(1, Math.round(x * SCALE));

/** Foreign keys with no index whose leading columns are the referencing columns. */
const UNINDEXED_FOREIGN_KEYS = `
  select c.conrelid::regclass::text as referencing, c.conname as constraint, c.confrelid::regclass::text as referenced,
         c.confdeltype as on_delete
  from pg_constraint c
  where c.contype = 'f' and c.connamespace::regnamespace::text in ('chat_public', 'chat_private')
    and not exists (select 1 from pg_index i where i.indrelid = c.conrelid
                    and (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
                    and (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)
  order by 1, 2`;

/** One chat of `turns` finished structured turns, as the worker leaves them; returns its id. */
const SEED_CHAT = `
  with chat as (
    insert into chat_public.chats (owner_id, model_config_id, title)
    select $1, id, 'bench' from chat_private.model_configs where is_default returning id),
  requests as (
    insert into chat_public.structured_output_requests (chat_id, name, schema, schema_sha256)
    select chat.id, 'listing', '{"type":"object"}', repeat('0', 64) from chat, generate_series(1, $2) returning id, chat_id),
  inputs as (
    insert into chat_public.chat_messages (chat_id, role, content, structured_output_request_id)
    select chat_id, 'user', '[{"type":"text","text":"list the files, please"}]', id from requests returning id, chat_id),
  steps as (
    insert into chat_public.chat_messages (chat_id, role, content)
    select chat_id, role::chat_public.message_role, content::jsonb from inputs,
      (values ('assistant', '[{"type":"tool-call","toolCallId":"c1","toolName":"list_files","input":{"path":"."}}]'),
              ('tool', '[{"type":"tool-result","toolCallId":"c1","toolName":"list_files","output":{"type":"text","value":"a.txt b.txt"}}]'),
              ('assistant', '[{"type":"tool-call","toolCallId":"c2","toolName":"coder_structured_output","input":{"output":{"files":2}}}]'))
        v (role, content)
    returning id, role),
  internals as (
    insert into chat_private.message_internals (message_id, finish)
    select id, '{"reason":"tool-calls"}' from steps where role = 'assistant' returning 1),
  turns as (
    insert into chat_private.turn_progress (chat_id, input_message_id, structured_output_request_id, steps, finished_at)
    select chat_id, id, null, 2, now() from inputs returning 1)
  select (select id from chat), (select count(*) from internals) + (select count(*) from turns) as n`;

/** Receipts for a chat's pending requests, as _write_receipt writes them (its guard lets this session insert them). */
const SEED_RECEIPTS = `
  with receipts as (
    insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id, structured_output)
    select r.chat_id, 'assistant', 'user', 'receipt', '[{"type":"text","text":"{\\"files\\":2}"}]', r.id,
           '{"status":"succeeded","value":{"files":2}}'
    from chat_public.structured_output_requests r where r.chat_id = $1 returning id, structured_output_request_id)
  update chat_public.structured_output_requests r set status = 'succeeded', receipt_message_id = receipts.id, finished_at = now(),
    finalization_attempts = 1, model_steps = 2, input_tokens = 900, output_tokens = 40
  from receipts where r.id = receipts.structured_output_request_id`;

async function seedChat(client: pg.ClientBase, owner: string, turns: number): Promise<string> {
  await client.query("begin");
  const { rows } = await client.query<{ id: string }>(SEED_CHAT, [owner, turns]);
  const chat = rows[0]!.id;
  await client.query("select set_config('chatd.writing_receipt', 'on', true)");
  await client.query(SEED_RECEIPTS, [chat]);
  await client.query(`update chat_private.turn_progress t set structured_output_request_id = m.structured_output_request_id
    from chat_public.chat_messages m where t.chat_id = $1 and m.id = t.input_message_id`, [chat]);
  await client.query(`insert into chat_private.idempotency_keys (owner_id, key, operation, result)
    select $1, 'k-' || id, 'send_chat_message', jsonb_build_object('chat_id', chat_id) from chat_private.turn_progress where chat_id = $2`,
  [owner, chat]);
  await client.query("commit");
  return chat;
}

async function newUser(client: pg.ClientBase, name: string): Promise<string> {
  return (await client.query<{ id: string }>("insert into chat_public.users (name) values ($1) returning id", [name])).rows[0]!.id;
}

/** The backend's CPU milliseconds so far (utime + stime from /proc; clock ticks are 100 Hz on Linux). */
function backendCpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

async function rowsOf(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ n: string }>(`select (select count(*) from chat_public.chats) + (select count(*) from chat_public.chat_messages)
    + (select count(*) from chat_private.message_internals) + (select count(*) from chat_public.structured_output_requests)
    + (select count(*) from chat_private.turn_progress) + (select count(*) from chat_private.idempotency_keys) as n`);
  return Number(rows[0]!.n);
}

/** Runs `sql` as chat_operator in its own transaction; returns CPU and wall milliseconds and rows deleted. */
async function timed(client: pg.ClientBase, pid: number, sql: string, params: unknown[]): Promise<[number | null, number, number]> {
  const before = await rowsOf(client);
  const cpu = backendCpuMs(pid);
  const started = performance.now();
  await client.query("begin");
  await client.query("set local role chat_operator");
  await client.query(sql, params);
  await client.query("commit");
  const wall = performance.now() - started;
  const cpuAfter = backendCpuMs(pid);
  return [cpu == null || cpuAfter == null ? null : cpuAfter - cpu, wall, before - await rowsOf(client)];
}

const db = await benchDatabase("delete");
const client = new pg.Client({ connectionString: db.url });
await client.connect();
try {
  const unindexed = (await client.query(UNINDEXED_FOREIGN_KEYS)).rows;
  console.log(`foreign keys without an index on their referencing columns: ${unindexed.length === 0 ? "none" :
    unindexed.map((r) => `${r.referencing} (${r.constraint} -> ${r.referenced}, on delete ${r.on_delete})`).join("; ")}`);
  const pid = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
  const others = await newUser(client, "others");
  for (let i = 0; i < n(20); i++) await seedChat(client, others, 1000);
  await client.query("vacuum analyze");
  const results: [string, string][] = [["case", "rows deleted | backend CPU ms | wall ms | CPU ms per 1,000 rows | wall ms per 1,000 rows"]];
  const report = (label: string, [cpu, wall, rows]: [number | null, number, number]) => results.push([label,
    `${rows} | ${cpu ?? "n/a"} | ${wall.toFixed(0)} | ${cpu == null ? "n/a" : (cpu / rows * 1000).toFixed(1)} | ${(wall / rows * 1000).toFixed(1)}`]);
  for (const turns of [n(1000), n(5000), n(20000)]) {
    const owner = await newUser(client, `long-${turns}`);
    const chat = await seedChat(client, owner, turns);
    await client.query("analyze");
    report(`delete-chat, 1 chat of ${turns} turns`, await timed(client, pid, "select chat_private.operator_delete_chat($1)", [chat]));
  }
  for (const chats of [n(100), n(1000), n(3000)]) {
    const owner = await newUser(client, `many-${chats}`);
    for (let i = 0; i < chats; i++) await seedChat(client, owner, 5);
    await client.query("analyze");
    report(`delete-user, ${chats} chats of 5 turns`, await timed(client, pid, "select chat_private.operator_delete_user($1)", [owner]));
  }
  console.log(`load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  printTable(results);
} finally {
  await client.end();
  await db.close();
}
