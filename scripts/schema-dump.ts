// `npm run schema:dump`: writes schema.sql, the normalized schema of a fresh install (a throw-away database on the
// server of DATABASE_URL, else the embedded one). Run it after changing migrations/ or sql/ and commit the result:
// test/migrate/schema-dump.test.ts fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { projectRoot, resolveDatabase, withDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { dumpSchema } from "../src/db/schema-dump.ts";

const db = await resolveDatabase();
const name = `chatd_schema_dump_${process.pid}`;
const admin = new pg.Client({ connectionString: db.url });
await admin.connect();
try {
  await admin.query(`create database ${pg.escapeIdentifier(name)}`);
  const url = withDatabase(db.url, name);
  await migrate(url);
  const file = join(projectRoot, "schema.sql");
  writeFileSync(file, await dumpSchema(url));
  console.log(`wrote ${file}`);
} finally {
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await admin.end();
  await db.stop();
}
