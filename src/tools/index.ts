// Public surface of the tool layer.
export { defaultWorkspacesRoot, ensureDemoWorkspace } from "./demo.ts";
export { resolveInWorkspace } from "./paths.ts";
export {
  capOutput,
  DEFAULT_TIMEOUT_MS,
  executeTool,
  OUTPUT_CAP_BYTES,
  parseToolArgs,
  RESERVED_TOOL_NAMES,
  toolsForChat,
  workspaceFolder,
  type ChatTools,
  type DynamicToolDeclaration,
  type ExecuteOptions,
} from "./registry.ts";
export { ToolError, type ToolContext, type ToolDefinition, type ToolKind, type ToolOutput } from "./types.ts";
export { READ_CAP_BYTES, workspaceTools } from "./workspace.ts";
