// The web app's change notices: history is not news (no event for what was there at connect),
// then one `changed` event per poll that found anything, whose id resumes after it; and the
// REST change stream: an event per entry, an `error` event on a storage failure, then reading on.
import { expect, it } from "vitest";
import { createLogger } from "../../engine/logger.ts";
import { decodeChangeCursor, type ChangeCursor } from "../../engine/storage/index.ts";
import { changeNoticeResponse, changeStreamResponse } from "./change-stream.ts";

it("announces news once per poll, starting from the feed's end", async () => {
  const entry = (n: number): ChangeCursor => ({ createdAt: `2026-12-01T00:00:0${n}.000000Z`, id: `00000000-0000-4000-8000-00000000000${n}` });
  // What the feed holds after each poll's position: the past, then nothing, then two new entries at once.
  const answers = [entry(1), null, entry(3)];
  const asked: (ChangeCursor | null)[] = [];
  const abort = new AbortController();
  const response = changeNoticeResponse(
    { newestChange: async (after) => (asked.push(after), answers.shift() ?? null) },
    { after: null, signal: abort.signal, release: () => {}, log: createLogger("test", "silent"), pollMs: 5 },
  );
  const reader = response.body!.getReader();
  let text = "";
  while (!text.includes("event: changed")) text += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  expect(text).toMatch(/^: open\n\n(: keep-alive\n\n)*id: (\S+)\nevent: changed\ndata: \{\}\n\n$/);
  expect(decodeChangeCursor(/id: (\S+)/.exec(text)![1]!)).toEqual(entry(3));
  expect(asked.slice(0, 3)).toEqual([null, entry(1), entry(1)]);
});

it("streams entries as change events with resumable ids, and on a storage failure sends an error event and reads again", async () => {
  const entry = (n: number) => ({
    id: `00000000-0000-4000-8000-00000000000${n}`, instance_id: "i", tenant_id: "t", event_type: "state_transition",
    details: null, created_at: `2026-12-01T00:00:0${n}.000000Z`,
  });
  const reads: (() => Promise<{ changes: ReturnType<typeof entry>[]; nextCursor: null; hasMore: boolean }>)[] = [
    async () => ({ changes: [entry(1)], nextCursor: null, hasMore: false }),
    async () => {
      throw new Error("connection lost");
    },
    async () => ({ changes: [entry(2)], nextCursor: null, hasMore: false }),
  ];
  const asked: (ChangeCursor | null)[] = [];
  const abort = new AbortController();
  const response = changeStreamResponse(
    { readChanges: async (after) => (asked.push(after), (reads.shift() ?? (async () => ({ changes: [], nextCursor: null, hasMore: false })))()) },
    { after: null, limit: 10, signal: abort.signal, release: () => {}, log: createLogger("test", "silent"), pollMs: 5 },
  );
  const reader = response.body!.getReader();
  let text = "";
  while ((text.match(/event: change\n/g) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  const events = [...text.matchAll(/(?:id: (\S+)\n)?event: (\w+)\ndata: (.*)\n\n/g)].map(([, id, name, data]) => ({ id, name, data: JSON.parse(data!) }));
  expect(events.map((e) => e.name)).toEqual(["change", "error", "change"]);
  expect(events[1]!.data).toEqual({ error: expect.stringContaining("retrying") });
  expect(decodeChangeCursor(events[0]!.id!)).toEqual({ createdAt: entry(1).created_at, id: entry(1).id });
  // The read after the failure resumes after the last entry sent, not from the start.
  expect(asked.slice(0, 3)).toEqual([null, { createdAt: entry(1).created_at, id: entry(1).id }, { createdAt: entry(1).created_at, id: entry(1).id }]);
});
