// The audit log for operators: every operator and admin action, newest first, filterable by
// tenant, action (prefix, e.g. "breaker.") and actor, in keyset pages.
import { z } from "zod";
import { AppError } from "../../../engine/errors.ts";
import { operatorProcedure, router } from "../trpc.ts";

const PAGE_MAX = 200;

export const auditRouter = router({
  list: operatorProcedure
    .input(
      z.object({
        tenantId: z.string().max(64).optional(),
        /** Matches actions starting with it: "tenant.move" finds tenant.move.start and .done. */
        action: z.string().max(64).optional(),
        actor: z.string().max(320).optional(),
        /** The id of the last entry of the page before. */
        cursor: z.string().regex(/^\d{1,19}$/, "invalid cursor").nullish(),
        limit: z.int().min(1).max(PAGE_MAX).default(50),
      }),
    )
    .query(async ({ ctx, input }) => {
      const before = input.cursor ? BigInt(input.cursor) : undefined;
      if (before !== undefined && before < 1n) throw new AppError("invalid_argument", "invalid cursor", ["cursor"]);
      const rows = await ctx.services.prisma.auditLog.findMany({
        where: {
          ...(input.tenantId ? { tenantId: input.tenantId } : {}),
          ...(input.action ? { action: { startsWith: input.action } } : {}),
          ...(input.actor ? { actor: { contains: input.actor, mode: "insensitive" as const } } : {}),
          ...(before !== undefined ? { id: { lt: before } } : {}),
        },
        orderBy: { id: "desc" },
        take: input.limit + 1,
      });
      const page = rows.slice(0, input.limit);
      return {
        items: page.map((r) => ({
          id: r.id.toString(), at: r.at.toISOString(), actor: r.actor, tenantId: r.tenantId, action: r.action, details: r.details,
        })),
        next: rows.length > input.limit ? page.at(-1)!.id.toString() : null,
      };
    }),
});
