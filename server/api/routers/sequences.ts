// Sequences for the web app: the list (every version), one version's definition as the REST API
// returns it, the handler names the editor suggests, creating a version (the same parse and
// normalisation as POST /sequences) and running one (as POST /instances, input as `context.data`).
import { deleteVersion, storeParsedSequence } from "../../sequences.ts";
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { UUID_PATTERN } from "../../../engine/model.ts";
import { BUILTIN_HANDLERS, parseSequence } from "../../../engine/sequence/validate.ts";
import { inputProblem } from "../../../engine/sequence/input-schema.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import type { TenantStore } from "../../../engine/storage/index.ts";
import { InstanceContext } from "../../rest/context.ts";
import { wireSequence } from "../../rest/wire.ts";
import { router, tenantProcedure } from "../trpc.ts";

function sequenceIdOrNotFound(id: string): string {
  if (!UUID_PATTERN.test(id)) throw notFound("sequence");
  return id.toLowerCase();
}

/**
 * Stores `json` as a new sequence version, exactly as POST /sequences does: parseSequence (shape,
 * then the A.14 rules), then the canonical form with the id as PostgreSQL prints it.
 */
export async function storeSequence(store: TenantStore, json: unknown): Promise<{ id: string; warnings: string[] }> {
  const { sequence, warnings } = parseSequence(json);
  if (sequence.tenant_id !== store.tenantId) {
    throw new AppError("invalid_argument", `tenant_id must be ${JSON.stringify(store.tenantId)}`, ["tenant_id"]);
  }
  const id = await storeParsedSequence(store, sequence);
  return { id, warnings };
}

export const sequencesRouter = router({
  /** Every version, grouped by the page; newest first within a name. */
  list: tenantProcedure.query(async ({ ctx }) => {
    const sequences = await ctx.store.listSequences();
    return sequences.map((s) => ({ ...s, createdAt: s.createdAt.toISOString() }));
  }),

  /** One version: its wire JSON (what GET /sequences/{id} answers) and the other versions of its name. */
  get: tenantProcedure.input(z.object({ sequenceId: z.string().max(64) })).query(async ({ ctx, input }) => {
    const id = sequenceIdOrNotFound(input.sequenceId);
    const { store } = ctx;
    const sequence = await store.getSequence(id);
    if (!sequence) throw notFound("sequence");
    const versions = (await store.listSequences())
      .filter((s) => s.name === sequence.name && s.namespace === sequence.namespace)
      .map((s) => ({ id: s.id, version: s.version, status: s.status }));
    return { sequence: wireSequence(store.tenantId, sequence), versions };
  }),

  /** Every version of the sequence's name, deprecated ones included, highest first: the version list. */
  versions: tenantProcedure.input(z.object({ sequenceId: z.string().max(64) })).query(async ({ ctx, input }) => {
    const sequence = await ctx.store.getSequence(sequenceIdOrNotFound(input.sequenceId));
    if (!sequence) throw notFound("sequence");
    return (await ctx.store.listSequences())
      .filter((s) => s.name === sequence.name && s.namespace === sequence.namespace)
      .map((s) => ({ id: s.id, version: s.version, status: s.status, deprecated: s.deprecated, createdAt: s.createdAt.toISOString() }));
  }),

  /** As POST /sequences/{id}/deprecate: idempotent. */
  deprecate: tenantProcedure.input(z.object({ sequenceId: z.string().max(64) })).mutation(async ({ ctx, input }) => {
    if (!(await ctx.storeForWrite().deprecateSequence(sequenceIdOrNotFound(input.sequenceId)))) throw notFound("sequence");
    return { deprecated: true };
  }),

  /** As DELETE /sequences/{id}: CONFLICT while active instances use the version. */
  remove: tenantProcedure.input(z.object({ sequenceId: z.string().max(64) })).mutation(async ({ ctx, input }) => {
    await deleteVersion(ctx.storeForWrite(), sequenceIdOrNotFound(input.sequenceId));
    return { deleted: true };
  }),

  /** Built-in handlers and every handler named by the tenant's sequences, sorted. */
  handlers: tenantProcedure.query(async ({ ctx }) => {
    const seen = await ctx.store.listHandlerNames();
    return { builtins: [...BUILTIN_HANDLERS].sort(), seen: seen.filter((h) => !BUILTIN_HANDLERS.has(h)) };
  }),

  /** A new sequence version; the same answers as POST /sequences (BAD_REQUEST for a rule, CONFLICT for a taken name+version). */
  create: tenantProcedure.input(z.object({ sequence: z.unknown() })).mutation(({ ctx, input }) => storeSequence(ctx.storeForWrite(), input.sequence)),

  /** Starts an instance of the sequence now, with `input` as `context.data`. */
  run: tenantProcedure
    .input(z.object({ sequenceId: z.string().max(64), input: z.json().default(null) }))
    .mutation(async ({ ctx, input }) => {
      const sequenceId = sequenceIdOrNotFound(input.sequenceId);
      // The context REST would store for the same data, under the same cap (413 there).
      const context = InstanceContext.parse({ data: input.input });
      checkSize("context", context, { path: ["input"] });
      const store = ctx.storeForWrite();
      const sequence = await store.getSequence(sequenceId);
      if (!sequence) throw notFound("sequence");
      const problem = inputProblem((sequence.definition as { input_schema?: unknown }).input_schema, input.input);
      if (problem) throw new AppError("unprocessable", problem, ["input"]);
      const { id } = await store.createInstance({
        namespace: sequence.namespace,
        sequenceId,
        priority: 1, // Normal
        context,
        nextFireAt: null,
        timezone: "UTC",
        metadata: null,
        idempotencyKey: null,
        concurrencyKey: null,
        maxConcurrency: null,
        budget: null,
        dryRun: false,
      });
      return { instanceId: id };
    }),
});
