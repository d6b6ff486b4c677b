// A create answers with its Response as the creating transaction left it. Before, the API read the Response again
// after the commit, and a worker that finished the turn in between made a `background` create answer `completed`
// (the Python SDK check saw it now and then); the OpenAI API answers a background create `queued` or `in_progress`.
// Deterministic: the pool below lets "the worker" finish the turn whenever the API opens a transaction after the one
// that created the Response.
import type pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseCreateResponse } from "../../src/api/openai/responses-request.ts";
import { statusOf } from "../../src/api/openai/response-object.ts";
import { createResponse, readResponse, type Store } from "../../src/api/openai/store.ts";
import type { ChatListener } from "../../src/api/listener.ts";
import { acquire, chatDatabase, finishError } from "../support/chats.ts";
import type { TestDatabase } from "../support/db.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("reply"));
});
test.after(async () => {
  await db.drop();
});

/** A pool whose every transaction after the first starts with the newest chat's turn ended, as a fast worker would. */
function racingPool(): pg.Pool {
  let connects = 0;
  return new Proxy(db.pool, {
    get(target, property, receiver) {
      if (property !== "connect") return Reflect.get(target, property, receiver) as unknown;
      return async () => {
        connects += 1;
        if (connects > 1) {
          const { rows: [newest] } = await db.pool.query<{ id: string }>(
            "select chat_id as id from chat_public.structured_output_requests order by created_at desc limit 1");
          await finishError(db, await acquire(db, newest!.id));
        }
        return target.connect();
      };
    },
  });
}

test("a background create answers with its Response as created, even when the turn ends before the reply", async () => {
  const store: Store = { pool: racingPool(), listener: {} as ChatListener };
  const request = parseCreateResponse({ model: "scripted", input: "hello", background: true });
  const created = await createResponse(store, user, request, null);
  assert.ok(["queued", "in_progress"].includes(statusOf(created)), statusOf(created));
  // The turn did end right after (in the next transaction): a retrieve sees it.
  const later = await readResponse(store, user, created.response_id);
  assert.is(statusOf(later!), "failed");
});

test.run();
