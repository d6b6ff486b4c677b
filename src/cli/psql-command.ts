// `chatd psql [-- psql arguments]`: psql on chatd's database, wherever it is (DATABASE_URL, or the embedded server,
// whose port changes on every start: `npm start`'s running one is shared, else one is started for the session).
// The password travels in PGPASSWORD, not on the command line, where other users' `ps` would see it.
import { spawn } from "node:child_process";
import type { Command } from "commander";
import { connectionParameter, withParameters } from "../db/connection-string.ts";
import type { ResolvedDatabase } from "../db/database.ts";
import { withInterruptsDeferred } from "./lifecycle.ts";

/** The connection string without its password, and the password apart (empty when it has none). */
export function splitPassword(url: string): { url: string; password: string } {
  const password = connectionParameter(url, "password") ?? "";
  if (password === "") return { url, password };
  return { url: withParameters(url, { password: null }, { drop: "password" }), password };
}

export function registerPsqlCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  program
    .command("psql")
    .description("open psql on chatd's database (arguments after -- go to psql, e.g. -- -c 'select 1')")
    .argument("[args...]", "arguments for psql")
    .action(async (args: string[]) => {
      const db = await open();
      try {
        const { url, password } = splitPassword(db.url);
        const env = password === "" ? process.env : { ...process.env, PGPASSWORD: password };
        // Ctrl-C in a terminal reaches this process too; psql uses it to cancel a query, so it must not end us.
        const code = await withInterruptsDeferred(() => new Promise<number>((resolve) => {
          const child = spawn("psql", [url, ...args], { stdio: "inherit", env });
          child.on("error", (error: NodeJS.ErrnoException) => {
            console.error(error.code === "ENOENT"
              ? `psql is not on PATH (it comes with PostgreSQL's client tools); connect any client to ${url}`
              : `psql could not start: ${error.message}`);
            resolve(1);
          });
          child.on("exit", (status) => resolve(status ?? 1));
        }));
        process.exitCode = code;
      } finally {
        await db.stop();
      }
    });
}
