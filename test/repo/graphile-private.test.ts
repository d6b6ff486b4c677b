// Graphile Worker's tables (graphile_worker._private_jobs, _private_tasks, ...) are its own: a release may change
// them without notice, so production code writes to them only through its public functions (add_job, remove_job,
// complete_jobs, force_unlock_workers, ...). Reads of a column the public view lacks (the payload) are allowed.
// Tests may write there to stage a crashed worker: only sql/, migrations/, src/ and worker/ are checked.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

interface Source { file: string; text: string }

// insert into / update / delete from / truncate / merge into / copy a private table, quoted or not.
const PRIVATE_WRITE = /\b(insert\s+into|update|delete\s+from|truncate(?:\s+table)?|merge\s+into|copy)\s+(?:only\s+)?"?graphile_worker"?\s*\.\s*"?_private_\w+/gi;

/** Each write to a private table, as `file:line: statement start`; SQL comments do not count. */
function privateWrites(sources: Source[]): string[] {
  return sources.flatMap(({ file, text }) => {
    const code = file.endsWith(".sql") ? text.replace(/--[^\n]*/g, (c) => " ".repeat(c.length)) : text;
    return [...code.matchAll(PRIVATE_WRITE)].map((m) => `${file}:${code.slice(0, m.index).split("\n").length}: ${m[0].replace(/\s+/g, " ")}`);
  });
}

function read(dir: string, keep: (name: string) => boolean): Source[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => ({ file: relative(projectRoot, path), text: readFileSync(path, "utf8") }));
}

test("the check finds writes to Graphile Worker's private tables, not reads, comments or public functions", () => {
  const planted = [
    { file: "sql/x.sql", text: "select 1;\n-- delete from graphile_worker._private_jobs (a comment)\n" +
      "delete from graphile_worker._private_jobs j using graphile_worker.jobs v where v.id = j.id;\n" +
      "select j.payload from graphile_worker._private_jobs j;\nperform graphile_worker.complete_jobs(array[1]);\n" +
      'UPDATE "graphile_worker"."_private_job_queues" set locked_at = null;' },
    { file: "worker/y.ts", text: 'await pool.query("insert into graphile_worker._private_tasks (identifier) values ($1)");' },
  ];
  assert.equal(privateWrites(planted), [
    "sql/x.sql:3: delete from graphile_worker._private_jobs",
    'sql/x.sql:6: UPDATE "graphile_worker"."_private_job_queues',
    "worker/y.ts:1: insert into graphile_worker._private_tasks",
  ]);
});

test("production SQL and code write to Graphile Worker's tables only through its public functions", () => {
  const sources = [
    ...read(join(projectRoot, "sql"), (name) => name.endsWith(".sql")),
    ...read(join(projectRoot, "migrations"), (name) => name.endsWith(".sql")),
    ...read(join(projectRoot, "src"), (name) => name.endsWith(".ts")),
    ...read(join(projectRoot, "worker"), (name) => name.endsWith(".ts")),
  ];
  assert.ok(sources.some(({ file }) => file === "sql/070_worker_transitions.sql"), "sql/ was read");
  assert.equal(privateWrites(sources), []);
});

test.run();
