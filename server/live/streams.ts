// Opening a live stream for a caller already known to own what it follows: a slot from the
// process's stream budget, shared by both kinds (S), then the stream itself.
import { AppError } from "../../engine/errors.ts";
import type { Logger } from "../../engine/logger.ts";
import type { ChangeCursor } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import { changeNoticeResponse, changeStreamResponse, type ChangeNotices, type ChangeSource } from "./change-stream.ts";
import { instanceStreamResponse, positionOf, type LiveSource } from "./instance-stream.ts";
import { StreamSlots } from "./stream-slots.ts";

// Per Services (one per web process; tests make their own), kept across hot reloads like it.
const cache = globalThis as unknown as { bulkheadStreamSlots?: WeakMap<Services, StreamSlots> };

/** The stream slots of this process (of these services), sized from their configuration. */
export function streamSlots(services: Services): StreamSlots {
  const slots = (cache.bulkheadStreamSlots ??= new WeakMap());
  let found = slots.get(services);
  if (!found) {
    found = new StreamSlots(services.config.BULKHEAD_STREAMS, services.config.BULKHEAD_STREAMS_PER_TENANT);
    slots.set(services, found);
  }
  return found;
}

/** A slot for one stream of `tenantId`, or the refusal (the spec words it per route). */
function takeSlot(services: Services, tenantId: string, refusal: () => AppError): () => void {
  const release = streamSlots(services).take(tenantId);
  if (!release) throw refusal();
  return release;
}

const noStreamSlot = () => new AppError("unavailable", "too many concurrent streaming clients; retry later");
const noChangeStreamSlot = () => new AppError("rate_limited", "concurrent change stream limit reached");

export function openInstanceStream(
  services: Services, tenantId: string, source: LiveSource, instanceId: string,
  options: { pollMs: number; signal: AbortSignal; log: Logger; lastEventId: string | null },
): Response {
  const release = takeSlot(services, tenantId, noStreamSlot);
  return instanceStreamResponse(source, instanceId, { ...options, release, after: positionOf(options.lastEventId) });
}

/** The tenant's change stream (S), 429 when the budget is used up. */
export function openChangeStream(
  services: Services, tenantId: string, source: ChangeSource,
  options: { after: ChangeCursor | null; limit: number; signal: AbortSignal; log: Logger },
): Response {
  return changeStreamResponse(source, { ...options, release: takeSlot(services, tenantId, noChangeStreamSlot) });
}

/** The web app's change notices (change-stream.ts), from the same budget. */
export function openChangeNotices(
  services: Services, tenantId: string, source: ChangeNotices,
  options: { after: ChangeCursor | null; signal: AbortSignal; log: Logger },
): Response {
  return changeNoticeResponse(source, { ...options, release: takeSlot(services, tenantId, noChangeStreamSlot) });
}
