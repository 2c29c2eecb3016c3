// Trigger slugs, shared by REST (/triggers) and the settings page (tRPC): the write, and its line
// in the audit log.
import { z } from "zod";
import type { NewTrigger, TenantStore, TriggerRecord } from "../engine/storage/index.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Prisma } from "./db/prisma.ts";

/** What a trigger points at: a sequence name, and a version to pin or null for the latest. */
export const TriggerTarget = z.object({
  sequence_name: z.string().min(1).max(256),
  sequence_version: z.int().min(1).max(2_147_483_647).nullable().default(null),
});
export type TriggerTarget = z.output<typeof TriggerTarget>;

/** Who made the change, as the audit log names them. */
type Actor = Pick<AuditEntry, "actor" | "actorUserId">;

/** Creates or repoints `slug`; `created` is false when it existed. */
export async function saveTrigger(prisma: Prisma, store: TenantStore, by: Actor, slug: string, target: NewTrigger) {
  const saved = await store.putTrigger(slug, target);
  await recordAudit(prisma, {
    ...by, tenantId: store.tenantId, action: saved.created ? "trigger.create" : "trigger.update",
    details: { slug, sequence_name: target.sequenceName, sequence_version: target.sequenceVersion },
  });
  return saved;
}

/** The removed trigger, or null when the tenant has none by that slug. */
export async function removeTrigger(prisma: Prisma, store: TenantStore, by: Actor, slug: string): Promise<TriggerRecord | null> {
  const removed = await store.deleteTrigger(slug);
  if (removed) await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "trigger.delete", details: { slug } });
  return removed;
}
