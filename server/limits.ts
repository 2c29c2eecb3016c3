// A tenant's step budget and rate limits, shared by the CLI (`limits …`) and the operator console
// (tRPC ops.limits): the write on the tenant's backend, and its line in the audit log. A zero
// removes; removing what is not there changes nothing and records nothing.
import type { TenantStore } from "../engine/storage/index.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Prisma } from "./db/prisma.ts";

type Actor = Pick<AuditEntry, "actor" | "actorUserId">;
export type LimitChange = "set" | "removed" | "absent";

/** At most `maxCount` steps with rate-limit key `key` per `windowMs`; 0 removes the limit. */
export async function applyRateLimit(
  prisma: Prisma, store: TenantStore, by: Actor, limit: { key: string; maxCount: number; windowMs: number },
): Promise<LimitChange> {
  const { key, maxCount, windowMs } = limit;
  if (maxCount === 0) {
    if (!(await store.removeRateLimitPolicy(key))) return "absent";
    await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "rate_limit.remove", details: { key } });
    return "removed";
  }
  await store.setRateLimitPolicy(key, maxCount, windowMs);
  await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "rate_limit.set", details: { key, max_count: maxCount, window_ms: windowMs } });
  return "set";
}

/** `stepsPerPeriod` steps per `periodSecs`; 0 removes the budget (unlimited). */
export async function applyBudget(
  prisma: Prisma, store: TenantStore, by: Actor, budget: { stepsPerPeriod: number; periodSecs: number },
): Promise<LimitChange> {
  const { stepsPerPeriod, periodSecs } = budget;
  if (stepsPerPeriod === 0) {
    if (!(await store.removeBudget())) return "absent";
    await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "budget.remove" });
    return "removed";
  }
  await store.setBudget(stepsPerPeriod, periodSecs, new Date());
  await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "budget.set", details: { steps_per_period: stepsPerPeriod, period_secs: periodSecs } });
  return "set";
}
