// The tenant's change feed as Server-Sent Events (wire-format S, /changes/stream): each entry an
// event `change` whose id is the entry's cursor, so a client that reconnects with Last-Event-ID
// (as EventSource does by itself) resumes right after the last entry it got. It reads the feed
// through the tenant's store, a page after another while there are more, then every 500 ms; a
// storage failure sends an `error` event with a hint and the next read is tried after 1 s.
import type { Logger } from "../../engine/logger.ts";
import { encodeChangeCursor, type ChangeCursor, type ChangesPage } from "../../engine/storage/index.ts";
import { sseEvent, sseResponse } from "./sse.ts";

export const CHANGE_POLL_MS = 500;
const RETRY_MS = 1_000;

export interface ChangeSource {
  readChanges(after: ChangeCursor | null, limit: number): Promise<ChangesPage>;
}

export function changeStreamResponse(
  source: ChangeSource,
  options: { after: ChangeCursor | null; limit: number; signal: AbortSignal; release: () => void; log: Logger; pollMs?: number },
): Response {
  return sseResponse(options, (channel) => {
    let after = options.after;
    const poll = async () => {
      let wait = options.pollMs ?? CHANGE_POLL_MS;
      try {
        for (;;) {
          const page = await source.readChanges(after, options.limit);
          if (channel.closed) return;
          for (const change of page.changes) {
            after = { createdAt: change.created_at, id: change.id };
            channel.send(sseEvent("change", change, encodeChangeCursor(after)));
          }
          if (!page.hasMore) break;
        }
      } catch (error) {
        options.log.warn({ err: error }, "change stream: read failed, retrying");
        channel.send(sseEvent("error", { error: "the change feed could not be read; retrying in 1 s" }));
        wait = RETRY_MS;
      }
      channel.later(wait, () => void poll());
    };
    void poll();
  });
}

export interface ChangeNotices {
  newestChange(after: ChangeCursor | null): Promise<ChangeCursor | null>;
}

/**
 * The web app's variant: one `changed` event (data `{}`, id the newest entry's cursor) for each
 * poll that found anything new, however many entries that was, so a page refetches what it
 * shows once. Without a resume point it starts at the feed's end: history is not news.
 */
export function changeNoticeResponse(
  source: ChangeNotices,
  options: { after: ChangeCursor | null; signal: AbortSignal; release: () => void; log: Logger; pollMs?: number },
): Response {
  return sseResponse(options, (channel) => {
    let after = options.after;
    let started = after !== null;
    const poll = async () => {
      let wait = options.pollMs ?? CHANGE_POLL_MS;
      try {
        const newest = await source.newestChange(after);
        if (channel.closed) return;
        if (newest) {
          after = newest;
          if (started) channel.send(sseEvent("changed", {}, encodeChangeCursor(newest)));
        }
        started = true;
      } catch (error) {
        options.log.warn({ err: error }, "change notices: read failed, retrying");
        wait = RETRY_MS;
      }
      channel.later(wait, () => void poll());
    };
    void poll();
  });
}
