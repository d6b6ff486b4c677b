// Batches: each with a progress bar (finished items of the total) and its results as a JSONL download, the
// values as their exact stored JSON text.
import { useEffect, useState } from "react";
import type { Batch } from "@chatd/client";
import { chatd, errorText } from "./api.ts";

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

async function downloadResults(batch: Batch) {
  const lines: string[] = [];
  // value_json is spliced in verbatim (it is JSON text), so big numbers keep every digit.
  for await (const r of chatd.batches.results(batch.batchId)) {
    lines.push(`{"line":${r.line},"request_id":${JSON.stringify(r.structuredOutputRequestId)},"status":${JSON.stringify(r.status)},` +
      `"value":${r.valueJson ?? "null"},"error_code":${JSON.stringify(r.errorCode)},"error_message":${JSON.stringify(r.errorMessage)}}`);
  }
  download(`batch-${batch.batchId}.jsonl`, lines.join("\n") + "\n");
}

export function BatchesPage() {
  const [batches, setBatches] = useState<Batch[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () => chatd.batches.list({ first: 100 }).then((b) => { if (!stopped) setBatches(b); }, (e: unknown) => setError(errorText(e)));
    void load();
    const timer = setInterval(load, 1000);
    return () => { stopped = true; clearInterval(timer); };
  }, []);
  return (
    <div className="batch">
      <h2>Batches</h2>
      {error && <p className="error">{error}</p>}
      {batches.length === 0 && <p>No batches yet (`chatd batch submit` or the createBatch mutation).</p>}
      {batches.map((b) => {
        const c = b.itemCounts;
        const finished = c.succeeded + c.failed + c.canceled;
        return (
          <section key={b.batchId} aria-label={`Batch ${b.name ?? b.batchId}`} className="message">
            <h3>{b.name ?? b.batchId} · {b.status}</h3>
            <progress aria-label="Progress" max={b.totalItems} value={finished}>{finished} of {b.totalItems}</progress>
            <div className="status">{finished} of {b.totalItems} finished · {c.succeeded} succeeded · {c.failed} failed · {c.canceled} canceled · {c.running} running · {c.pending} pending</div>
            <button type="button" onClick={() => void downloadResults(b).catch((e: unknown) => setError(errorText(e)))}>Download results</button>
          </section>
        );
      })}
    </div>
  );
}
