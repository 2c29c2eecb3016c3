// One instance's live stream as Server-Sent Events (wire-format S): `state` on the first poll and
// whenever it changes, each new output row exactly once (`output`), and `done` with the terminal
// state, after which the stream closes; `error` when the instance is gone. Bulkhead adds
// `progress` ({"updated_at"}) when the run wrote anything else (a step started, an attempt failed),
// so a page showing the run follows it too; SSE clients skip events they do not know. It polls the tenant's
// store (one statement per poll) every poll_ms, the first one poll_ms after connect; storage
// errors back off (doubling, at most 30 s) without closing; a keep-alive comment every 15 s.
// Each output event's `id:` is its position, so a client that reconnects with Last-Event-ID (as
// EventSource does by itself) resumes after the last output it got instead of from the start.
import { isTerminal, type InstanceState } from "../../engine/model.ts";
import type { Logger } from "../../engine/logger.ts";
import type { LivePoll, OutputPosition } from "../../engine/storage/index.ts";
import { wireBlockOutput } from "../rest/wire.ts";
import { sseEvent, sseResponse } from "./sse.ts";

export const POLL_MS = { default: 500, min: 100, max: 5000 } as const;
const MAX_BACKOFF_MS = 30_000;
/** Output rows read per statement; a poll reads on until it has them all. */
const OUTPUTS_PER_READ = 100;

export interface LiveSource {
  pollLive(instanceId: string, after: OutputPosition | null, limit: number): Promise<LivePoll | null>;
}

/** poll_ms as asked, clamped to 100..5000; 500 when absent or not a number. */
export function pollMsOf(value: string | null): number {
  const asked = value === null || value.trim() === "" ? NaN : Number(value);
  return Number.isFinite(asked) ? Math.min(POLL_MS.max, Math.max(POLL_MS.min, Math.round(asked))) : POLL_MS.default;
}

/** An output's position as an SSE event id: base64url of its JSON. */
export function outputEventId(position: OutputPosition): string {
  return Buffer.from(JSON.stringify({ created_at: position.createdAt.toISOString(), id: position.id })).toString("base64url");
}

/** The position a Last-Event-ID names, or null (absent, or not one of ours: then from the start). */
export function positionOf(eventId: string | null): OutputPosition | null {
  if (!eventId) return null;
  try {
    const parsed = JSON.parse(Buffer.from(eventId, "base64url").toString("utf8")) as { created_at?: unknown; id?: unknown };
    const createdAt = typeof parsed.created_at === "string" ? new Date(parsed.created_at) : null;
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
    return createdAt && !Number.isNaN(createdAt.getTime()) && typeof parsed.id === "string" && uuid.test(parsed.id) ? { createdAt, id: parsed.id } : null;
  } catch {
    return null;
  }
}

/**
 * The stream's response. `release` is called exactly once when the stream ends, whichever side
 * ends it (the client going away aborts `signal`).
 */
export function instanceStreamResponse(
  source: LiveSource, instanceId: string,
  options: { pollMs: number; signal: AbortSignal; release: () => void; log: Logger; after?: OutputPosition | null },
): Response {
  return sseResponse(options, (channel) => {
    const { send, close } = channel;
    let lastState: InstanceState | null = null;
    let lastUpdate: number | null = null;
    let after: OutputPosition | null = options.after ?? null;
    let backoff = options.pollMs;
    const poll = async () => {
      try {
        let read = await source.pollLive(instanceId, after, OUTPUTS_PER_READ);
        if (channel.closed) return;
        if (!read) {
          send(sseEvent("error", { error: "instance not found" }));
          return close();
        }
        if (read.state !== lastState) {
          lastState = read.state;
          send(sseEvent("state", { instance_id: instanceId, state: read.state }));
        } else if (lastUpdate !== null && read.updatedAt.getTime() !== lastUpdate) {
          send(sseEvent("progress", { updated_at: read.updatedAt.toISOString() }));
        }
        lastUpdate = read.updatedAt.getTime();
        // Every row up to this poll's snapshot, a page at a time.
        while (read && read.outputs.length > 0) {
          for (const output of read.outputs) send(sseEvent("output", wireBlockOutput(output), outputEventId(output)));
          const last: OutputPosition = read.outputs.at(-1)!;
          after = { createdAt: last.createdAt, id: last.id };
          read = read.outputs.length < OUTPUTS_PER_READ ? null : await source.pollLive(instanceId, after, OUTPUTS_PER_READ);
          if (channel.closed) return;
        }
        if (isTerminal(lastState)) {
          send(sseEvent("done", { state: lastState }));
          return close();
        }
        backoff = options.pollMs;
      } catch (error) {
        options.log.warn({ err: error, instance_id: instanceId }, "instance stream: poll failed, backing off");
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
      channel.later(backoff, () => void poll());
    };
    channel.later(options.pollMs, () => void poll());
  });
}
