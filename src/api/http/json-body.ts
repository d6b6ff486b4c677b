// Request bodies as JSON, bounded before anything looks inside them: the size while reading, the bytes as UTF-8
// (fatal decoding, no silent U+FFFD), then one iterative walk (an explicit stack, no recursion) that checks the
// nesting depth and that every string and key is well-formed UTF-16. JSON.parse accepts `"\ud800"`; PostgreSQL
// does not, and deep nesting overflows the recursive code further on (JSON.stringify, validators), so both are
// refused here, as 400 naming the field, before any of that code runs. JSON.parse itself is iterative in V8.
import type { IncomingMessage } from "node:http";
import { badRequest, HttpError } from "./errors.ts";

export interface JsonBodyLimits {
  maxBytes: number;
  /** Container nesting: `{}` at the top is depth 1. */
  maxDepth: number;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** `messages[0].parts` style paths; keys that are not identifiers are quoted. */
function pathOf(segments: readonly (string | number)[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment.isWellFormed() ? segment : segment.toWellFormed())}]`;
  }
  return out === "" ? "body" : out;
}

interface Node {
  value: unknown;
  depth: number;
  parent: Node | null;
  key: string | number;
}

function segmentsOf(node: Node): (string | number)[] {
  const segments: (string | number)[] = [];
  for (let at: Node | null = node; at?.parent; at = at.parent) segments.push(at.key);
  return segments.reverse();
}

/** The first nesting or encoding problem of a parsed value, or null. Linear: each node is visited once and a
 * path is built only for the problem it reports. */
export function jsonShapeProblem(value: unknown, maxDepth: number): { field: string; detail: string } | null {
  const stack: Node[] = [{ value, depth: 0, parent: null, key: "" }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const item = node.value;
    if (typeof item === "string") {
      if (!item.isWellFormed()) return { field: pathOf(segmentsOf(node)), detail: "contains an unpaired UTF-16 surrogate" };
      continue;
    }
    if (typeof item !== "object" || item === null) continue;
    const depth = node.depth + 1;
    if (depth > maxDepth) return { field: pathOf(segmentsOf(node)), detail: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ value: item[i], depth, parent: node, key: i });
      continue;
    }
    const keys = Object.keys(item);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (!key.isWellFormed()) return { field: pathOf(segmentsOf(node)), detail: "has a key with an unpaired UTF-16 surrogate" };
      stack.push({ value: (item as Record<string, unknown>)[key], depth, parent: node, key });
    }
  }
  return null;
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, "PAYLOAD_TOO_LARGE", `request bodies are limited to ${maxBytes} bytes`, [{ field: "body", detail: `is larger than ${maxBytes} bytes` }], { connection: "close" });
}

/** Reads and parses the body; every refusal is a typed 4xx (413 for size, 400 naming the field otherwise). */
export async function readJsonBody(req: IncomingMessage, limits: JsonBodyLimits): Promise<unknown> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limits.maxBytes) throw tooLarge(limits.maxBytes);
    chunks.push(chunk);
  }
  let text: string;
  try {
    text = decoder.decode(Buffer.concat(chunks));
  } catch {
    throw badRequest("body", "is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("body", "is not JSON");
  }
  const problem = jsonShapeProblem(value, limits.maxDepth);
  if (problem) throw badRequest(problem.field, problem.detail);
  return value;
}
