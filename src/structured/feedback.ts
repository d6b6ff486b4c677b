// Bounded feedback for the model: few errors, short messages, no echo of large values.

import type { ErrorObject } from "ajv";
import { FEEDBACK_MAX_BYTES, FEEDBACK_MAX_ERRORS } from "./caps.ts";
import { escapePointerSegment } from "./json-boundary.ts";

export interface ValueError {
  pointer: string;
  message: string;
}

const MAX_POINTER = 200;
const MAX_MESSAGE = 200;
const MAX_NAME = 64;

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

const KEYWORD_NAMES: Readonly<Record<string, string>> = {
  chatdMinimum: "minimum",
  chatdMaximum: "maximum",
  chatdExclusiveMinimum: "exclusiveMinimum",
  chatdExclusiveMaximum: "exclusiveMaximum",
  chatdMultipleOf: "multipleOf",
  chatdInteger: "type",
  chatdConst: "const",
  chatdEnum: "enum",
  chatdUniqueItems: "uniqueItems",
};

export function publicKeyword(k: string): string {
  return KEYWORD_NAMES[k] ?? k;
}

/** ajv errors to pointer + message; property names are clipped so a huge key is never echoed. */
export function fromAjvErrors(errors: readonly ErrorObject[] | null | undefined): ValueError[] {
  const out: ValueError[] = [];
  for (const e of errors ?? []) {
    if (out.length >= FEEDBACK_MAX_ERRORS) break;
    const params = e.params as Record<string, unknown>;
    let pointer = e.instancePath;
    let message = e.message ?? `must pass ${publicKeyword(e.keyword)}`;
    if (e.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
      pointer += `/${escapePointerSegment(params.additionalProperty)}`;
      message = "is not allowed (additionalProperties)";
    } else if (e.keyword === "required" && typeof params.missingProperty === "string") {
      message = `must have required property ${JSON.stringify(clip(params.missingProperty, MAX_NAME))}`;
    } else if (e.keyword === "dependencies" && typeof params.missingProperty === "string") {
      message = `must have property ${JSON.stringify(clip(params.missingProperty, MAX_NAME))} (dependencies)`;
    } else if (e.keyword === "propertyNames" && typeof params.propertyName === "string") {
      pointer += `/${escapePointerSegment(params.propertyName)}`;
      message = "property name is invalid (propertyNames)";
    }
    out.push({ pointer: clip(pointer, MAX_POINTER), message: clip(message, MAX_MESSAGE) });
  }
  return out;
}

export function clipErrors(errors: readonly ValueError[]): ValueError[] {
  return errors.slice(0, FEEDBACK_MAX_ERRORS).map((e) => ({ pointer: clip(e.pointer, MAX_POINTER), message: clip(e.message, MAX_MESSAGE) }));
}

/** One line per error; stops before FEEDBACK_MAX_BYTES (UTF-8). */
export function formatFeedback(errors: readonly ValueError[]): string {
  const header = "The value does not match the schema:";
  let text = header;
  for (const e of errors.slice(0, FEEDBACK_MAX_ERRORS)) {
    const line = `\n- ${e.pointer === "" ? "(root)" : e.pointer}: ${e.message}`;
    if (Buffer.byteLength(text + line, "utf8") > FEEDBACK_MAX_BYTES) break;
    text += line;
  }
  return text;
}
