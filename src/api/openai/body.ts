// The request body as JSON, bounded: a body over the limit is refused as soon as it passes it.
import type { IncomingMessage } from "node:http";
import { MAX_REQUEST_BYTES } from "../preset.ts";
import { invalid, OpenAIError } from "./errors.ts";

export async function readJsonBody(req: IncomingMessage, limit = MAX_REQUEST_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new OpenAIError(413, `request bodies are limited to ${limit} bytes`, { code: "request_too_large" });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw invalid("We could not parse the JSON body of your request.", null, "invalid_json");
  }
}
