// The contract between the engine and an in-process step handler.
import type { Logger } from "../logger.ts";
import type { Block } from "../sequence/schema.ts";
import type { RunStore } from "../storage/index.ts";

/**
 * The caller's view of other instances: bound to its tenant (and itself as the parent), so a
 * lookup by id finds only the tenant's own instances and a foreign id reads as a missing one.
 */
export type TenantInstances = Pick<RunStore, "getInstance" | "signalInstance" | "emitEvent" | "appendLog">;

export interface HandlerInput {
  tenantId: string;
  instanceId: string;
  blockId: string;
  /** 0-based attempt number of this step. */
  attempt: number;
  /** Step params with templates already resolved; null is treated like {}. */
  params: unknown;
  /** The instance context as the step may see it: { data, config, ... }. */
  context: { data: unknown; config: unknown };
  /** Aborted when the step times out or the instance is cancelled: handlers must stop promptly. */
  signal: AbortSignal;
  log: Logger;
  /** Other instances of the caller's tenant (send_signal, query_instance, emit_event). */
  instances: TenantInstances;
  /** The instance's own top-level blocks now (self_modify adds to them). */
  blocks: readonly Block[];
  /** The answer an input gate received (human_review), if any. */
  humanInput?: unknown;
}

/**
 * Handlers return typed outcomes instead of throwing (a throw is a bug in the handler, treated as
 * a retryable failure):
 * - success: the step's output; `blocks` (self_modify only) are the instance's new top-level blocks;
 * - failure: retried per the step's retry policy when retryable, else the step fails;
 * - snooze: not a verdict: the step runs again at `until`, with the same attempt number;
 * - cancel: the step ends cancelled, as if a cancel signal had reached it.
 */
export type HandlerOutcome =
  | { kind: "success"; output: unknown; blocks?: Block[] }
  | { kind: "failure"; retryable: boolean; message: string; code?: string; httpStatus?: number }
  | { kind: "snooze"; until: Date }
  | { kind: "cancel" };

export type Handler = (input: HandlerInput) => Promise<HandlerOutcome>;

export function success(output: unknown): HandlerOutcome {
  return { kind: "success", output };
}

/** `details`: what kind of failure it was (`code`) and, for an HTTP vendor, its status. */
export function failure(retryable: boolean, message: string, details: { code?: string; httpStatus?: number } = {}): HandlerOutcome {
  return { kind: "failure", retryable, message, ...details };
}

/**
 * Params as an object: `null`/absent read as `{}` (wire-format A.3). Any other non-object value
 * gives null, and each handler decides whether that is an error or means "all defaults".
 */
export function paramsObject(params: unknown): Record<string, unknown> | null {
  if (params === null || params === undefined) return {};
  if (typeof params === "object" && !Array.isArray(params)) return params as Record<string, unknown>;
  return null;
}
