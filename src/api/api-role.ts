// The API connects as `chatd_api` (login, noinherit, no privileges of its own; it only switches to chat_user or
// chat_anonymous per transaction). The role has no password after `chatd migrate`; this module gives it one and
// derives the connection string from DATABASE_URL:
//   1. CHATD_API_DATABASE_URL, when set, is used as is and the role is never altered (operator-managed).
//   2. Otherwise the password is CHATD_API_PASSWORD or a generated one persisted in .chatd/chatd-api-password
//      (0600, beside the embedded database), and `alter role chatd_api password ...` runs at start-up through the
//      admin connection, so a rotated env value takes effect on the next start.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { projectRoot } from "../db/database.ts";

export const API_ROLE = "chatd_api";
export const defaultPasswordFile = () => join(projectRoot, ".chatd", "chatd-api-password");

export function apiPassword(file = defaultPasswordFile()): string {
  const fromEnv = process.env.CHATD_API_PASSWORD;
  if (fromEnv) return fromEnv;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(24).toString("base64url"), { mode: 0o600, flag: "wx" });
  }
  return readFileSync(file, "utf8").trim();
}

/** DATABASE_URL with the user and password replaced by the API role's. */
export function withApiRole(databaseUrl: string, password: string | null): string {
  const url = new URL(databaseUrl);
  url.username = API_ROLE;
  url.password = password === null ? "" : encodeURIComponent(password);
  return url.toString();
}

/** Resolves the API's connection string, setting the role's password through `admin` when chatd manages it. */
export async function resolveApiConnection(admin: pg.Pool, databaseUrl: string): Promise<string> {
  const explicit = process.env.CHATD_API_DATABASE_URL;
  if (explicit) return explicit;
  const password = apiPassword();
  try {
    await admin.query(`alter role ${API_ROLE} with login password ${pg.escapeLiteral(password)}`);
  } catch (error) {
    throw new Error(`cannot set the password of ${API_ROLE} (the DATABASE_URL user needs CREATEROLE); ` +
      `set CHATD_API_DATABASE_URL to a connection string for ${API_ROLE} instead`, { cause: error });
  }
  return withApiRole(databaseUrl, password);
}
