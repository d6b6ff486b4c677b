// Re-indents JSON text without parsing it into JavaScript values, so a receipt's numbers keep every digit
// (JSON.parse would turn 1234567890123456789012345 into 1.2345678901234568e+24).
export function prettyJson(text: string): string {
  let out = "";
  let depth = 0;
  let inString = false;
  const newline = () => "\n" + "  ".repeat(depth);
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') { inString = true; out += c; }
    else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      const next = text.slice(i + 1).trimStart()[0];
      if (next === close) { out += c + close; i = text.indexOf(close, i + 1); continue; }
      depth += 1;
      out += c + newline();
    } else if (c === "}" || c === "]") { depth -= 1; out += newline() + c; }
    else if (c === ",") out += "," + newline();
    else if (c === ":") out += ": ";
    else if (!/\s/.test(c)) out += c;
  }
  return out;
}
