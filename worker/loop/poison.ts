// Content PostgreSQL refuses to store, screened before a commit so that it can never fail the same way on every
// attempt: U+0000 (jsonb and text reject it) and unpaired UTF-16 surrogates (jsonb rejects their escapes). Both are
// replaced by U+FFFD, the Unicode replacement character, in model text, reasoning, tool arguments and tool results
// alike (docs/workers.md). A validated finalizer value never holds either: the JSON boundary refuses them
// (src/structured/json-boundary.ts), so its exact text is never changed here.

// An escape is only one when preceded by an even number of backslashes (`\\u0000` is a backslash, then "u0000").
const UNESCAPED = String.raw`(?<!\\)((?:\\\\)*)`;
const NUL_ESCAPE = new RegExp(`${UNESCAPED}\\\\u0000`, "g");
const LONE_HIGH = new RegExp(`${UNESCAPED}\\\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\\\u[dD][c-fC-F][0-9a-fA-F]{2})`, "g");
const LONE_LOW = new RegExp(`(?<!\\\\u[dD][89abAB][0-9a-fA-F]{2})${UNESCAPED}\\\\u[dD][c-fC-F][0-9a-fA-F]{2}`, "g");

export interface Screened {
  text: string;
  /** How many characters were replaced. */
  replaced: number;
}

/** JSON text (as JSON.stringify writes it: such characters appear only as escapes) with them replaced. */
export function screenJson(json: string): Screened {
  if (!json.includes("\\u")) return { text: json, replaced: 0 };
  let replaced = 0;
  const swap = (_match: string, backslashes: string) => {
    replaced += 1;
    return `${backslashes}\\ufffd`;
  };
  const text = json.replace(NUL_ESCAPE, swap).replace(LONE_HIGH, swap).replace(LONE_LOW, swap);
  return { text, replaced };
}

/** A plain string (a text parameter) with such characters replaced. */
export function screenText(text: string): Screened {
  const wellFormed = text.toWellFormed();
  const screened = wellFormed.includes("\u0000") ? wellFormed.replaceAll("\u0000", "\ufffd") : wellFormed;
  if (screened === text) return { text, replaced: 0 };
  let replaced = 0;
  for (let i = 0; i < text.length; i += 1) if (screened[i] !== text[i]) replaced += 1;
  return { text: screened, replaced };
}
