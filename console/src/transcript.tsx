// The transcript: user messages (editable), assistant turns with text, reasoning, collapsible tool calls, client
// tool requests answered from a form, and receipts as cards whose value is the exact stored JSON text.
import { useEffect, useRef, useState } from "react";
import type { UIMessage } from "ai";
import { prettyJson } from "./pretty.ts";

export interface Receipt {
  requestId: string;
  status: "succeeded" | "failed" | "canceled";
  valueJson: string | null;
  error: { code: string; message: string } | null;
  schemaName: string | null;
}

interface ToolPart { type: "dynamic-tool"; toolName: string; toolCallId: string; state: string; input?: unknown; output?: unknown; errorText?: string }

export function ReceiptCard({ receipt }: { receipt: Receipt }) {
  const label = `Receipt: ${receipt.status}${receipt.schemaName ? ` (${receipt.schemaName})` : ""}`;
  return (
    <article className={`receipt ${receipt.status}`} aria-label={label}>
      <h3>Receipt: {receipt.status}</h3>
      <div className="status">schema <b>{receipt.schemaName ?? "?"}</b> · request <code>{receipt.requestId}</code></div>
      {receipt.valueJson !== null && <pre aria-label="Value">{prettyJson(receipt.valueJson)}</pre>}
      {receipt.error && <p><code>{receipt.error.code}</code>: {receipt.error.message}</p>}
    </article>
  );
}

function ToolRequest({ part, onSubmit }: { part: ToolPart; onSubmit: (output: unknown) => void }) {
  const [result, setResult] = useState("");
  const submit = () => {
    let output: unknown = result;
    try { output = JSON.parse(result); } catch { /* plain text is a valid result */ }
    onSubmit(output);
  };
  return (
    <section className="tool-request" aria-label={`Tool request ${part.toolName}`}>
      <div><b>{part.toolName}</b> asks: <code>{JSON.stringify(part.input)}</code></div>
      <label htmlFor={`result-${part.toolCallId}`}>Result</label>
      <textarea id={`result-${part.toolCallId}`} rows={2} value={result} onChange={(e) => setResult(e.target.value)} />
      <button type="button" onClick={submit}>Submit result</button>
    </section>
  );
}

function ToolCall({ part }: { part: ToolPart }) {
  const done = part.state === "output-available" || part.state === "output-error";
  return (
    <details className="tool">
      <summary>Tool call {part.toolName} · {part.state === "output-error" ? "error" : done ? "done" : "running"}</summary>
      <div>input</div><pre>{JSON.stringify(part.input ?? null, null, 2)}</pre>
      {part.state === "output-available" && (<><div>output</div><pre>{JSON.stringify(part.output ?? null, null, 2)}</pre></>)}
      {part.state === "output-error" && <pre className="error">{part.errorText}</pre>}
    </details>
  );
}

export interface TranscriptProps {
  messages: UIMessage[];
  /** Tool call ids the chat waits on (client tools). */
  pending: Set<string>;
  onToolResult: (part: ToolPart, output: unknown) => void;
  onEdit: (messageId: string, text: string) => void;
}

function UserMessage({ message, onEdit }: { message: UIMessage; onEdit: TranscriptProps["onEdit"] }) {
  const text = message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  const [editing, setEditing] = useState<string | null>(null);
  const editable = /^\d+$/.test(message.id);
  return (
    <div className="message user">
      <div className="role">you</div>
      {editing === null ? <pre>{text}</pre> : (
        <>
          <label htmlFor={`edit-${message.id}`}>Edit message</label>
          <textarea id={`edit-${message.id}`} rows={3} value={editing} onChange={(e) => setEditing(e.target.value)} />
          <button type="button" onClick={() => { onEdit(message.id, editing); setEditing(null); }}>Save edit</button>
          <button type="button" onClick={() => setEditing(null)}>Cancel</button>
        </>
      )}
      {editing === null && editable && <button type="button" onClick={() => setEditing(text)}>Edit</button>}
    </div>
  );
}

export function Transcript({ messages, pending, onToolResult, onEdit }: TranscriptProps) {
  const log = useRef<HTMLDivElement>(null);
  // Follow the stream: keep the newest part in view.
  useEffect(() => { log.current?.scrollTo({ top: log.current.scrollHeight }); }, [messages]);
  return (
    <div className="transcript" role="log" aria-label="Transcript" aria-live="polite" ref={log}>
      {messages.map((message) => message.role === "user" ? <UserMessage key={message.id} message={message} onEdit={onEdit} /> : (
        <div key={message.id} className="message assistant">
          <div className="role">assistant</div>
          {message.parts.map((part, index) => {
            if (part.type === "text") return <p key={index}>{part.text}</p>;
            if (part.type === "reasoning") return <details key={index} className="reasoning"><summary>Reasoning</summary><p>{part.text}</p></details>;
            if (part.type === "dynamic-tool") {
              const tool = part as ToolPart;
              if (tool.state === "input-available" && pending.has(tool.toolCallId)) {
                return <ToolRequest key={index} part={tool} onSubmit={(output) => onToolResult(tool, output)} />;
              }
              return <ToolCall key={index} part={tool} />;
            }
            if (part.type === "data-receipt") return <ReceiptCard key={index} receipt={(part as { data: Receipt }).data} />;
            if (part.type === "data-notice") return <p key={index} className="status">{(part as { data: { text: string } }).data.text}</p>;
            return null;
          })}
        </div>
      ))}
    </div>
  );
}
