// The audit log of operator and admin actions.
import type { Prisma } from "../db/prisma.ts";
import type { Prisma as PrismaTypes } from "../db/generated/client.ts";

export interface AuditEntry {
  /** An email, "cli" or an API key prefix. */
  actor: string;
  actorUserId?: string | null;
  tenantId?: string | null;
  action: string;
  details?: PrismaTypes.InputJsonValue;
}

/** Records the entry; `prisma` may be a transaction, so the entry commits with the change it records. */
export async function recordAudit(prisma: Pick<Prisma, "auditLog">, entry: AuditEntry): Promise<void> {
  await prisma.auditLog.create({
    data: {
      actor: entry.actor,
      actorUserId: entry.actorUserId ?? null,
      tenantId: entry.tenantId ?? null,
      action: entry.action,
      details: entry.details ?? {},
    },
  });
}
