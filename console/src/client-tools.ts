// The composer's "Client tools" field: a JSON array of client-side tools, `{name, description?, inputSchema}`
// (the AI SDK's spelling; chatd's `input_schema` is accepted too), declared when a chat is created. Only what is
// needed to build the request is checked here (JSON, an array); the rules for each tool are chatd's own
// (check_dynamic_tools), and its refusal is shown at this field by its name, e.g. `dynamic_tools[1].name`.
import type { Validation } from "@chatd/client";

export type ClientTools = { tools: unknown[]; errors: [] } | { tools: null; errors: Validation[] };

export function parseClientTools(text: string): ClientTools {
  if (text.trim() === "") return { tools: [], errors: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { tools: null, errors: [{ field: "dynamic_tools", detail: `is not JSON (${(error as Error).message})` }] };
  }
  if (!Array.isArray(value)) return { tools: null, errors: [{ field: "dynamic_tools", detail: "must be a JSON array of {name, description, inputSchema}" }] };
  return { tools: value, errors: [] };
}
