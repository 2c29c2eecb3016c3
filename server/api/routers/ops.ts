import { listTenants } from "../../control/tenants.ts";
import { operatorProcedure, router } from "../trpc.ts";

export const opsRouter = router({
  tenants: operatorProcedure.query(async ({ ctx }) => {
    const tenants = await listTenants(ctx.services.prisma);
    return tenants.map((t) => ({ ...t, createdAt: t.createdAt.toISOString() }));
  }),
  backends: operatorProcedure.query(({ ctx }) => ctx.services.storage.backends.ids()),
});
