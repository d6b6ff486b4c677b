// The API connects as `chatd_api` (login, noinherit; of its own it may only call chat_private.service_gauges, for
// /metrics, and otherwise switches to chat_user or chat_anonymous per transaction). The role has no password after
// `chatd migrate`; this module gives it one and derives the connection string from DATABASE_URL:
//   1. CHATD_API_DATABASE_URL, when set, is used as is and the role is never altered (operator-managed).
//   2. Otherwise the password is CHATD_API_PASSWORD or a generated one persisted in .chatd/chatd-api-password
//      (0600, beside the embedded database), and `alter role chatd_api password ...` runs at start-up through the
//      owner's connection, so a rotated env value takes effect on the next start.
// Either way the owner's connection serves start-up only (src/cli/main.ts ends it once the API listens).
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { withParameters } from "../db/connection-string.ts";
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

/**
 * DATABASE_URL with the user and password replaced by the API role's: any connection string pg accepts, as
 * parameters that pg reads before the URL's own user and password (src/db/connection-string.ts).
 */
export function withApiRole(databaseUrl: string, password: string | null): string {
  return withParameters(databaseUrl, { user: API_ROLE, password }, { drop: "userinfo" });
}

/**
 * Resolves the API's connection string. When chatd manages the role's password, it is set through `admin` (the
 * owner's pool) and the API's connection string is `databaseUrl` (DATABASE_URL) with the role's name and password.
 */
export async function resolveApiConnection(admin: pg.Pool | undefined, databaseUrl: string | undefined): Promise<string> {
  const explicit = process.env.CHATD_API_DATABASE_URL;
  if (explicit) return explicit;
  if (admin == null || !databaseUrl) {
    throw new Error(`set CHATD_API_DATABASE_URL, or give the API the owner's DATABASE_URL to set ${API_ROLE}'s password`);
  }
  const password = apiPassword();
  try {
    await admin.query(`alter role ${API_ROLE} with login password ${pg.escapeLiteral(password)}`);
  } catch (error) {
    throw new Error(`cannot set the password of ${API_ROLE} (the DATABASE_URL user needs CREATEROLE); ` +
      `set CHATD_API_DATABASE_URL to a connection string for ${API_ROLE} instead`, { cause: error });
  }
  return withApiRole(databaseUrl, password);
}
