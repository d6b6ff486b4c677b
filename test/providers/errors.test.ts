// Retry classification and sanitization, unit level.
import { APICallError } from "@ai-sdk/provider";
import { createProviderStreamError } from "@ai-sdk/provider-utils";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { classifyProviderError } from "../../src/providers/index.ts";

const apiError = (statusCode: number | undefined, isRetryable?: boolean) =>
  new APICallError({
    message: "Bad request: SECRET body text",
    url: "https://api.example.com/v1?key=sk-SECRET",
    requestBodyValues: { schema: "SECRET" },
    ...(statusCode != null ? { statusCode } : {}),
    responseBody: "SECRET",
    ...(isRetryable != null ? { isRetryable } : {}),
  });

test("HTTP statuses: 408, 429, 5xx, 529 retry; 400, 401, 404 do not", () => {
  for (const status of [408, 429, 500, 502, 503, 529]) assert.ok(classifyProviderError(apiError(status)).retryable, String(status));
  for (const status of [400, 401, 403, 404, 422]) assert.not.ok(classifyProviderError(apiError(status)).retryable, String(status));
  assert.is(classifyProviderError(apiError(401)).kind, "auth");
  assert.is(classifyProviderError(apiError(408)).kind, "timeout");
});

test("messages are sanitized: status and kind only", () => {
  for (const err of [apiError(400), apiError(503), apiError(undefined, true)]) {
    const c = classifyProviderError(err);
    assert.not.ok(JSON.stringify(c).includes("SECRET"));
    assert.match(c.message, /^provider error: [a-z_]+( \(HTTP \d+\))?$/);
  }
});

test("network errors retry; aborts and unknown errors do not", () => {
  assert.equal(classifyProviderError(apiError(undefined, true)), { retryable: true, kind: "network", message: "provider error: network" });
  const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  assert.is(classifyProviderError(new TypeError("fetch failed", { cause: reset })).retryable, true);
  assert.is(classifyProviderError(new DOMException("aborted", "AbortError")).kind, "aborted");
  assert.equal(classifyProviderError(new Error("SECRET")), { retryable: false, kind: "unknown", message: "provider error: unknown" });
});

test("in-stream provider errors use their status and retry flag", () => {
  const overloaded = createProviderStreamError({ message: "SECRET", type: "overloaded_error", statusCode: 529, isRetryable: true, data: {} });
  assert.equal(classifyProviderError(overloaded), { retryable: true, kind: "overloaded", status: 529, message: "provider error: overloaded (HTTP 529)" });
  const quota = createProviderStreamError({ message: "SECRET", code: "insufficient_quota", data: {} });
  assert.equal(classifyProviderError(quota).retryable, false);
  assert.is(classifyProviderError({ type: "rate_limit_error", message: "x" }).kind, "rate_limit");
});

test.run();
