// The web app's change notices: history is not news (no event for what was there at connect),
// then one `changed` event per poll that found anything, whose id resumes after it.
import { expect, it } from "vitest";
import { createLogger } from "../../engine/logger.ts";
import { decodeChangeCursor, type ChangeCursor } from "../../engine/storage/index.ts";
import { changeNoticeResponse } from "./change-stream.ts";

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
