// Public surface of the tool layer.
export { defaultWorkspacesRoot, ensureDemoWorkspace } from "./demo.ts";
export { READ_ONLY_DEPLOYMENT, toolDeploymentFromEnv } from "./deployment.ts";
export { commandEnvironment, execTools } from "./exec.ts";
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
export { endsTurnAfter, PROPOSE_PLAN, proposePlanTool } from "./plan.ts";
export {
  ToolError, type ToolContext, type ToolDefinition, type ToolDeployment, type ToolKind, type ToolOutput,
} from "./types.ts";
export { READ_CAP_BYTES, workspaceTools } from "./workspace.ts";
export { WRITE_CAP_BYTES, writeTools } from "./write.ts";
