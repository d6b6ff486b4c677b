// Loads the vendored JSON-Schema-Test-Suite draft7 files (test/fixtures/json-schema-test-suite) as
// JSON texts with every number literal kept as written (JSON.parse's source text access), so the
// exact validator sees `1.0` and `12345678901234567890` as the suite wrote them.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const SUITE_DIR = join(import.meta.dirname, "..", "fixtures", "json-schema-test-suite", "draft7");

export interface SuiteCase {
  description: string;
  dataText: string;
  valid: boolean;
}

export interface SuiteGroup {
  /** `file.json: group description`, the name the out-of-subset list uses. */
  id: string;
  schemaText: string;
  tests: SuiteCase[];
}

class Literal {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export type Raw = null | boolean | string | Literal | Raw[] | { [k: string]: Raw };

export function parseKeepingNumbers(text: string): Raw {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined ? new Literal(context.source) : value) as Raw;
}

export function stringify(v: Raw): string {
  if (v instanceof Literal) return v.text;
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stringify).join(",")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${stringify(x)}`).join(",")}}`;
}

export function loadSuite(): SuiteGroup[] {
  const groups: SuiteGroup[] = [];
  for (const file of readdirSync(SUITE_DIR).filter((f) => f.endsWith(".json")).sort()) {
    const raw = parseKeepingNumbers(readFileSync(join(SUITE_DIR, file), "utf8")) as unknown as
      { description: string; schema: Raw; tests: { description: string; data: Raw; valid: boolean }[] }[];
    for (const g of raw) {
      groups.push({
        id: `${file}: ${g.description}`,
        schemaText: stringify(g.schema),
        tests: g.tests.map((t) => ({ description: t.description, dataText: stringify(t.data), valid: t.valid })),
      });
    }
  }
  return groups;
}
