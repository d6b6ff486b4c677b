// `npm run schema:export`: writes schema.graphql from a migrated database (DATABASE_URL, else the embedded one),
// introspected as chatd_api. test/api/schema.test.ts fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { resolveApiConnection } from "../src/api/api-role.ts";
import { buildSchemaText } from "../src/api/schema-text.ts";
import { projectRoot, resolveDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";

const db = await resolveDatabase();
try {
  await migrate(db.url);
  const admin = new pg.Pool({ connectionString: db.url, max: 1 });
  const apiUrl = await resolveApiConnection(admin, db.url).finally(() => admin.end());
  const file = join(projectRoot, "schema.graphql");
  writeFileSync(file, await buildSchemaText(apiUrl));
  console.log(`wrote ${file}`);
} finally {
  await db.stop();
}
