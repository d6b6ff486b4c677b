// Public surface of the provider layer. The worker loop imports from here only.
export { classifyProviderError } from "./errors.ts";
export {
  providerCapabilities,
  type ModelRuntime,
  type ProviderCapabilities,
} from "./models.ts";
export { exampleFromSchema } from "./scripted/example-from-schema.ts";
export { streamStep } from "./step.ts";
export { assistantMessageFromStep } from "./replay.ts";
export type * from "./types.ts";
