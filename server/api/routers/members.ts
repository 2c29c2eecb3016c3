// A tenant's members, for its admins: list, invite by email (a one-time link, returned once; the
// answer is the same whether or not the address has an account), pending invitations and their
// revocation, change role, remove. The rules (last admin, invitations) live in server/control.
import { z } from "zod";
import { recordAudit } from "../../control/audit.ts";
import { createInvitation, INVITE_PATH_PREFIX, listPendingInvitations, revokeInvitation } from "../../control/invitations.ts";
import { removeMember, setMemberRole } from "../../control/users.ts";
import { tenantAdminProcedure, router } from "../trpc.ts";
import type { TenantAdminContext } from "./api-keys.ts";

const role = z.enum(["member", "admin"]);
// Format checks are server/control's (normalizeEmail, the id lookup), so every bad value gets
// the same clear message there; these only bound the input's size.
const email = z.string().max(320);
const userId = z.string().max(64);
const id = z.string().max(64);

function audit(ctx: TenantAdminContext, action: string, details: Record<string, string | boolean>) {
  return recordAudit(ctx.services.prisma, { actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: ctx.tenant.id, action, details });
}

export const membersRouter = router({
  /** The tenant's members, for its admins. */
  list: tenantAdminProcedure.query(async ({ ctx }) => {
    const members = await ctx.services.prisma.membership.findMany({
      where: { tenantId: ctx.tenant.id },
      select: { role: true, createdAt: true, user: { select: { id: true, email: true, name: true } } },
      orderBy: { user: { email: "asc" } },
    });
    return members.map((m) => ({ ...m.user, role: m.role, since: m.createdAt.toISOString(), isYou: m.user.id === ctx.user.id }));
  }),

  /**
   * Invites an address: the answer has the same keys and values (ids, link and times aside)
   * whether it has an account anywhere or none; only a current member is refused (CONFLICT).
   * The link is the one place the token appears; re-inviting a pending address replaces its link.
   */
  invite: tenantAdminProcedure.input(z.object({ email, role })).mutation(async ({ ctx, input }) => {
    const invitation = await createInvitation(ctx.services.prisma, {
      tenantId: ctx.tenant.id, email: input.email, role: input.role, invitedByUserId: ctx.user.id,
    });
    await audit(ctx, "member.invite", { email: invitation.email, role: invitation.role, invitation: invitation.id, replaced: invitation.replaced });
    return {
      id: invitation.id,
      email: invitation.email,
      role: invitation.role,
      expiresAt: invitation.expiresAt.toISOString(),
      link: `${INVITE_PATH_PREFIX}${invitation.token}`,
    };
  }),

  /** Pending invitations (not accepted, revoked or expired), newest first. */
  invitations: tenantAdminProcedure.query(async ({ ctx }) =>
    (await listPendingInvitations(ctx.services.prisma, ctx.tenant.id)).map((i) => ({
      id: i.id,
      email: i.email,
      role: i.role,
      createdAt: i.createdAt.toISOString(),
      expiresAt: i.expiresAt.toISOString(),
      invitedBy: i.invitedBy,
    })),
  ),

  /** Revokes a pending invitation: its link shows the invalid page from now on. Any other id is NOT_FOUND. */
  revokeInvitation: tenantAdminProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
    const revoked = await revokeInvitation(ctx.services.prisma, { tenantId: ctx.tenant.id, id: input.id });
    await audit(ctx, "member.invite.revoke", { email: revoked.email, role: revoked.role, invitation: revoked.id });
    return { id: revoked.id, email: revoked.email };
  }),

  setRole: tenantAdminProcedure.input(z.object({ userId, role })).mutation(async ({ ctx, input }) => {
    const change = await setMemberRole(ctx.services.prisma, { tenantId: ctx.tenant.id, userId: input.userId, role: input.role });
    if (change.changed) await audit(ctx, "member.role", { email: change.email, from: change.from, to: input.role });
    return { userId: change.userId, email: change.email, role: input.role, changed: change.changed };
  }),

  remove: tenantAdminProcedure.input(z.object({ userId })).mutation(async ({ ctx, input }) => {
    const change = await removeMember(ctx.services.prisma, { tenantId: ctx.tenant.id, userId: input.userId });
    await audit(ctx, "member.remove", { email: change.email, role: change.from });
    return { userId: change.userId, email: change.email };
  }),
});
