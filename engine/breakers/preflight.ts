// The breaker's pre-flight decision, shared by every dispatch path (the flat step loop and the
// tree evaluator) so open-breaker behaviour cannot drift between them. It writes nothing to
// storage and records no failure: a deferral is not an outcome of the handler. Its only effect is
// the registry's own, taking the half-open probe when check() grants it.
import type { CircuitBreakerRegistry } from "./registry.ts";
import { isTracked } from "./tracked.ts";

/** Fits runPreflight's breaker slot: a proceed names the handler to dispatch (maybe the fallback). */
export type BreakerDecision = { kind: "proceed"; handler: string } | { kind: "defer"; until: Date; reason: "breaker" };

/**
 * Proceed with the step's handler while its breaker lets it through; when it is open, proceed
 * with `fallback_handler` if that one is untracked or its own breaker lets it through (a
 * half-open fallback's check makes this dispatch its probe); otherwise defer to now plus the
 * primary's remaining cooldown.
 */
export function breakerPreflight(
  registry: CircuitBreakerRegistry,
  tenantId: string,
  step: { handler: string; fallback_handler?: string },
  now: number,
): BreakerDecision {
  const wait = registry.check(tenantId, step.handler, now);
  if (wait <= 0) return { kind: "proceed", handler: step.handler };
  const fallback = step.fallback_handler;
  if (fallback !== undefined && (!isTracked(fallback) || registry.check(tenantId, fallback, now) <= 0)) {
    return { kind: "proceed", handler: fallback };
  }
  return { kind: "defer", until: new Date(now + wait), reason: "breaker" };
}
