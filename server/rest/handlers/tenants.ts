// POST /tenants {id, name?}: platform automation creates tenants (operator keys only). Idempotent:
// an id that exists answers 200 with the tenant as it is, a new one 201. Placed on the default
// backend at epoch 1, as the CLI does.
import { z } from "zod";
import { recordAudit } from "../../control/audit.ts";
import { ensureTenant } from "../../control/tenants.ts";
import { shapedBody } from "../body.ts";
import { json } from "../http.ts";
import type { RestContext } from "../route.ts";

const CreateTenantRequest = z.object({
  id: z.string(),
  name: z.string().nullish(),
});
type CreateTenantRequest = z.output<typeof CreateTenantRequest>;

// The tenant to create is not one the request acts for.
export const tenantBody = shapedBody(CreateTenantRequest, () => []);

export async function createTenant(context: RestContext<CreateTenantRequest>): Promise<Response> {
  const { prisma, config } = context.services;
  const { tenant, created } = await ensureTenant(prisma, {
    slug: context.body.id,
    name: context.body.name ?? undefined,
    backendId: config.BULKHEAD_DEFAULT_BACKEND,
  });
  if (created) {
    const key = await prisma.apiKey.findUnique({ where: { id: context.principal!.keyId }, select: { prefix: true } });
    await recordAudit(prisma, {
      actor: key?.prefix ?? "api key",
      tenantId: tenant.id,
      action: "tenant.create",
      details: { name: tenant.name, backend_id: config.BULKHEAD_DEFAULT_BACKEND },
    });
  }
  return json(created ? 201 : 200, { id: tenant.id, name: tenant.name, created_at: tenant.createdAt.toISOString() });
}
