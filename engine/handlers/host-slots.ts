// The outbound-request bound of the resource ledger: at most `limit(tenantId)` requests of one
// tenant to one host at a time (http_request and llm_call share it). Over the bound a request
// waits for a slot, first come first served per (tenant, host); it never fails because of the
// bound, only when its own signal fires while it waits. The key is the pair, so a quiet tenant's
// request to a host a noisy one saturates starts at once.
import { KeyedSlots, type ReleaseSlot } from "../resources/keyed-slots.ts";

export type { ReleaseSlot } from "../resources/keyed-slots.ts";

/** Concurrent outbound requests per (tenant, host) unless the engine configures another limit. */
export const DEFAULT_OUTBOUND_PER_HOST = 16;

/** The bound for a tenant; a function so per-tenant (tiered) overrides can plug in. */
export type SlotLimit = (tenantId: string) => number;

// A tenant id never holds a newline (it is a slug), so the pair's key is unambiguous.
const keyOf = (tenantId: string, host: string) => `${tenantId}\n${host}`;
const tenantOf = (key: string) => key.slice(0, key.indexOf("\n"));

export class HostSlots {
  private readonly slots: KeyedSlots;

  constructor(
    limit: SlotLimit = () => DEFAULT_OUTBOUND_PER_HOST,
    /** A request of the tenant had to wait for a slot. */
    private readonly onWait?: (tenantId: string) => void,
  ) {
    this.slots = new KeyedSlots((key) => limit(tenantOf(key)));
  }

  /**
   * Resolves with a release function once the caller holds one of the tenant's slots for `host`.
   * Rejects with `signal.reason` if the signal fires first; the place in the queue is withdrawn.
   */
  acquire(tenantId: string, host: string, signal: AbortSignal): Promise<ReleaseSlot> {
    return this.slots.acquire(keyOf(tenantId, host), signal, this.onWait && (() => this.onWait!(tenantId)));
  }

  /** Requests holding a slot and requests waiting for one, for (tenant, host). */
  usage(tenantId: string, host: string): { active: number; waiting: number } {
    return this.slots.usage(keyOf(tenantId, host));
  }
}
