// Name -> in-process handler. A name with no handler here belongs to an external worker
// (wire-format C.11); the engine makes that call, the registry only answers what it holds.
import { createEmitEvent } from "./emit-event.ts";
import type { EventLimits } from "../storage/index.ts";
import { fail } from "./fail.ts";
import { createHttpRequest } from "./http-request.ts";
import { createLlmCall } from "./llm-call.ts";
import { log } from "./log.ts";
import { DEFAULT_OUTBOUND_PER_HOST, HostSlots } from "./host-slots.ts";
import { humanReview } from "./human-review.ts";
import { noop } from "./noop.ts";
import { parseAllowList, systemLookup, type Lookup } from "./outbound-guard.ts";
import { queryInstance } from "./query-instance.ts";
import { selfModify } from "./self-modify.ts";
import { sendSignal } from "./send-signal.ts";
import { sleep } from "./sleep.ts";
import type { Handler } from "./types.ts";
import type { OutboundGuard } from "./outbound-request.ts";

export class HandlerRegistry {
  // A Map, not an object: "constructor" or "__proto__" must not look like handlers.
  private readonly handlers: ReadonlyMap<string, Handler>;

  /**
   * The outbound guard the built-in HTTP handlers share (allow-list, DNS vetting, per-host slots),
   * for the engine's own calls on a tenant's behalf (OAuth2 refreshes); absent in a bare registry.
   */
  constructor(handlers: Iterable<readonly [string, Handler]>, readonly outbound?: OutboundGuard) {
    this.handlers = new Map(handlers);
  }

  get(name: string): Handler | undefined {
    return this.handlers.get(name);
  }

  isBuiltIn(name: string): boolean {
    return this.handlers.has(name);
  }

  names(): string[] {
    return [...this.handlers.keys()];
  }
}

export interface BuiltInHandlerOptions {
  /**
   * BULKHEAD_HTTP_ALLOW entries (`host`, `host:port`, `[ipv6]:port`): hosts outbound HTTP may
   * reach even on loopback/private addresses. Throws on a malformed entry.
   */
  httpAllow: readonly string[];
  /** DNS resolution for the outbound guard; dns.lookup unless a test passes a fake. */
  lookup?: Lookup;
  /**
   * Concurrent http_request / llm_call requests one tenant may have open to one host (`host:port`
   * as the step names it); over it a step waits for a slot. DEFAULT_OUTBOUND_PER_HOST (16) for
   * every tenant unless given; a function so per-tenant overrides can plug in.
   */
  outboundPerHost?: (tenantId: string) => number;
  /** emit_event's fan-out bounds; DEFAULT_EVENT_LIMITS unless given. */
  eventLimits?: EventLimits;
  /** A tenant's step waited for a bounded resource (the ledger id): an outbound slot, or its minute of events. */
  onWait?: (tenantId: string, resource: "outbound_per_host" | "event_fan_out") => void;
}

export function createBuiltInHandlers(options: BuiltInHandlerOptions): HandlerRegistry {
  const guard = {
    allow: parseAllowList(options.httpAllow),
    lookup: options.lookup ?? systemLookup,
    // One set of slots for both handlers: a tenant's llm_call and http_request to one host share the bound.
    slots: new HostSlots(options.outboundPerHost ?? (() => DEFAULT_OUTBOUND_PER_HOST), options.onWait && ((tenantId) => options.onWait!(tenantId, "outbound_per_host"))),
  };
  return new HandlerRegistry([
    ["noop", noop],
    ["log", log],
    ["sleep", sleep],
    ["fail", fail],
    ["http_request", createHttpRequest(guard)],
    ["llm_call", createLlmCall(guard)],
    ["send_signal", sendSignal],
    ["query_instance", queryInstance],
    ["emit_event", createEmitEvent(options.eventLimits, options.onWait && ((tenantId) => options.onWait!(tenantId, "event_fan_out")))],
    ["self_modify", selfModify],
    ["human_review", humanReview],
  ], guard);
}
