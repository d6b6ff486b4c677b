// Classification of the request-mapping warnings a provider package reports in
// `stream-start`. Fail closed on warnings that change which tools the model
// sees or how it may choose them; record (but tolerate) schema rewrites, because chatd
// validates against the original schema on the server.
import type { SharedV4Warning } from "@ai-sdk/provider";
import type { ProviderWarning, ToolSchemaRewrite, ToolSpec } from "./types.ts";

const MAX_DETAIL = 300;

export interface WarningClassification {
  warnings: ProviderWarning[];
  toolSchemaRewrites: ToolSchemaRewrite[];
  /** Set when a warning makes the request differ from what chatd asked for in a way that matters. */
  fatal?: string;
}

function clip(text: string): string {
  // Some package warnings embed fragments of the prompt; keep them short in logs.
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

export function neutralWarning(w: SharedV4Warning): ProviderWarning {
  switch (w.type) {
    case "unsupported":
    case "compatibility":
      return { type: w.type, feature: w.feature, ...(w.details != null ? { details: clip(w.details) } : {}) };
    case "deprecated":
      return { type: "deprecated", feature: w.setting, details: clip(w.message) };
    case "other":
      return { type: "other", details: clip(w.message) };
  }
}

const LOOKAROUND = /\(\?<?[=!]/;

/** Does any schema position (or, conservatively, any key) of `schema` trigger `test`? */
function schemaHas(schema: unknown, test: (key: string, value: unknown) => boolean): boolean {
  if (schema == null || typeof schema !== "object") return false;
  if (Array.isArray(schema)) return schema.some((v) => schemaHas(v, test));
  for (const [key, value] of Object.entries(schema)) {
    if (test(key, value) || schemaHas(value, test)) return true;
  }
  return false;
}

function rewrittenTools(feature: string, tools: ToolSpec[]): string[] {
  const test =
    feature === "JSON Schema propertyNames"
      ? (key: string) => key === "propertyNames"
      : feature === "JSON Schema pattern with regex lookaround"
        ? (key: string, value: unknown) => key === "pattern" && typeof value === "string" && LOOKAROUND.test(value)
        : undefined;
  if (test == null) return [];
  return tools.filter((t) => schemaHas(t.inputSchema, test)).map((t) => t.name);
}

/** Tool-dropping features as the packages name them. */
function dropsTool(feature: string): boolean {
  return (
    feature.startsWith("tool type:") ||
    feature.startsWith("provider-defined tool") ||
    feature.startsWith("function tool ") ||
    feature.startsWith("tool ") ||
    feature.startsWith("allowedTools entry")
  );
}

export function classifyWarnings(raw: SharedV4Warning[], tools: ToolSpec[]): WarningClassification {
  const warnings = raw.map(neutralWarning);
  const toolSchemaRewrites: ToolSchemaRewrite[] = [];
  let fatal: string | undefined;
  for (const w of raw) {
    if (w.type === "compatibility" && w.feature.startsWith("JSON Schema")) {
      const names = rewrittenTools(w.feature, tools);
      for (const tool of names.length > 0 ? names : ["*"]) {
        toolSchemaRewrites.push({ tool, detail: `${w.feature} removed by the provider package` });
      }
      continue;
    }
    if (w.type !== "unsupported") continue;
    if (w.feature === "toolChoice") {
      // Anthropic downgrades a forced choice to auto and may send only the named tool.
      fatal ??= "the provider downgraded the tool choice (and may have dropped tools)";
    } else if (dropsTool(w.feature)) {
      fatal ??= `the provider dropped a tool (${w.feature})`;
    } else if (w.feature === "strict") {
      // Strict decoding was requested but the model cannot do it; the package silently
      // drops the flag, so the request is not what the configuration promised.
      fatal ??= "strict tools are not supported by this model";
    }
  }
  return fatal != null ? { warnings, toolSchemaRewrites, fatal } : { warnings, toolSchemaRewrites };
}
