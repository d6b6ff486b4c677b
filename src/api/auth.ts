// Authentication: an HS256 JWT whose `sub` is a chat_public.users id. A valid token runs the request as chat_user
// with `jwt.claims.sub`; no token runs it as chat_anonymous (which sees no rows). A token that is present but
// invalid (forged, expired, wrong audience, no `exp`, or valid for longer than CHATD_TOKEN_MAX_LIFETIME_DAYS) is
// refused instead of silently downgraded, so clients notice.
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

const DAY_SECONDS = 86_400;
export const DEFAULT_TOKEN_MAX_LIFETIME_DAYS = 90;

/** CHATD_TOKEN_MAX_LIFETIME_DAYS (default 90): the longest a token may be valid, from its `iat` (or now) to `exp`. */
export function maxTokenLifetimeSeconds(): number {
  const raw = process.env.CHATD_TOKEN_MAX_LIFETIME_DAYS;
  const days = raw === undefined || raw === "" ? DEFAULT_TOKEN_MAX_LIFETIME_DAYS : Number(raw);
  if (!Number.isFinite(days) || days <= 0) throw new Error("CHATD_TOKEN_MAX_LIFETIME_DAYS must be a positive number of days");
  return Math.round(days * DAY_SECONDS);
}

export function signToken(secret: string, userId: string, expiresInSeconds = 30 * DAY_SECONDS): string {
  if (!(expiresInSeconds > 0) || expiresInSeconds > maxTokenLifetimeSeconds()) {
    throw new Error(`a token's validity must be positive and at most CHATD_TOKEN_MAX_LIFETIME_DAYS (${maxTokenLifetimeSeconds() / DAY_SECONDS} days)`);
  }
  return jwt.sign({}, secret, { algorithm: "HS256", subject: userId, audience: TOKEN_AUDIENCE, expiresIn: expiresInSeconds });
}

/** A user's `expiresAt` is the token's `exp` (seconds): an open stream ends there (http/streams.ts). */
export type Identity = { kind: "anonymous" } | { kind: "user"; userId: string; expiresAt: number } | { kind: "invalid"; reason: string };

/** Reads `Bearer <token>` from an Authorization header value (HTTP) or connection parameter (websocket). */
export function identify(secret: string, authorization: unknown, maxLifetimeSeconds = maxTokenLifetimeSeconds()): Identity {
  if (authorization === undefined || authorization === null || authorization === "") return { kind: "anonymous" };
  if (typeof authorization !== "string") return { kind: "invalid", reason: "authorization must be a string" };
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!match?.[1]) return { kind: "invalid", reason: "authorization must be 'Bearer <token>'" };
  try {
    const claims = jwt.verify(match[1], secret, { algorithms: ["HS256"], audience: TOKEN_AUDIENCE });
    if (typeof claims !== "object") return { kind: "invalid", reason: "the token is not valid" };
    const sub = claims.sub;
    if (typeof sub !== "string" || !UUID.test(sub)) return { kind: "invalid", reason: "the token's sub is not a user id" };
    // A token without exp would never expire; one valid for longer than the maximum is refused whatever its iat says.
    if (typeof claims.exp !== "number") return { kind: "invalid", reason: "the token has no expiry (exp)" };
    const now = Math.floor(Date.now() / 1000);
    const issued = typeof claims.iat === "number" ? Math.min(claims.iat, now) : now;
    if (claims.exp - issued > maxLifetimeSeconds) {
      return { kind: "invalid", reason: "the token is valid for longer than the maximum lifetime" };
    }
    return { kind: "user", userId: sub, expiresAt: claims.exp };
  } catch (error) {
    const expired = error instanceof jwt.TokenExpiredError;
    return { kind: "invalid", reason: expired ? "the token has expired" : "the token is not valid" };
  }
}

/** The per-transaction settings PostGraphile applies with set_config(..., true). */
/** Only who the caller is matters here, not until when: the /v1 routes pass a user id alone. */
export function pgSettingsFor(identity: { kind: "anonymous" | "invalid" } | { kind: "user"; userId: string }, statementTimeoutMs: number): Record<string, string> {
  const base = { statement_timeout: String(statementTimeoutMs) };
  if (identity.kind === "user") return { ...base, role: "chat_user", "jwt.claims.sub": identity.userId };
  return { ...base, role: "chat_anonymous", "jwt.claims.sub": "" };
}
