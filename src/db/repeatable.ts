// The repeatable layer: the sql/ files, split into statements, and which statements a migration run applies. Only
// what changed is applied, so that a function-only change replaces that function and nothing else (no view is
// re-created: CREATE OR REPLACE VIEW waits for every reader of the view), and a run with nothing to do writes
// nothing (every catalog write invalidates the cached plans of every session that uses the object).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { projectRoot } from "./database.ts";

export const SQL_DIR = join(projectRoot, "sql");

export interface SqlFile {
  name: string;
  text: string;
  sha256: string;
}

export interface SqlStatement {
  file: string;
  text: string;
  sha256: string;
  /** The object the statement is about (`function chat_private.f`, `relation chat_public.v`), or the statement's own. */
  object: string;
  /** define: creates or replaces the object; attach: a comment or grant on it (`slot` says which); other: anything else. */
  role: "define" | "attach" | "other";
  slot: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function readSqlFiles(dir = SQL_DIR): SqlFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => {
      const text = readFileSync(join(dir, name), "utf8");
      return { name, text, sha256: sha256(text) };
    });
}

/** One checksum for the whole layer, in name order: part of the schema contract a database records. */
export function layerSha256(files: { name: string; sha256: string }[]): string {
  return sha256(files.map((file) => `${file.name} ${file.sha256}\n`).join(""));
}

/**
 * The top-level statements of a file, each without the comments before it: semicolons inside quotes,
 * quoted identifiers, dollar-quoted bodies and comments do not end a statement.
 */
export function splitStatements(text: string): string[] {
  // One token at a time (sticky): a comment, a quoted string or identifier, a dollar-quoted body, a semicolon, or
  // a run of anything else. E'' strings escape with a backslash; a doubled quote is two adjacent quoted runs.
  const token = /--[^\n]*|\/\*[\s\S]*?\*\/|(?<![\w$])[eE]'(?:[^'\\]|\\[\s\S])*'|'[^']*'|"[^"]*"|(\$[A-Za-z_]*\$)[\s\S]*?\1|;|[^-/'"$;eE]+|[\s\S]/y;
  const statements: string[] = [];
  let start = 0;
  for (let match = token.exec(text); match != null && match[0] !== ""; match = token.exec(text)) {
    if (match[0] !== ";") continue;
    statements.push(text.slice(start, token.lastIndex));
    start = token.lastIndex;
  }
  statements.push(text.slice(start));
  return statements.map((statement) => statement.replace(/^(?:\s*(?:--[^\n]*\n|\/\*[\s\S]*?\*\/))*\s*/, "").trim()).filter((s) => s !== "" && s !== ";");
}

const NAME = String.raw`([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)`;
const RULES: [RegExp, (match: RegExpExecArray) => Pick<SqlStatement, "object" | "role">][] = [
  [new RegExp(String.raw`^create (?:or replace )?function ${NAME}\s*\(`), (m) => ({ object: `function ${m[1]}`, role: "define" })],
  [new RegExp(String.raw`^create (?:or replace )?view ${NAME}\b`), (m) => ({ object: `relation ${m[1]}`, role: "define" })],
  [new RegExp(String.raw`^comment on function ${NAME}\s*\(`), (m) => ({ object: `function ${m[1]}`, role: "attach" })],
  [new RegExp(String.raw`^comment on (?:view|table|materialized view) ${NAME}\b`), (m) => ({ object: `relation ${m[1]}`, role: "attach" })],
  [new RegExp(String.raw`^comment on column ${NAME}\.[a-z_][a-z0-9_]*\b`), (m) => ({ object: `relation ${m[1]}`, role: "attach" })],
  [new RegExp(String.raw`^comment on type ${NAME}\b`), (m) => ({ object: `type ${m[1]}`, role: "attach" })],
  [new RegExp(String.raw`^grant [a-z, ]+ on (?:table )?${NAME} to\b`), (m) => ({ object: `relation ${m[1]}`, role: "attach" })],
  [new RegExp(String.raw`^select chat_private\.grant_execute\('${NAME}\(`), (m) => ({ object: `function ${m[1]}`, role: "attach" })],
];

/** What each statement is about (see SqlStatement); the object of an unrecognised statement is the statement. */
export function classify(file: string, text: string): SqlStatement {
  const head = text.slice(0, 400).toLowerCase().replace(/\s+/g, " ");
  const digest = sha256(text);
  for (const [pattern, describe] of RULES) {
    const match = pattern.exec(head);
    if (match == null) continue;
    const { object, role } = describe(match);
    // An attachment's slot: what it sets (this comment, this grant), so that of two comments on one object in two
    // files (085 tags what 080 wrote) the later one is applied again whenever the earlier one is.
    const slot = role !== "attach" ? object
      : head.startsWith("comment") ? head.replace(/ is .*/, "") : head.startsWith("select") ? head.replace(/',.*/, "") : head;
    return { file, text, sha256: digest, object, role, slot };
  }
  return { file, text, sha256: digest, object: `statement ${digest}`, role: "other", slot: `statement ${digest}` };
}

export function statementsOf(files: SqlFile[]): SqlStatement[] {
  return files.flatMap((file) => splitStatements(file.text).map((text) => classify(file.name, text)));
}

/** file -> the checksums of the statements the database last applied from it. */
export type Recorded = Map<string, Set<string>>;

export async function tableExists(client: pg.ClientBase, name: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>("select to_regclass($1) is not null as found", [name]);
  return rows[0]!.found;
}

export async function recordedStatements(client: pg.ClientBase): Promise<Recorded> {
  const recorded: Recorded = new Map();
  if (!(await tableExists(client, "chatd_meta.repeatable_statements"))) return recorded;
  const { rows } = await client.query<{ file: string; sha256: string }>("select file, sha256 from chatd_meta.repeatable_statements");
  for (const row of rows) recorded.set(row.file, (recorded.get(row.file) ?? new Set()).add(row.sha256));
  return recorded;
}

/**
 * The statements a run applies, in file order:
 *   - a definition (CREATE OR REPLACE FUNCTION / VIEW) when its text is new, or a migration of this run changed
 *     the object it defines (`touched`: a migration may drop, rename or stub what a file defines);
 *   - a comment or grant when its text is new, when its object's definition is applied (a re-created object loses
 *     them), or when an earlier statement setting the same thing is applied (a later file's comment wins);
 *   - anything else (085's DO block, which tags comments that earlier statements and migrations wrote) when its
 *     text is new, after any migration, or when any statement before it is applied: it may build on any of them.
 * A statement is new when the database has not applied that text from that file.
 */
export function statementsToApply(statements: SqlStatement[], recorded: Recorded, touched: Set<string>,
  afterMigration: boolean): SqlStatement[] {
  const definedNow = new Set<string>();
  const setNow = new Set<string>();
  let anyBefore = false;
  return statements.filter((statement) => {
    const isNew = !(recorded.get(statement.file)?.has(statement.sha256) ?? false);
    const apply = isNew
      || (statement.role === "define" && touched.has(statement.object))
      || (statement.role === "attach" && (definedNow.has(statement.object) || setNow.has(statement.slot)))
      || (statement.role === "other" && (afterMigration || anyBefore));
    if (apply && statement.role === "define") definedNow.add(statement.object);
    if (apply && statement.role === "attach") setNow.add(statement.slot);
    anyBefore ||= apply;
    return apply;
  });
}

/**
 * A fingerprint of every function and view of chatd's schemas (definition, rights, comments), by the object names
 * of SqlStatement: compared before and after the migrations of a run, it says which objects they changed.
 */
export async function objectFingerprints(client: pg.ClientBase): Promise<Map<string, string>> {
  const { rows } = await client.query<{ object: string; fingerprint: string }>(`
    select 'function ' || n.nspname || '.' || p.proname as object,
           md5(string_agg(pg_catalog.pg_get_functiondef(p.oid) || coalesce(p.proacl::text, '')
               || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), ''), ',' order by p.oid::regprocedure::text)) as fingerprint
    from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('chat_public', 'chat_private') and p.prokind in ('f', 'p')
    group by 1
    union all
    select 'relation ' || n.nspname || '.' || c.relname,
           md5(pg_catalog.pg_get_viewdef(c.oid) || coalesce(c.relacl::text, '') || coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '')
               || coalesce((select string_agg(a.attname || pg_catalog.format_type(a.atttypid, a.atttypmod)
                                   || coalesce(pg_catalog.col_description(c.oid, a.attnum), ''), ',' order by a.attnum)
                            from pg_catalog.pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), ''))
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('chat_public', 'chat_private') and c.relkind = 'v'`);
  return new Map(rows.map((row) => [row.object, row.fingerprint]));
}

/** Objects whose fingerprint differs between `before` and `after` (changed, created or dropped). */
export function changedObjects(before: Map<string, string>, after: Map<string, string>): Set<string> {
  const changed = new Set<string>();
  for (const [object, fingerprint] of before) if (after.get(object) !== fingerprint) changed.add(object);
  for (const object of after.keys()) if (!before.has(object)) changed.add(object);
  return changed;
}

/**
 * Applies `toApply` and records what the database now has from `files`, in the caller's open transaction; writes
 * no row where the record is already right. Returns the names of the files with a statement applied.
 */
export async function applyStatements(client: pg.ClientBase, toApply: SqlStatement[], files: SqlFile[],
  all: SqlStatement[], recorded: Recorded): Promise<string[]> {
  for (const statement of toApply) {
    try {
      await client.query(statement.text);
    } catch (error) {
      throw new Error(`sql/${statement.file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  await client.query(`create table if not exists chatd_meta.repeatable_statements (
    file text not null, sha256 text not null, primary key (file, sha256))`);
  const wanted = new Map(files.map((file) => [file.name, new Set(all.filter((s) => s.file === file.name).map((s) => s.sha256))]));
  for (const [file, shas] of recorded) {
    const stale = [...shas].filter((sha) => !(wanted.get(file)?.has(sha) ?? false));
    if (stale.length > 0) await client.query("delete from chatd_meta.repeatable_statements where file = $1 and sha256 = any ($2)", [file, stale]);
  }
  for (const [file, shas] of wanted) {
    const missing = [...shas].filter((sha) => !(recorded.get(file)?.has(sha) ?? false));
    if (missing.length > 0) {
      await client.query("insert into chatd_meta.repeatable_statements (file, sha256) select $1, unnest($2::text[])", [file, missing]);
    }
  }
  const { rows } = await client.query<{ name: string; sha256: string }>("select name, sha256 from chatd_meta.repeatable_sql");
  const fileShas = new Map(rows.map((row) => [row.name, row.sha256]));
  const gone = [...fileShas.keys()].filter((name) => !wanted.has(name));
  if (gone.length > 0) await client.query("delete from chatd_meta.repeatable_sql where name = any ($1)", [gone]);
  for (const file of files) {
    if (fileShas.get(file.name) === file.sha256) continue;
    await client.query(
      `insert into chatd_meta.repeatable_sql (name, sha256) values ($1, $2)
       on conflict (name) do update set sha256 = excluded.sha256, applied_at = now()`, [file.name, file.sha256]);
  }
  return [...new Set(toApply.map((statement) => statement.file))];
}
