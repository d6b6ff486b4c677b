// Plan mode: the model may look but not change anything, and it ends its turn
// by proposing a plan. `propose_plan` is a stop-after tool: its call (with the plan in its arguments) is part of
// the committed assistant step, so the plan is in the transcript; its result is a short acknowledgement; and the
// turn ends once the batch's results are committed. Whether a turn ended that way is read back from history
// (`endsTurnAfter`), so a worker that crashes between the result commit and finish_turn still finishes the turn
// on recovery instead of asking the model for another step.
import type { ChatPrompt, JSONObject } from "../providers/index.ts";
import { ToolError, type ToolDefinition, type ToolOutput } from "./types.ts";

export const PROPOSE_PLAN = "propose_plan";
const PLAN_MAX_BYTES = 64 * 1024;

async function proposePlan(args: JSONObject): Promise<ToolOutput> {
  const plan = args.plan;
  if (typeof plan !== "string" || plan.trim() === "") throw new ToolError("plan must be a non-empty string");
  if (Buffer.byteLength(plan, "utf8") > PLAN_MAX_BYTES) throw new ToolError(`plan has more than ${PLAN_MAX_BYTES} bytes`);
  return { result: "Plan proposed. The turn ends here; the user will review the plan.", isError: false };
}

export const proposePlanTool: ToolDefinition = {
  name: PROPOSE_PLAN,
  kind: "internal",
  description: "Plan mode: present your plan to the user and end your turn. Call it alone, once you have explored " +
    "enough; the plan is shown to the user, who decides whether to carry it out.",
  inputSchema: {
    type: "object",
    properties: { plan: { type: "string", description: "The plan, in Markdown: the steps you propose and why." } },
    required: ["plan"],
    additionalProperties: false,
  },
  planSafe: true,
  endsTurn: true,
  execute: proposePlan,
};

/** True when the turn's latest step was answered and one of its answers is a successful stop-after call. The
 * trailing tool messages of the prompt are the answers to the latest assistant step (local results and the
 * client's, which may arrive in separate rows). */
export function endsTurnAfter(prompt: ChatPrompt, byName: ReadonlyMap<string, ToolDefinition>): boolean {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role !== "tool") return false;
    for (const part of message.content) {
      if (!part.is_error && byName.get(part.tool_name)?.endsTurn === true) return true;
    }
  }
  return false;
}
