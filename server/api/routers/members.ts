import { tenantAdminProcedure, router } from "../trpc.ts";

export const membersRouter = router({
  /** The tenant's members, for its admins. */
  list: tenantAdminProcedure.query(async ({ ctx }) => {
    const members = await ctx.services.prisma.membership.findMany({
      where: { tenantId: ctx.tenant.id },
      select: { role: true, createdAt: true, user: { select: { id: true, email: true, name: true } } },
      orderBy: { user: { email: "asc" } },
    });
    return members.map((m) => ({ ...m.user, role: m.role, since: m.createdAt.toISOString() }));
  }),
});
