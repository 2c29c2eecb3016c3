// Deleting a tenant from the console: the operator types the tenant's id to confirm, the
// deletion is recorded (and audited) here, and an engine runs it (engine/lifecycle); the page
// follows its phases until the tenant is gone.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { startDeletion } from "../../../engine/lifecycle/delete-tenant.ts";
import { DELETION_PHASES } from "../../../engine/storage/index.ts";
import { operatorProcedure, operatorTenantProcedure, router } from "../trpc.ts";

export const opsDeletionsRouter = router({
  /** Records the deletion of the tenant (or finds the one under way); `confirm` must be the tenant's id. */
  start: operatorTenantProcedure.input(z.object({ confirm: z.string().max(64) })).mutation(async ({ ctx, input }) => {
    if (input.confirm !== input.tenantId) throw new TRPCError({ code: "BAD_REQUEST", message: "type the tenant's id to confirm the deletion" });
    const deletion = await startDeletion(ctx.services.storage, input.tenantId, ctx.user.email);
    return { deletionId: deletion.id, phase: deletion.phase };
  }),

  /** A deletion's progress: its phase (of DELETION_PHASES), the rows deleted so far, its last error; null for no such deletion. */
  get: operatorProcedure.input(z.object({ deletionId: z.uuid() })).query(async ({ ctx, input }) => {
    const deletion = await ctx.services.storage.deletions.get(input.deletionId);
    if (!deletion) return null;
    const rows = Object.values((deletion.detail.rows ?? {}) as Record<string, Record<string, number>>)
      .flatMap((tables) => Object.values(tables)).reduce((n, v) => n + v, 0);
    return {
      tenantId: deletion.tenantId, phase: deletion.phase, step: DELETION_PHASES.indexOf(deletion.phase), steps: DELETION_PHASES.length - 1,
      rows, error: deletion.error, startedAt: deletion.startedAt.toISOString(), finishedAt: deletion.finishedAt?.toISOString() ?? null,
    };
  }),
});
