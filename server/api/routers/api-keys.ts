// A tenant's API keys, for its admins: list (by prefix), create (the secret is returned once and
// never again), revoke. Keys of other tenants and operator keys are never visible here.
import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeySummary } from "../../control/api-keys.ts";
import { recordAudit } from "../../control/audit.ts";
import type { Role } from "../../control/users.ts";
import type { Services } from "../../services.ts";
import { tenantAdminProcedure, router } from "../trpc.ts";

/** What tenantAdminProcedure puts in the context, for the routers' audit helpers. */
export interface TenantAdminContext {
  services: Services;
  user: { id: string; email: string };
  tenant: { id: string; role: Role };
}

function audit(ctx: TenantAdminContext, action: string, details: Record<string, string>) {
  return recordAudit(ctx.services.prisma, { actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: ctx.tenant.id, action, details });
}

const summary = (key: ApiKeySummary) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
});

export const apiKeysRouter = router({
  /** The tenant's keys, newest first, revoked ones included. */
  list: tenantAdminProcedure.query(async ({ ctx }) => (await listApiKeys(ctx.services.prisma, ctx.tenant.id)).map(summary)),

  /** A new key; the response is the only place its secret ever appears. */
  create: tenantAdminProcedure
    .input(z.object({ name: z.string().trim().min(1, "give the key a name").max(100) }))
    .mutation(async ({ ctx, input }) => {
      const key = await createApiKey(ctx.services.prisma, { tenantId: ctx.tenant.id, name: input.name });
      await audit(ctx, "api_key.create", { prefix: key.prefix, name: input.name });
      return { id: key.id, name: input.name, prefix: key.prefix, secret: key.secret };
    }),

  /** Revokes one of the tenant's keys; any other id, whatever it is, is NOT_FOUND. */
  revoke: tenantAdminProcedure.input(z.object({ id: z.string().max(64) })).mutation(async ({ ctx, input }) => {
    const key = await revokeApiKey(ctx.services.prisma, ctx.tenant.id, input.id);
    if (key.changed) await audit(ctx, "api_key.revoke", { prefix: key.prefix, name: key.name });
    return summary(key);
  }),
});
