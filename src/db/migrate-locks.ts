// The table locks of `chatd migrate`, taken so that the running release never pays for them with an error.
//
// A migration locks each relation it changes (ACCESS EXCLUSIVE) as its statements reach it, over a transaction
// that may last seconds. Taken one by one like that, the locks deadlock with the running release: a client
// transaction holding relation B, queued behind the migration's lock on A, while the migration then waits for B.
// PostgreSQL's deadlock check runs in whichever waiter has waited deadlock_timeout first and aborts that one, so
// the client (waiting first) would get 40P01. Instead, before its first statement, the migration takes every lock
// it will need, and never stays in a cycle: it waits for each relation in steps shorter than deadlock_timeout, and
// after each step looks at the relation's holders. One that only has work to finish is waited for (up to the
// budget); one that waits for a lock the migration already holds (directly, or through one other session) would
// never let go, so the locks taken so far are released (a PL/pgSQL exception block is a subtransaction) and the
// taking starts again with that relation first, before that holder's deadlock check could fire. The order thus
// converges to the one the running transactions take them in. Once everything is held, the migration needs no lock
// that a running chatd process holds (the rest are catalog rows, roles and grants, which only DDL takes), so it
// does not wait for a client again.
import type pg from "pg";

/** deadlock_timeout of the server, in ms: each lock wait step must end well before it. */
export async function deadlockTimeoutMs(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ ms: number }>(
    "select extract(epoch from current_setting('deadlock_timeout')::interval) * 1000 as ms");
  return Number(rows[0]!.ms);
}

/**
 * In the caller's open transaction: ACCESS EXCLUSIVE on each of `relations` (those that exist), taken within
 * budgetMs in all (else 55P03, lock_not_available: the caller rolls back and retries later), waiting in steps of
 * stepMs. The session's lock_timeout holds again afterwards.
 */
export async function lockAhead(client: pg.ClientBase, relations: string[], budgetMs: number, stepMs: number): Promise<void> {
  // The names go into the statement's text (a DO block takes no parameters): chatd's own, plain identifiers only.
  const bad = relations.find((name) => !/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/.test(name));
  if (bad !== undefined) throw new Error(`not a plain relation name: ${bad}`);
  if (relations.length === 0) return;
  const arrayLiteral = `{${relations.join(",")}}`;
  await client.query(`do $lock$
declare
  v_relations regclass[] := array(select r from unnest($relations$${arrayLiteral}$relations$::text[]) n,
                                  to_regclass(n) r where r is not null);
  v_deadline timestamptz := clock_timestamp() + interval '${Math.max(1, Math.floor(budgetMs))} milliseconds';
  v_session_timeout text := current_setting('lock_timeout');
  v_busy regclass;
begin
  loop
    begin
      foreach v_busy in array v_relations loop
        loop
          if clock_timestamp() >= v_deadline then
            raise exception 'could not lock % within the migration''s budget', v_busy using errcode = 'lock_not_available';
          end if;
          perform set_config('lock_timeout',
            greatest(1, least(${Math.max(1, Math.floor(stepMs))}, floor(extract(epoch from v_deadline - clock_timestamp()) * 1000)))::int || 'ms', true);
          begin
            execute format('lock table %s in access exclusive mode', v_busy);
            exit;
          exception when lock_not_available then
            if exists (select 1 from pg_catalog.pg_locks h
                       where h.relation = v_busy::oid and h.granted and h.pid <> pg_backend_pid()
                         and (pg_backend_pid() = any (pg_catalog.pg_blocking_pids(h.pid))
                              or exists (select 1 from unnest(pg_catalog.pg_blocking_pids(h.pid)) b(pid)
                                         where pg_backend_pid() = any (pg_catalog.pg_blocking_pids(b.pid))))) then
              raise exception 'a holder of % waits for this migration', v_busy using errcode = 'lock_not_available';
            end if;
          end;
        end loop;
      end loop;
      perform set_config('lock_timeout', v_session_timeout, true);
      return;
    exception when lock_not_available then
      if clock_timestamp() >= v_deadline then
        raise;
      end if;
      v_relations := v_busy || array_remove(v_relations, v_busy);
    end;
  end loop;
end
$lock$`);
}

/** Every table and view of chatd's schemas: what a run with migrations may change. */
export async function chatdRelations(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.oid::regclass::text as name from pg_class c
     where c.relnamespace::regnamespace::text in ('chat_public', 'chat_private') and c.relkind in ('r', 'p', 'v', 'm')
     order by c.oid`);
  return rows.map((row) => row.name);
}
