// The GraphQL schema as SDL (sorted, so the committed schema.graphql diffs cleanly), built by introspecting the
// database as the API role: PostGraphile hides what that role cannot use, so the role matters.
import pg from "pg";
import { makeSchema } from "postgraphile";
import { lexicographicSortSchema, printSchema } from "postgraphile/graphql";
import { makePreset } from "./preset.ts";

export async function buildSchemaText(apiDatabaseUrl: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: apiDatabaseUrl, max: 2 });
  try {
    const { schema } = await makeSchema(makePreset({ pool, jwtSecret: "schema-export-only", graphiql: false }));
    return `${printSchema(lexicographicSortSchema(schema))}\n`;
  } finally {
    await pool.end();
  }
}
