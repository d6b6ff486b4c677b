// Authentication: an HS256 JWT whose `sub` is a chat_public.users id. A valid token runs the request as chat_user
// with `jwt.claims.sub`; no token runs it as chat_anonymous (which sees no rows). A token that is present but
// invalid (forged, expired, wrong audience) is refused instead of silently downgraded, so clients notice.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import jwt from "jsonwebtoken";
import { projectRoot } from "../db/database.ts";

export const TOKEN_AUDIENCE = "chatd";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a generated development secret is kept (beside the embedded database, ignored by git). */
export const defaultSecretFile = () => join(projectRoot, ".chatd", "jwt-secret");

/**
 * CHATD_JWT_SECRET when set; otherwise a generated secret persisted with mode 0600, so that development tokens
 * survive restarts. At least 32 bytes: HS256 with a short secret can be brute-forced offline.
 */
export function resolveJwtSecret(file = defaultSecretFile()): string {
  const fromEnv = process.env.CHATD_JWT_SECRET;
  if (fromEnv) {
    if (Buffer.byteLength(fromEnv) < 32) throw new Error("CHATD_JWT_SECRET must have at least 32 bytes");
    return fromEnv;
  }
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
  }
  chmodSync(file, 0o600);
  return readFileSync(file, "utf8").trim();
}

export function signToken(secret: string, userId: string, expiresInSeconds = 30 * 24 * 3600): string {
  return jwt.sign({}, secret, { algorithm: "HS256", subject: userId, audience: TOKEN_AUDIENCE, expiresIn: expiresInSeconds });
}

export type Identity = { kind: "anonymous" } | { kind: "user"; userId: string } | { kind: "invalid"; reason: string };

/** Reads `Bearer <token>` from an Authorization header value (HTTP) or connection parameter (websocket). */
export function identify(secret: string, authorization: unknown): Identity {
  if (authorization === undefined || authorization === null || authorization === "") return { kind: "anonymous" };
  if (typeof authorization !== "string") return { kind: "invalid", reason: "authorization must be a string" };
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!match?.[1]) return { kind: "invalid", reason: "authorization must be 'Bearer <token>'" };
  try {
    const claims = jwt.verify(match[1], secret, { algorithms: ["HS256"], audience: TOKEN_AUDIENCE });
    const sub = typeof claims === "object" ? claims.sub : undefined;
    if (typeof sub !== "string" || !UUID.test(sub)) return { kind: "invalid", reason: "the token's sub is not a user id" };
    return { kind: "user", userId: sub };
  } catch (error) {
    const expired = error instanceof jwt.TokenExpiredError;
    return { kind: "invalid", reason: expired ? "the token has expired" : "the token is not valid" };
  }
}

/** The per-transaction settings PostGraphile applies with set_config(..., true). */
export function pgSettingsFor(identity: Identity, statementTimeoutMs: number): Record<string, string> {
  const base = { statement_timeout: String(statementTimeoutMs) };
  if (identity.kind === "user") return { ...base, role: "chat_user", "jwt.claims.sub": identity.userId };
  return { ...base, role: "chat_anonymous", "jwt.claims.sub": "" };
}
