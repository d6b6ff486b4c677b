// Function tools (client tools) in OpenAI's terms. A `function` tool becomes one of the chat's dynamic tools: the
// agent's call of it pauses the turn (requires_action) and the Response reads `completed` with `function_call`
// items; the client runs the tools and answers with `previous_response_id` and `function_call_output` items, which
// chatd's submit_tool_results takes, and the same turn goes on (sql/155_openai_responses.sql).
import { createHash } from "node:crypto";
import { invalid } from "./errors.ts";

export interface DynamicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export interface ToolResult {
  tool_call_id: string;
  result: string;
}

/** A call the turn waits for (chats.pending_tool_calls), as the worker wrote it. */
export interface PendingCall {
  tool_call_id: string;
  tool_name: string;
  args?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const TOOL_KEYS = new Set(["type", "name", "description", "parameters", "strict"]);

/** `tools` as dynamic tools; only `function` tools exist in chatd (its own tools are the model config's). */
export function dynamicTools(tools: unknown): DynamicTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid("tools must be an array", "tools");
  return tools.map((tool, i) => {
    const param = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(`${param} must be an object`, param);
    if (tool.type !== "function") {
      throw invalid(`${param}.type '${String(tool.type)}' is not supported by chatd (function tools only)`, `${param}.type`);
    }
    for (const key of Object.keys(tool)) {
      if (!TOOL_KEYS.has(key)) throw invalid(`Unknown parameter: '${param}.${key}'.`, `${param}.${key}`, "unknown_parameter");
    }
    if (typeof tool.name !== "string") throw invalid(`${param}.name must be a string`, `${param}.name`);
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== "string") {
      throw invalid(`${param}.description must be a string`, `${param}.description`);
    }
    if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
      throw invalid(`${param}.parameters must be a JSON Schema object`, `${param}.parameters`);
    }
    if (tool.strict !== undefined && tool.strict !== null && typeof tool.strict !== "boolean") {
      throw invalid(`${param}.strict must be a boolean`, `${param}.strict`);
    }
    const schema = isObject(tool.parameters) ? tool.parameters : { type: "object", properties: {} };
    return { name: tool.name, ...(typeof tool.description === "string" ? { description: tool.description } : {}), input_schema: schema };
  });
}

/** The tools as a Response echoes them. */
export function toolsEcho(tools: DynamicTool[]): Record<string, unknown>[] {
  return tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description ?? null,
    parameters: tool.input_schema, strict: null }));
}

/** A function_call_output's `output`: a string, or input_text parts joined (chatd's tool results are text here). */
function outputText(output: unknown, param: string): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) {
    return output.map((part, i) => {
      if (!isObject(part) || part.type !== "input_text" || typeof part.text !== "string") {
        throw invalid(`${param}[${i}] must be {"type": "input_text", "text": ...}`, `${param}[${i}]`);
      }
      return part.text;
    }).join("");
  }
  throw invalid(`${param} must be a string or an array of input_text parts`, param);
}

/**
 * The `input` of a continuation (it holds `function_call_output` items): those items as tool results.
 * `function_call` items (clients that send the previous output back) are echoes of the calls and skipped; anything
 * else is refused.
 */
export function toolResults(input: unknown[]): ToolResult[] {
  const results: ToolResult[] = [];
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (!isObject(item)) throw invalid(`${param} must be an object`, param);
    if (item.type === "function_call") return;
    if (item.type !== "function_call_output") {
      throw invalid(`${param}.type must be function_call_output: the outputs of the previous Response's function calls `
        + "go without other input", `${param}.type`);
    }
    if (typeof item.call_id !== "string") throw invalid(`${param}.call_id must be a string`, `${param}.call_id`);
    results.push({ tool_call_id: item.call_id, result: outputText(item.output, `${param}.output`) });
  });
  return results;
}

/** The function_call items of a Response, in the order the agent made the calls. */
export function functionCallItems(calls: PendingCall[]): Record<string, unknown>[] {
  return calls.map((call) => ({
    type: "function_call",
    id: `fc_${createHash("sha256").update(call.tool_call_id).digest("hex").slice(0, 32)}`,
    call_id: call.tool_call_id,
    name: call.tool_name,
    arguments: JSON.stringify(call.args ?? {}),
    status: "completed",
  }));
}
