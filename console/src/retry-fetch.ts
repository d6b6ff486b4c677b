// The useChat transport's fetch: a send (POST /api/chat) that got no answer (the connection was cut, perhaps after
// chatd committed it) or an UNAVAILABLE answer (chatd's database restarting or failing over) is sent again, the same
// body, so the same idempotency keys: /api/chat derives them from the useChat chat id and message id
// (src/api/ui-chat/actions.ts), and chatd returns the first result instead of making a second request.
// Refusals and aborts are returned or thrown at once.

const ATTEMPTS = 8;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2000;

async function unavailable(response: Response): Promise<boolean> {
  if (response.ok || !(response.headers.get("content-type") ?? "").includes("application/json")) return false;
  const body = await response.clone().json().catch(() => null) as { error?: { code?: unknown } } | null;
  return body?.error?.code === "UNAVAILABLE";
}

export function retryingFetch(fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms))): typeof fetch {
  return async (input, init) => {
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= ATTEMPTS;
      try {
        const response = await fetchImpl(input, init);
        if (last || !(await unavailable(response))) return response;
      } catch (error) {
        if (last || init?.signal?.aborted === true) throw error;
      }
      await sleep(Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1)));
    }
  };
}
