// Opening a live stream for a caller already known to own what it follows: a slot from the
// process's stream budget, shared by both kinds (S), then the stream itself.
import { AppError } from "../../engine/errors.ts";
import type { Logger } from "../../engine/logger.ts";
import type { ChangeCursor } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import { changeStreamResponse, type ChangeSource } from "./change-stream.ts";
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

export function openInstanceStream(
  services: Services, tenantId: string, source: LiveSource, instanceId: string,
  options: { pollMs: number; signal: AbortSignal; log: Logger; lastEventId: string | null },
): Response {
  const release = streamSlots(services).take(tenantId);
  if (!release) throw new AppError("unavailable", "too many concurrent streaming clients; retry later");
  return instanceStreamResponse(source, instanceId, { ...options, release, after: positionOf(options.lastEventId) });
}

/** The tenant's change stream (S): a slot from the same budget, 429 in the spec's words when none is left. */
export function openChangeStream(
  services: Services, tenantId: string, source: ChangeSource,
  options: { after: ChangeCursor | null; limit: number; signal: AbortSignal; log: Logger },
): Response {
  const release = streamSlots(services).take(tenantId);
  if (!release) throw new AppError("rate_limited", "concurrent change stream limit reached");
  return changeStreamResponse(source, { ...options, release });
}
