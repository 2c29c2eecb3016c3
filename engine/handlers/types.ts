// The contract between the engine and an in-process step handler.
import type { Logger } from "../logger.ts";

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
}

// Handlers return typed outcomes instead of throwing (an exception is an engine bug, treated as a retryable failure by the caller).
export type HandlerOutcome =
  | { kind: "success"; output: unknown }
  | { kind: "failure"; retryable: boolean; message: string };

export type Handler = (input: HandlerInput) => Promise<HandlerOutcome>;

export function success(output: unknown): HandlerOutcome {
  return { kind: "success", output };
}

export function failure(retryable: boolean, message: string): HandlerOutcome {
  return { kind: "failure", retryable, message };
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
