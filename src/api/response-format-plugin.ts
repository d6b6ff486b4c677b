// Validates `responseFormat` in TypeScript before the SQL transition runs: duplicate keys, exact
// numbers, the envelope, schema screening, caps and compile — what jsonb cannot see. A refusal throws before the
// mutation step, so nothing is persisted, queued or interrupted. The experiment gate is checked here too, with the
// same SQLSTATE the SQL raises (RFOFF), so both layers refuse identically.
//
// An edit that preserves a format (responseFormat omitted or null) reads the edited message's stored request as
// the caller (RLS), validates it like a new one, and calls the checked SQL function with the schema hash and the
// chat's history_version it read; SQL rechecks both under the chat lock (RFSTL when either moved).
import { sideEffectWithPgClient, type PgClient, type PgExecutor, type PgResource } from "postgraphile/@dataplan/pg";
import { access, object, type FieldArgs, type Step } from "postgraphile/grafast";
import { wrapPlans } from "postgraphile/utils";
import { validateResponseFormat } from "../structured/index.ts";
import { fieldRefusal, refusalError } from "./errors.ts";

export const DISABLED_MESSAGE = "structured output is disabled on this server (experiment chat-structured-output)";

interface MutationInput {
  messageId?: string | null;
  responseFormat?: string | null;
}

interface Preserved {
  schemaSha256: string | null;
  historyVersion: string | null;
}

async function query<T>(client: PgClient, text: string, values: unknown[] = []): Promise<T[]> {
  const result = await client.query<T & Record<string, unknown>>({ text, values });
  return result.rows as T[];
}

/** Full validation of an envelope text, then the experiment gate for a structured one. */
async function admit(client: PgClient, text: string): Promise<void> {
  const result = validateResponseFormat(text);
  if (!result.ok) throw fieldRefusal("RFINV", result.errors);
  if (result.format.type !== "json_schema") return;
  const [row] = await query<{ enabled: boolean }>(client, "select chat_public.structured_output_enabled() as enabled");
  if (!row?.enabled) {
    throw refusalError({ sqlState: "RFOFF", message: DISABLED_MESSAGE, column: "response_format" })!;
  }
}

/** The edited message's stored request as an envelope text, with the facts the SQL function rechecks. */
async function preservedFormat(client: PgClient, messageId: string): Promise<Preserved & { envelope: string | null }> {
  const [row] = await query<{ name: string; description: string | null; schema_text: string; schema_sha256: string;
    history_version: string }>(client,
    `select r.name, r.description, r.schema::text as schema_text, r.schema_sha256, c.history_version::text as history_version
     from chat_public.chat_messages m
     join chat_public.chats c on c.id = m.chat_id
     join chat_public.structured_output_requests r on r.id = m.structured_output_request_id
     where m.id = $1 and m.role = 'user' and m.kind = 'message' and not m.deleted`, [messageId]);
  if (!row) return { envelope: null, schemaSha256: null, historyVersion: null };
  // The stored schema text is spliced in verbatim: jsonb::text keeps every digit, which JSON.parse would not.
  const description = row.description === null ? "" : `"description":${JSON.stringify(row.description)},`;
  const envelope = `{"type":"json_schema","json_schema":{"name":${JSON.stringify(row.name)},${description}"schema":${row.schema_text}}}`;
  return { envelope, schemaSha256: row.schema_sha256, historyVersion: row.history_version };
}

function inputOf(fieldArgs: FieldArgs): Step<MutationInput> {
  return fieldArgs.getRaw("input") as Step<MutationInput>;
}

export const ResponseFormatPlugin = wrapPlans((build) => {
  const registry = build.input.pgRegistry;
  const executor = Object.values(registry.pgExecutors)[0] as PgExecutor;
  const editChecked = registry.pgResources.edit_chat_message_checked as PgResource | undefined;
  if (!editChecked) throw new Error("chat_public.edit_chat_message (edit_chat_message_checked) is missing from the schema");

  const admitNew = (fieldArgs: FieldArgs) =>
    sideEffectWithPgClient(executor, inputOf(fieldArgs), async (client, input) => {
      if (input.responseFormat != null) await admit(client, input.responseFormat);
      return null;
    });

  return {
    Mutation: {
      createChat(plan, _$source, fieldArgs) {
        admitNew(fieldArgs);
        return plan();
      },
      sendChatMessage(plan, _$source, fieldArgs) {
        admitNew(fieldArgs);
        return plan();
      },
      // A batch's schema is checked here too, so an invalid one is refused before anything is stored (the SQL
      // function sees only jsonb: merged duplicate keys, no $ref screening); the worker's later check stays.
      createBatch(plan, _$source, fieldArgs) {
        admitNew(fieldArgs);
        return plan();
      },
      editChatMessage(_plan, _$source, fieldArgs) {
        const $preserved = sideEffectWithPgClient(executor, inputOf(fieldArgs), async (client, input): Promise<Preserved> => {
          if (input.responseFormat != null) {
            await admit(client, input.responseFormat);
            return { schemaSha256: null, historyVersion: null };
          }
          const preserved = await preservedFormat(client, String(input.messageId));
          if (preserved.envelope !== null) await admit(client, preserved.envelope);
          return { schemaSha256: preserved.schemaSha256, historyVersion: preserved.historyVersion };
        });
        const params = editChecked.parameters ?? [];
        const codec = (index: number) => {
          const parameter = params[index];
          if (!parameter) throw new Error(`edit_chat_message has no parameter ${index}`);
          return parameter.codec;
        };
        const $result = editChecked.execute([
          { step: fieldArgs.getRaw(["input", "messageId"]), pgCodec: codec(0), name: "message_id" },
          { step: fieldArgs.getRaw(["input", "content"]), pgCodec: codec(1), name: "content" },
          { step: fieldArgs.getRaw(["input", "responseFormat"]), pgCodec: codec(2), name: "response_format" },
          { step: access($preserved, "schemaSha256"), pgCodec: codec(3), name: "preserve_schema_sha256" },
          { step: access($preserved, "historyVersion"), pgCodec: codec(4), name: "preserve_history_version" },
        ], "mutation");
        return object({ result: $result });
      },
    },
  };
});
