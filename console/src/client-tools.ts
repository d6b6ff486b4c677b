// The composer's "Client tools" field: a JSON array of client-side tools, `{name, description?, inputSchema}`
// (the AI SDK's spelling; chatd's `input_schema` is accepted too), declared when a chat is created. The checks
// here mirror the server's so that a typo is shown at the field before anything is sent; the server checks again
// and its refusals are shown at the same field. Both name fields as the API does: `dynamic_tools[i].name`.
import type { Validation } from "@chatd/client";

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The structured-output finalizer's tool: never a client tool. */
const RESERVED = "coder_structured_output";
const KNOWN = new Set(["name", "description", "inputSchema", "input_schema", "plan_safe"]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export type ClientTools = { tools: Record<string, unknown>[]; errors: [] } | { tools: null; errors: Validation[] };

export function parseClientTools(text: string): ClientTools {
  if (text.trim() === "") return { tools: [], errors: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { tools: null, errors: [{ field: "dynamic_tools", detail: `is not JSON (${(error as Error).message})` }] };
  }
  if (!Array.isArray(value)) return { tools: null, errors: [{ field: "dynamic_tools", detail: "must be a JSON array of {name, description, inputSchema}" }] };
  const errors: Validation[] = [];
  const names = new Set<string>();
  value.forEach((tool: unknown, i) => {
    const at = `dynamic_tools[${i}]`;
    if (!isObject(tool)) return void errors.push({ field: at, detail: "must be an object {name, description, inputSchema}" });
    if (typeof tool.name !== "string" || !NAME.test(tool.name)) errors.push({ field: `${at}.name`, detail: "must match ^[A-Za-z0-9_-]{1,64}$" });
    else if (tool.name === RESERVED) errors.push({ field: `${at}.name`, detail: `${RESERVED} is reserved for the structured output finalizer` });
    else if (names.has(tool.name)) errors.push({ field: `${at}.name`, detail: `${tool.name} is declared twice` });
    else names.add(tool.name);
    if (tool.description !== undefined && typeof tool.description !== "string") errors.push({ field: `${at}.description`, detail: "must be a string" });
    if (!isObject(tool.inputSchema ?? tool.input_schema)) errors.push({ field: `${at}.inputSchema`, detail: "must be a JSON Schema object" });
    const unknown = Object.keys(tool).filter((key) => !KNOWN.has(key));
    if (unknown.length > 0) errors.push({ field: at, detail: `has unknown fields: ${unknown.join(", ")}` });
  });
  return errors.length > 0 ? { tools: null, errors } : { tools: value as Record<string, unknown>[], errors: [] };
}
