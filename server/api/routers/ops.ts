// The operator console's tenants page: tenants with their placement (all of them, or the tenants
// table's keyset pages with their figures of the hour), the registered backends
// with their health, advancing a placement (with the epoch the operator expects to replace) and
// tenant moves, which engines run (engine/moves); signing a user out everywhere. Every change is in
// the audit log.
import { z } from "zod";
import { AppError } from "../../../engine/errors.ts";
import { startMove } from "../../../engine/moves/move-tenant.ts";
import { signOutEverywhereByEmail } from "../../auth/account.ts";
import { recordAudit } from "../../control/audit.ts";
import { createTenant, listTenants, TENANT_NAME_MAX } from "../../control/tenants.ts";
import { addMemberByEmail, normalizeEmail } from "../../control/users.ts";
import { FAIRNESS_RANGES, fairnessOf, type FairnessRange } from "../../ops/fairness.ts";
import { tenantFairnessOf } from "../../ops/tenant-fairness.ts";
import { limitDefaults, PAGE_SIZE, TENANT_ORDERS, tenantPage, withFigures } from "../../ops/tenant-directory.ts";
import { operatorProcedure, operatorTenantProcedure, router } from "../trpc.ts";
import { auditRouter } from "./audit.ts";
import { opsDeletionsRouter } from "./ops-deletions.ts";
import { opsExportsRouter } from "./ops-exports.ts";
import { opsLimitsRouter } from "./ops-limits.ts";

const tenantId = z.string().max(64);

export { FAIRNESS_RANGES };
const fairnessRange = z.enum(Object.keys(FAIRNESS_RANGES) as [FairnessRange]).default("1h");
const backendId = z.string().max(128);

export const opsRouter = router({
  tenants: operatorProcedure.query(async ({ ctx }) => {
    const tenants = await listTenants(ctx.services.prisma);
    return tenants.map((t) => ({ ...t, createdAt: t.createdAt.toISOString() }));
  }),

  /**
   * A page of the tenants table: the tenants whose slug or name starts with `search` (contains it,
   * from three characters), by name, slug, claims or lag of the last hour, after `cursor` (the
   * previous page's `next`), each with its placement, figures, breakers and limits (see
   * server/ops/tenant-directory.ts), and how many match.
   */
  tenantPage: operatorProcedure
    .input(z.object({
      search: z.string().max(200).default(""),
      order: z.enum(TENANT_ORDERS).default("name"),
      cursor: z.string().max(2_000).nullish(),
      limit: z.int().min(1).max(PAGE_SIZE.max).default(PAGE_SIZE.default),
    }))
    .query(({ ctx, input }) => tenantPage(ctx.services, input)),

  /** One tenant, as its row of the tenants table, with its member count; NOT_FOUND when there is no such tenant. */
  tenant: operatorProcedure.input(z.object({ tenantId })).query(async ({ ctx, input }) => {
    const [row] = await ctx.services.storage.directory.rowsOf([input.tenantId]);
    if (!row) throw new AppError("not_found", "tenant not found");
    const [[tenant], memberCount] = await Promise.all([
      withFigures(ctx.services, [row]),
      ctx.services.prisma.membership.count({ where: { tenantId: row.id } }),
    ]);
    return { ...tenant!, memberCount, defaults: limitDefaults(ctx.services.config) };
  }),

  /**
   * A new tenant on the chosen backend (the default when absent) with its first admin: an
   * existing account by email, or a new one whose one-time password is returned once.
   */
  createTenant: operatorProcedure
    .input(z.object({ slug: z.string().max(64), name: z.string().trim().max(TENANT_NAME_MAX).optional(), backendId: backendId.optional(), adminEmail: z.string().max(320) }))
    .mutation(async ({ ctx, input }) => {
      const { prisma, storage, config } = ctx.services;
      const backend = input.backendId ?? config.BULKHEAD_DEFAULT_BACKEND;
      if (!storage.backends.has(backend)) throw new AppError("invalid_argument", `backend "${backend.slice(0, 128)}" is not registered`, ["backendId"]);
      normalizeEmail(input.adminEmail); // a bad email is refused before anything is created
      const tenant = await createTenant(prisma, { slug: input.slug, name: input.name, backendId: backend });
      const admin = await addMemberByEmail(prisma, { tenantId: tenant.id, email: input.adminEmail, role: "admin" });
      const by = { actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: tenant.id };
      await recordAudit(prisma, { ...by, action: "tenant.create", details: { name: tenant.name, backend_id: backend } });
      if (admin.oneTimePassword !== null) await recordAudit(prisma, { ...by, action: "user.create", details: { email: admin.email } });
      await recordAudit(prisma, { ...by, action: "member.add", details: { email: admin.email, role: "admin" } });
      return { tenantId: tenant.id, name: tenant.name, backendId: backend, adminEmail: admin.email, oneTimePassword: admin.oneTimePassword };
    }),

  limits: opsLimitsRouter,
  audit: auditRouter,
  exports: opsExportsRouter,
  deletions: opsDeletionsRouter,

  users: router({
    /** Ends every session of the account with this email (NOT_FOUND "user not found" when there is none), audited. */
    signOutEverywhere: operatorProcedure.input(z.object({ email: z.string().max(320) })).mutation(({ ctx, input }) =>
      signOutEverywhereByEmail(ctx.services.prisma, input.email, { actor: ctx.user.email, actorUserId: ctx.user.id }),
    ),
  }),

  /** Registered backends (ids only: connection strings never leave the server) and their health. */
  backends: operatorProcedure.query(async ({ ctx }) => {
    const health = await ctx.services.storage.backendHealth(2_000);
    return health.map((b) => ({ id: b.id, reachable: b.latencyMs !== null, latencyMs: b.latencyMs }));
  }),

  /**
   * Points the tenant at a backend at `epoch`, which must be greater than the current one (the
   * operator sends the epoch they saw plus one, so a change made meanwhile is a CONFLICT). This
   * moves no rows: use a move for a tenant with data.
   */
  advancePlacement: operatorProcedure
    .input(z.object({ tenantId, backendId, epoch: z.int().min(1) }))
    .mutation(async ({ ctx, input }) => {
      const placement = await ctx.services.storage.advanceTenantPlacement(input.tenantId, input.backendId, input.epoch);
      await recordAudit(ctx.services.prisma, {
        actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: input.tenantId, action: "placement.advance",
        details: { backend_id: placement.backendId, epoch: placement.epoch },
      });
      return { tenantId: placement.tenantId, backendId: placement.backendId, epoch: placement.epoch };
    }),

  /** Records a move of the tenant to the backend; an engine runs it within seconds. */
  startMove: operatorProcedure.input(z.object({ tenantId, backendId })).mutation(async ({ ctx, input }) => {
    const started = await startMove(ctx.services.storage, input.tenantId, input.backendId, ctx.user.email);
    if (started.kind === "started") {
      await recordAudit(ctx.services.prisma, {
        actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: input.tenantId, action: "tenant.move.start",
        details: { from: started.move.fromBackend, to: input.backendId, move_id: started.move.id },
      });
    }
    return started.kind === "already_placed" ? { kind: started.kind, moveId: null } : { kind: started.kind, moveId: started.move.id };
  }),

  /**
   * Who takes the claims and who waits over the last `range` (see server/ops/fairness.ts): the
   * tenants over their lag objective first with the ledger's reasons, the top ones by claims, the
   * largest share, and per minute Jain's index and the top tenants' shares with the rest summed.
   * From the tenant_metrics rollups, never every tenant's minutes.
   */
  fairness: operatorProcedure
    .input(z.object({ range: fairnessRange }))
    .query(({ ctx, input }) => fairnessOf(ctx.services, input.range)),

  /** One tenant over `range`: its lag against its objective, deferrals by reason, breakers, limits and share per minute. */
  fairnessTenant: operatorTenantProcedure
    .input(z.object({ range: fairnessRange }))
    .query(({ ctx, input }) => tenantFairnessOf(ctx.services, ctx.store, input.range)),

  /** The latest moves, newest first, with their phases: the console polls this to watch one. */
  moves: operatorProcedure
    .input(z.object({ tenantId: tenantId.optional(), limit: z.int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const moves = await ctx.services.storage.moves.list(input);
      return moves.map((m) => ({
        id: m.id, tenantId: m.tenantId, fromBackend: m.fromBackend, toBackend: m.toBackend, fromEpoch: m.fromEpoch,
        phase: m.phase, error: m.error, requestedBy: m.requestedBy, detail: m.detail,
        startedAt: m.startedAt.toISOString(), updatedAt: m.updatedAt.toISOString(), finishedAt: m.finishedAt?.toISOString() ?? null,
      }));
    }),
});
