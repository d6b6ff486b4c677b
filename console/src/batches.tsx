// Batches: each with a progress bar (finished items of the total) and its results as a JSONL download, the
// values as their exact stored JSON text.
import { useEffect, useState } from "react";
import { batchResults, listBatches, type BatchSummary } from "./api.ts";

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

async function downloadResults(batch: BatchSummary) {
  const results = await batchResults(batch.rowId);
  // value_json is spliced in verbatim (it is JSON text), so big numbers keep every digit.
  const lines = results.map((r) => `{"line":${r.line},"request_id":${JSON.stringify(r.requestId)},"status":${JSON.stringify(r.status)},` +
    `"value":${r.valueJson ?? "null"},"error_code":${JSON.stringify(r.errorCode)},"error_message":${JSON.stringify(r.errorMessage)}}`);
  download(`batch-${batch.rowId}.jsonl`, lines.join("\n") + "\n");
}

export function BatchesPage() {
  const [batches, setBatches] = useState<BatchSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () => listBatches().then((b) => { if (!stopped) setBatches(b); }, (e: unknown) => setError(String(e)));
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
          <section key={b.rowId} aria-label={`Batch ${b.name ?? b.rowId}`} className="message">
            <h3>{b.name ?? b.rowId} · {b.status}</h3>
            <progress aria-label="Progress" max={b.totalItems} value={finished}>{finished} of {b.totalItems}</progress>
            <div className="status">{finished} of {b.totalItems} finished · {c.succeeded} succeeded · {c.failed} failed · {c.canceled} canceled · {c.running} running · {c.pending} pending</div>
            <button type="button" onClick={() => void downloadResults(b).catch((e: unknown) => setError(String(e)))}>Download results</button>
          </section>
        );
      })}
    </div>
  );
}
