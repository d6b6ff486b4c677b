// Public surface of the tool layer.
export { defaultWorkspacesRoot, ensureDemoWorkspace } from "./demo.ts";
export { DEFAULT_TOOL_RESULT_CAP_BYTES, READ_ONLY_DEPLOYMENT, toolDeploymentFromEnv } from "./deployment.ts";
export { execTools } from "./exec.ts";
export {
  capOutput,
  executeTool,
  parseToolArgs,
  toolsForChat,
  type ChatTools,
  type DynamicToolDeclaration,
  type ExecuteOptions,
} from "./registry.ts";
export { endsTurnAfter, proposePlanTool } from "./plan.ts";
export {
  type ToolContext, type ToolDefinition, type ToolDeployment, type ToolKind, type ToolOutput,
} from "./types.ts";
export { workspaceTools } from "./workspace.ts";
export { WRITE_CAP_BYTES, writeTools } from "./write.ts";
