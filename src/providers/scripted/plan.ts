// What the scripted provider says next, decided only from the prompt and the offered
// tools, so every step is deterministic and replayable (demos and tests
// without credentials). Two modes: an explicit `{"script": [...]}` in the latest user
// message, or a default plan that exercises a real multi-step tool run.
import { hash } from "node:crypto";
import type { LanguageModelV4CallOptions, LanguageModelV4Message } from "@ai-sdk/provider";
import type { JSONObject, JSONValue } from "../types.ts";
import { exampleFromSchema } from "./example-from-schema.ts";

import { CONTROL_PREFIX, FINALIZER_TOOL_NAME as FINALIZER } from "../../structured/finalizer.ts";
export const SCRIPTED_LABEL = "(scripted provider)";

export interface PlannedCall {
  id: string;
  name: string;
  /** Exact argument text to stream. */
  argsRaw: string;
}

export interface PlannedStep {
  reasoning?: string;
  text?: string;
  calls: PlannedCall[];
  finish: "stop" | "tool-calls" | "length" | "content-filter" | "error";
  /** Fail the first attempt of this step with this HTTP status (retry tests). */
  errorStatus?: number;
  /** Hold the stream this long before finishing (abortable; for interrupt demos). */
  delayMs?: number;
  /** Identifies this step of this conversation (for error-once bookkeeping and call ids). */
  key: string;
}

type Prompt = LanguageModelV4CallOptions["prompt"];
type FunctionTool = Extract<NonNullable<LanguageModelV4CallOptions["tools"]>[number], { type: "function" }>;

function userText(message: LanguageModelV4Message): string {
  if (message.role !== "user") return "";
  return message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** The messages of the current turn: after the latest user message. chatd's own model-only control rows
 * (finalizer feedback, hook context) are part of the turn, not a new user input. */
function currentTurn(prompt: Prompt): { user: string; after: LanguageModelV4Message[] } {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role === "user" && !userText(message).startsWith(CONTROL_PREFIX)) return { user: userText(message), after: prompt.slice(i + 1) };
  }
  return { user: "", after: prompt };
}

function parseScript(text: string): unknown[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed != null && typeof parsed === "object" && Array.isArray((parsed as { script?: unknown }).script)) {
      return (parsed as { script: unknown[] }).script;
    }
  } catch {
    // Not a script: an ordinary message that happens to start with a brace.
  }
  return undefined;
}

function textStep(text: string, key: string): PlannedStep {
  return { text, calls: [], finish: "stop", key };
}

function scriptStep(raw: unknown, index: number, key: string): PlannedStep {
  if (raw == null || typeof raw !== "object" || Array.isArray(raw)) {
    return textStep(`Script step ${index + 1} is not an object ${SCRIPTED_LABEL}.`, key);
  }
  const s = raw as Record<string, unknown>;
  const calls: PlannedCall[] = [];
  if (Array.isArray(s.tool_calls)) {
    s.tool_calls.forEach((c: unknown, i) => {
      const call = (c ?? {}) as Record<string, unknown>;
      // `args` came through JSON.parse with the script (numbers as float64, duplicate keys merged) and is sent
      // re-serialized; `args_raw` is streamed byte for byte, for exact numbers and payloads the boundary must see.
      const argsRaw = typeof call.args_raw === "string" ? call.args_raw : JSON.stringify(call.args ?? {});
      calls.push({ id: `call_${key}_${i}`, name: String(call.name ?? "unknown_tool"), argsRaw });
    });
  }
  const requested = s.finish;
  const finish =
    requested === "length" || requested === "content-filter" || requested === "error"
      ? requested
      : calls.length > 0
        ? "tool-calls"
        : "stop";
  return {
    ...(typeof s.reasoning === "string" ? { reasoning: s.reasoning } : {}),
    ...(typeof s.text === "string" ? { text: s.text } : {}),
    calls,
    finish,
    ...(typeof s.error_status === "number" ? { errorStatus: s.error_status } : {}),
    ...(typeof s.delay_ms === "number" ? { delayMs: s.delay_ms } : {}),
    key,
  };
}

interface TurnFacts {
  called: Set<string>;
  results: Map<string, JSONValue>;
}

function turnFacts(after: LanguageModelV4Message[]): TurnFacts {
  const called = new Set<string>();
  const results = new Map<string, JSONValue>();
  for (const m of after) {
    if (m.role !== "assistant" && m.role !== "tool") continue;
    for (const p of m.content) {
      if (p.type === "tool-call") called.add(p.toolName);
      if (p.type === "tool-result") {
        const o = p.output;
        const value: JSONValue =
          o.type === "text" || o.type === "error-text" || o.type === "json" || o.type === "error-json" ? o.value : null;
        results.set(p.toolName, value);
      }
    }
  }
  return { called, results };
}

/** First file named by a list_files result, whatever shape the workspace tool returns. */
export function firstListedFile(result: JSONValue | undefined): string | undefined {
  if (result == null) return undefined;
  if (typeof result === "string") {
    try {
      return firstListedFile(JSON.parse(result) as JSONValue);
    } catch {
      const line = result.split("\n").map((l) => l.trim()).find((l) => l.length > 0 && !l.endsWith("/"));
      return line;
    }
  }
  if (Array.isArray(result)) {
    for (const entry of result) {
      if (typeof entry === "string" && !entry.endsWith("/")) return entry;
      if (entry != null && typeof entry === "object" && !Array.isArray(entry)) {
        const type = entry.type ?? entry.kind;
        if (type === "dir" || type === "directory" || entry.is_dir === true || entry.isDirectory === true) continue;
        const name = entry.path ?? entry.name;
        if (typeof name === "string" && !name.endsWith("/")) return name;
      }
    }
    return undefined;
  }
  if (typeof result === "object") {
    for (const key of ["entries", "files", "items", "paths"]) {
      const found = firstListedFile((result as JSONObject)[key]);
      if (found != null) return found;
    }
  }
  return undefined;
}

function argsFor(tool: FunctionTool, overrides: Record<string, JSONValue>): string {
  const base = exampleFromSchema(tool.inputSchema);
  const args: Record<string, unknown> =
    base != null && typeof base === "object" && !Array.isArray(base) ? { ...(base as JSONObject) } : {};
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(overrides)) {
    if (name in properties) args[name] = value;
  }
  return JSON.stringify(args);
}

function finalizerArgs(tool: FunctionTool): string {
  const outputSchema = (tool.inputSchema.properties as Record<string, unknown> | undefined)?.output ?? {};
  // The caller's `$ref`s were rebased onto the finalizer's input schema (finalizerInputSchema): resolve them there.
  return JSON.stringify({ output: exampleFromSchema(outputSchema, tool.inputSchema) });
}

function defaultPlan(after: LanguageModelV4Message[], tools: FunctionTool[], key: string): PlannedStep {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const facts = turnFacts(after);
  const call = (tool: FunctionTool, argsRaw: string): PlannedStep => ({
    calls: [{ id: `call_${key}_0`, name: tool.name, argsRaw }],
    finish: "tool-calls",
    key,
  });
  const list = byName.get("list_files");
  const read = byName.get("read_file");
  const finalizer = byName.get(FINALIZER);

  if (facts.called.has(FINALIZER)) {
    return textStep(`Submitted the structured output ${SCRIPTED_LABEL}.`, key);
  }
  if (list != null && read != null) {
    if (!facts.called.has("list_files")) {
      return { ...call(list, argsFor(list, { path: "." })), reasoning: "List the workspace first." };
    }
    const file = firstListedFile(facts.results.get("list_files"));
    if (!facts.called.has("read_file") && file != null) return call(read, argsFor(read, { path: file }));
  }
  if (finalizer != null) return call(finalizer, finalizerArgs(finalizer));
  if (facts.called.has("read_file")) {
    const content = facts.results.get("read_file");
    const size = typeof content === "string" ? content.length : JSON.stringify(content ?? null).length;
    const file = firstListedFile(facts.results.get("list_files")) ?? "the file";
    return textStep(
      `I listed the workspace and read ${file} (${size} characters of tool output). ` +
        `This summary comes from the scripted provider, not a real model ${SCRIPTED_LABEL}.`,
      key,
    );
  }
  if (facts.called.has("list_files")) {
    return textStep(`I listed the workspace; there was no file to read ${SCRIPTED_LABEL}.`, key);
  }
  return textStep(`Hello! This answer comes from the scripted provider, not a real model ${SCRIPTED_LABEL}.`, key);
}

/** chatd's compaction call starts with this system text (worker/loop/compaction.ts). */
const SUMMARY_REQUEST = `${CONTROL_PREFIX}summarize`;
/** Carried by a scripted summary: how many steps of the current request it replaced, so a script resumes at the
 * right step after compaction although those assistant messages are no longer in the prompt. */
const STEPS_TAG = /\[scripted steps so far: (\d+)\]/;

/** Steps of the current request that a compaction summary (right before its input) replaced. */
function compactedSteps(prompt: Prompt): number {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message?.role !== "user" || userText(message).startsWith(CONTROL_PREFIX)) continue;
    const before = prompt[i - 1];
    const match = before != null ? STEPS_TAG.exec(userText(before)) : null;
    return match != null ? Number(match[1]) : 0;
  }
  return 0;
}

/** The deterministic summary mode: names what it replaced, never what it says. */
function summaryStep(prompt: Prompt, key: string): PlannedStep {
  const history = prompt.filter((m) => m.role !== "system");
  const steps = compactedSteps(history) + currentTurn(history).after.filter((m) => m.role === "assistant").length;
  return textStep(`Summary of ${history.length} earlier messages ${SCRIPTED_LABEL}. [scripted steps so far: ${steps}]`, key);
}

/** promptText: `JSON.stringify(options.prompt)`, when the caller has it already (the model measures the prompt). */
export function planStep(options: LanguageModelV4CallOptions, promptText = JSON.stringify(options.prompt)): PlannedStep {
  const { user, after } = currentTurn(options.prompt);
  // Deterministic per conversation position: the same prompt yields the same key (so a
  // retried attempt is recognised) and call ids differ between steps and turns.
  const key = hash("sha256", promptText, "hex").slice(0, 12);
  const first = options.prompt[0];
  if (first?.role === "system" && first.content.startsWith(SUMMARY_REQUEST)) return summaryStep(options.prompt, key);
  const stepIndex = compactedSteps(options.prompt) + after.filter((m) => m.role === "assistant").length;
  const script = parseScript(user);
  if (script != null) {
    const step = script[stepIndex];
    if (step === undefined) return textStep(`The script has no more steps ${SCRIPTED_LABEL}.`, key);
    return scriptStep(step, stepIndex, key);
  }
  const tools = (options.tools ?? []).filter((t): t is FunctionTool => t.type === "function");
  return defaultPlan(after, tools, key);
}
