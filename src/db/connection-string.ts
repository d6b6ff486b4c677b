// Edits of a connection string that keep every form pg accepts. pg reads a connection string with
// pg-connection-string, which takes a URL with a host, a URL whose host is a `host=` parameter (a Unix socket
// directory: the libpq form of local installs and of Cloud SQL's proxy), a `socket:` URL, "/socket/dir dbname", and
// leaves every field the string does not give to the PG* environment variables. The WHATWG URL class cannot parse a
// URL with credentials and no host, and silently ignores a user name set on a URL without one; so chatd never
// rebuilds a connection string as a URL: an edit adds or replaces query parameters (which pg-connection-string reads
// before the URL's own user, password, host and port) and leaves the rest as the operator wrote it.
import { parse } from "pg-connection-string";

/** pg-connection-string's "/socket/dir dbname" shorthand, as the `socket:` URL it means (it cannot take parameters). */
function withQuery(connectionString: string): string {
  if (!connectionString.startsWith("/")) return connectionString;
  const [dir = "", database] = connectionString.split(" ");
  return `socket:${encodeURI(dir)}${database ? `?db=${encodeURIComponent(database)}` : ""}`;
}

/**
 * `connectionString` with the query parameters `set` (a value of null removes the parameter); `drop` removes the
 * URL's own `user:password@` ("userinfo") or only its password, so that it cannot stand in for a missing one.
 */
export function withParameters(connectionString: string, set: Record<string, string | null>,
  options: { drop?: "userinfo" | "password" } = {}): string {
  const text = withQuery(connectionString);
  const hash = text.indexOf("#");
  const body = hash < 0 ? text : text.slice(0, hash);
  const question = body.indexOf("?");
  let base = question < 0 ? body : body.slice(0, question);
  const params = new URLSearchParams(question < 0 ? "" : body.slice(question + 1));
  for (const [name, value] of Object.entries(set)) {
    if (value === null) params.delete(name);
    else params.set(name, value);
  }
  if (options.drop === "userinfo") base = base.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1");
  if (options.drop === "password") base = base.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^/?#]*@/i, "$1@");
  const query = params.toString();
  return query === "" ? base : `${base}?${query}`;
}

/** One parameter of the connection as pg will read it (e.g. `options`, `password`), if the string gives it. */
export function connectionParameter(connectionString: string, name: "options" | "password" | "user"): string | undefined {
  const value = (parse(withQuery(connectionString)) as Record<string, unknown>)[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * `connectionString` whose connections start with each of `settings` set (`-c name=value` startup options, so they
 * hold before the first query of every connection), after the startup options the string or PGOPTIONS gives.
 */
export function withStartupSettings(connectionString: string, settings: Record<string, string>): string {
  const added = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || !/^[a-z_][a-z0-9_]*$/.test(value)) throw new Error(`not a plain setting: ${name}=${value}`);
    return `-c ${name}=${value}`;
  });
  const given = connectionParameter(connectionString, "options") ?? process.env.PGOPTIONS;
  return withParameters(connectionString, { options: [given, ...added].filter(Boolean).join(" ") });
}
