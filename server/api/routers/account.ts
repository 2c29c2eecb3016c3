import { protectedProcedure, router } from "../trpc.ts";

export const accountRouter = router({
  /** The signed-in user and the tenants they belong to. */
  me: protectedProcedure.query(async ({ ctx }) => {
    const memberships = await ctx.services.prisma.membership.findMany({
      where: { userId: ctx.user.id },
      select: { role: true, tenant: { select: { id: true, name: true } } },
      orderBy: { tenantId: "asc" },
    });
    return {
      email: ctx.user.email,
      isOperator: ctx.user.isOperator,
      tenants: memberships.map((m) => ({ id: m.tenant.id, name: m.tenant.name, role: m.role })),
    };
  }),
});
