import { z } from "zod";
import { changePassword, signOutEverywhere } from "../../auth/account.ts";
import { SESSION_MAX_AGE_MS } from "../../auth/sessions.ts";
import { protectedProcedure, router } from "../trpc.ts";

// Far above what a password may be (72 bytes, server/auth/password.ts, which says why in words):
// only a bound on what is read.
const password = z.string().max(1024);

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

  /** How many sessions of the user are live (signed-in browsers and devices, this one included). */
  sessions: protectedProcedure.query(async ({ ctx }) => {
    const live = await ctx.services.prisma.userSession.count({
      where: { userId: ctx.user.id, createdAt: { gte: new Date(Date.now() - SESSION_MAX_AGE_MS) } },
    });
    return { live };
  }),

  /**
   * A new password, given the current one; every session of the user ends with the change (this
   * one too: the page sends the user to sign in with the new password). A wrong current password
   * is BAD_REQUEST and counts against the account's sign-in throttle.
   */
  changePassword: protectedProcedure
    .input(z.object({ currentPassword: password, newPassword: password }))
    .mutation(({ ctx, input }) => changePassword(ctx.services.prisma, { userId: ctx.user.id, ...input })),

  /** Ends every session of the user, this one included. */
  signOutEverywhere: protectedProcedure.mutation(async ({ ctx }) => ({
    ended: await signOutEverywhere(ctx.services.prisma, ctx.user, { actor: ctx.user.email, actorUserId: ctx.user.id }),
  })),
});
