// A tenant's members, for its admins: list, add by email (a new account gets a one-time password,
// returned once), change role, remove. The rules (last admin, who exists) live in server/control.
import { z } from "zod";
import { recordAudit } from "../../control/audit.ts";
import { addMemberByEmail, removeMember, setMemberRole } from "../../control/users.ts";
import { tenantAdminProcedure, router } from "../trpc.ts";
import type { TenantAdminContext } from "./api-keys.ts";

const role = z.enum(["member", "admin"]);
// Format checks are server/control's (normalizeEmail, the id lookup), so every bad value gets
// the same clear message there; these only bound the input's size.
const email = z.string().max(320);
const userId = z.string().max(64);

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

  /** Adds a user by email; `oneTimePassword` is set only when the account was created now. */
  add: tenantAdminProcedure.input(z.object({ email, role })).mutation(async ({ ctx, input }) => {
    const added = await addMemberByEmail(ctx.services.prisma, { tenantId: ctx.tenant.id, email: input.email, role: input.role });
    const created = added.oneTimePassword !== null;
    if (created) await audit(ctx, "user.create", { email: added.email });
    await audit(ctx, "member.add", { email: added.email, role: added.role, new_user: created });
    return added;
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
