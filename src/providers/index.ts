// Public surface of the provider layer. The worker loop imports from here only.
export { classifyProviderError, configurationError } from "./errors.ts";
export {
  buildCallOptions,
  createLanguageModel,
  optionsKey,
  providerCapabilities,
  type ModelRuntime,
  type ProviderCapabilities,
} from "./models.ts";
export { toV4Prompt } from "./prompt.ts";
export { exampleFromSchema } from "./scripted/example-from-schema.ts";
export { ScriptedLanguageModel, scriptedModel } from "./scripted/model.ts";
export { FINALIZER, SCRIPTED_LABEL } from "./scripted/plan.ts";
export { streamStep } from "./step.ts";
export { assistantMessageFromStep } from "./replay.ts";
export type * from "./types.ts";
