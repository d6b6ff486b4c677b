// One chat: useChat on the endpoint (/api/chat), the transcript loaded from /api/chat/:id/messages and resumed
// while a turn runs (a reload continues the turn), the queue, the composer with its JSON Schema checked by the
// server's own rules before sending, client tools declared with a new chat, Stop (an interrupt), and edits of user
// messages.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from "ai";
import type { QueuedMessage, Validation } from "@chatd/client";
import { authHeaders, chatd, checkResponseFormat, errorText, streamError, transcript } from "./api.ts";
import { parseClientTools } from "./client-tools.ts";
import { retryingFetch } from "./retry-fetch.ts";
import { Transcript } from "./transcript.tsx";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const fieldErrors = (errors: Validation[]) => errors.map((e) => `${e.field}: ${e.detail}`);
const queuedText = (q: QueuedMessage) => q.content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");

/** The composer's schema as a response_format envelope, the schema's text spliced verbatim (digits kept). */
function envelopeText(schema: string, name: string): string | null {
  const trimmed = schema.trim();
  if (trimmed === "") return null;
  if (/^\{\s*"type"\s*:\s*"json_schema"/.test(trimmed)) return trimmed;
  return `{"type":"json_schema","json_schema":{"name":${JSON.stringify(name || "result")},"schema":${trimmed}}}`;
}

export function ChatView({ chatId, onChatCreated, onChanged }: { chatId: string; onChatCreated: (id: string) => void; onChanged: () => void }) {
  const [status, setStatus] = useState("waiting");
  const [pending, setPending] = useState<Set<string>>(new Set());
  const [queue, setQueue] = useState<QueuedMessage[]>([]);
  const [text, setText] = useState("");
  const [schema, setSchema] = useState("");
  const [schemaName, setSchemaName] = useState("result");
  const [workspace, setWorkspace] = useState("");
  const [clientTools, setClientTools] = useState("");
  const [schemaErrors, setSchemaErrors] = useState<string[]>([]);
  const [toolErrors, setToolErrors] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const transport = useMemo(() => new DefaultChatTransport({ api: "/api/chat", headers: () => authHeaders(), fetch: retryingFetch() }), []);
  const known = UUID.test(chatId);

  // Reads overlap (every status part starts one): only the latest one's answer is shown, or a slow read from
  // before a dequeue could put a message back on screen after a newer read removed it.
  const queueRead = useRef(0);
  const refreshQueue = useCallback(() => {
    if (!known) return;
    const read = ++queueRead.current;
    const show = (items: QueuedMessage[]) => { if (read === queueRead.current) setQueue(items); };
    void chatd.chats.queue(chatId).then(show, () => show([]));
  }, [chatId, known]);

  const chat = useChat({
    id: chatId,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    onData: (part) => {
      if (part.type !== "data-chat") return;
      const data = part.data as { status: string; pendingToolCalls: { tool_call_id: string }[] };
      setStatus(data.status);
      setPending(new Set((data.pendingToolCalls ?? []).map((c) => c.tool_call_id)));
      refreshQueue();
    },
    onError: (e) => {
      const refused = streamError(e);
      const atTools = refused.validations.filter((v) => v.field.startsWith("dynamic_tools"));
      if (atTools.length > 0) setToolErrors(fieldErrors(atTools));
      else setError(errorText(refused));
      // A refused first message created no chat: take it back into the composer so that the next send is the first.
      if (!known) {
        chat.setMessages((messages) => {
          if (messages.some((m) => (m.metadata as { chatId?: string } | undefined)?.chatId)) return messages;
          const first = messages.find((m) => m.role === "user");
          setText(first?.parts.map((p) => (p.type === "text" ? p.text : "")).join("") ?? "");
          return [];
        });
      }
    },
    onFinish: ({ message }) => {
      const created = (message.metadata as { chatId?: string } | undefined)?.chatId;
      if (!known && created) onChatCreated(created);
      else void reload();
      onChanged();
    },
  });

  // The transcript from the server, then (while a turn runs) the turn resumed; once the resumed stream ends (or
  // there was none to resume: the turn ended in between) the transcript is read again.
  const reload = useCallback(async (resume = true): Promise<void> => {
    if (!known) return;
    const loaded = await transcript(chatId);
    chat.setMessages(loaded.messages);
    setStatus(loaded.status);
    setPending(new Set(loaded.pendingToolCalls.map((c) => c.tool_call_id)));
    refreshQueue();
    if (loaded.active && resume) await chat.resumeStream().then(() => reload(false));
  }, [chatId, known]);

  useEffect(() => { void reload().catch((e: unknown) => setError(String(e))); }, [reload]);

  const busy = status === "running" || status === "interrupting" || chat.status === "streaming" || chat.status === "submitted";

  async function send() {
    setError(null);
    const format = envelopeText(schema, schemaName);
    if (format !== null) {
      const checked = await checkResponseFormat(format);
      if (!checked.ok) {
        setSchemaErrors(fieldErrors(checked.errors ?? []));
        return;
      }
    }
    setSchemaErrors([]);
    const tools = known ? { tools: [], errors: [] } : parseClientTools(clientTools);
    setToolErrors(fieldErrors(tools.errors));
    if (tools.tools === null) return;
    const message = text;
    setText("");
    try {
      if (busy && known) {
        await chatd.chats.send(chatId, { prompt: message, responseFormat: format ?? undefined });
        refreshQueue();
        return;
      }
      await chat.sendMessage({ text: message }, { body: { responseFormat: format, workspace: workspace || null,
        ...(tools.tools.length > 0 ? { dynamicTools: tools.tools } : {}) } });
    } catch (e) {
      setError(errorText(e));
    }
  }

  const stop = async () => {
    const id = known ? chatId : (chat.messages.at(-1)?.metadata as { chatId?: string } | undefined)?.chatId;
    if (id) await chatd.chats.interrupt(id).catch((e: unknown) => setError(errorText(e)));
  };

  return (
    <div className="main">
      <div className="status" style={{ padding: "6px 16px" }}>chat <code>{known ? chatId : "new"}</code> · <span aria-label="Chat status">{status}</span></div>
      <Transcript messages={chat.messages} pending={pending}
        onToolResult={(part, output) => { setPending(new Set()); void chat.addToolOutput({ tool: part.toolName, toolCallId: part.toolCallId, output } as never); }}
        onEdit={(messageId, value) => void chat.sendMessage({ text: value, messageId }, { body: {} }).catch((e: unknown) => setError(errorText(e)))} />
      {queue.length > 0 && (
        <div className="queue" aria-label="Queue">
          <b>Queued</b>
          <ul>{queue.map((q) => (
            <li key={q.queuedMessageId}>{queuedText(q)}{q.structuredOutputRequestId ? " (structured)" : ""}{" "}
              <button type="button" onClick={() => void chatd.chats.promoteQueued(q.queuedMessageId).then(refreshQueue, (e: unknown) => setError(errorText(e)))}>Promote</button>{" "}
              <button type="button" onClick={() => void chatd.chats.deleteQueued(q.queuedMessageId).then(refreshQueue, (e: unknown) => setError(errorText(e)))}>Delete</button>
            </li>))}
          </ul>
        </div>
      )}
      <form className={known ? "composer" : "composer new"} onSubmit={(e) => { e.preventDefault(); void send(); }}>
        <div>
          <label htmlFor="message">Message</label>
          <textarea id="message" rows={4} value={text} onChange={(e) => setText(e.target.value)} />
        </div>
        <div>
          <label htmlFor="schema">JSON Schema</label>
          <textarea id="schema" rows={4} value={schema} aria-invalid={schemaErrors.length > 0}
            aria-describedby="schema-errors" onChange={(e) => setSchema(e.target.value)} placeholder='{"type":"object"} (optional)' />
          <div id="schema-errors" role="alert">{schemaErrors.map((e) => <div key={e} className="field-error">{e}</div>)}</div>
        </div>
        <div>
          <label htmlFor="schema-name">Schema name</label>
          <input id="schema-name" value={schemaName} onChange={(e) => setSchemaName(e.target.value)} />
          {!known && (<><label htmlFor="workspace">Workspace</label>
            <input id="workspace" value={workspace} onChange={(e) => setWorkspace(e.target.value)} placeholder="demo" /></>)}
        </div>
        {!known && (
          <div>
            <label htmlFor="client-tools">Client tools</label>
            <textarea id="client-tools" rows={4} value={clientTools} aria-invalid={toolErrors.length > 0} aria-describedby="client-tools-errors"
              onChange={(e) => setClientTools(e.target.value)} placeholder='[{"name":"ask_user","description":"...","inputSchema":{"type":"object"}}] (optional)' />
            <div id="client-tools-errors" role="alert">{toolErrors.map((e) => <div key={e} className="field-error">{e}</div>)}</div>
          </div>
        )}
        <div className="actions">
          <button type="submit" disabled={text.trim() === ""}>Send</button>
          <button type="button" onClick={() => void stop()} disabled={!busy}>Stop</button>
          {error && <span className="error" role="alert">{error}</span>}
        </div>
      </form>
    </div>
  );
}
