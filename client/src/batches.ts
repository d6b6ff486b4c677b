// `client.batches.*`: reading batches (created with the createBatch mutation or `chatd batch submit`) and their
// results. Results are read page by page in line order; a value is its receipt's exact JSON text.
import * as documents from "./documents.ts";
import { toBatch, toBatchItem } from "./normalize.ts";
import type { Transport } from "./transport.ts";
import type { Batch, BatchItemResult } from "./types.ts";

export interface BatchListOptions {
  /** At most this many batches (all when omitted). */
  first?: number;
}

export interface BatchResultsOptions {
  /** Items per request (default 500). */
  pageSize?: number;
  signal?: AbortSignal;
}

type Raw = Record<string, unknown>;

interface ItemsPage {
  allBatchItems: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: Raw[] };
}

export class BatchesApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Your batches, newest first, with their item counts. */
  async list(options: BatchListOptions = {}, signal?: AbortSignal): Promise<Batch[]> {
    const data = await this.transport.request<{ allBatches: { nodes: Raw[] } }>(documents.LIST_BATCHES, { first: options.first ?? null }, signal);
    return data.allBatches.nodes.map(toBatch);
  }

  /** Every item of the batch in line order, with its value or error; an unknown batch (or another user's) yields none. */
  async *results(batchId: string, options: BatchResultsOptions = {}): AsyncGenerator<BatchItemResult> {
    let after: string | null = null;
    for (;;) {
      const page: ItemsPage = await this.transport.request<ItemsPage>(documents.BATCH_ITEMS,
        { id: batchId, after, first: options.pageSize ?? 500 }, options.signal);
      for (const raw of page.allBatchItems.nodes) yield toBatchItem(raw);
      if (!page.allBatchItems.pageInfo.hasNextPage) return;
      after = page.allBatchItems.pageInfo.endCursor;
    }
  }
}
