// A tenant's credentials for the settings page, admins only: list (never a value), create, change
// (a new value replaces the old one unseen), enable or disable, delete. The same checks, writes and
// audit lines as REST /credentials (server/credentials.ts).
import { z } from "zod";
import { notFound } from "../../../engine/errors.ts";
import { addCredential, changeCredential, CredentialInput, CredentialPatch, removeCredential, wireCredential } from "../../credentials.ts";
import { router, tenantAdminProcedure } from "../trpc.ts";

// Format checks are the service's (N's messages); this only bounds the size.
const id = z.string().max(255);

export const credentialsRouter = router({
  list: tenantAdminProcedure.query(async ({ ctx }) => (await ctx.store.listCredentials(1000)).map((credential) => wireCredential(ctx.store.tenantId, credential))),

  create: tenantAdminProcedure.input(z.object({ credential: CredentialInput })).mutation(async ({ ctx, input }) => {
    const by = { actor: ctx.user.email, actorUserId: ctx.user.id };
    return wireCredential(ctx.store.tenantId, await addCredential(ctx.services.prisma, ctx.storeForWrite(), by, input.credential));
  }),

  update: tenantAdminProcedure.input(z.object({ id, patch: CredentialPatch })).mutation(async ({ ctx, input }) => {
    const by = { actor: ctx.user.email, actorUserId: ctx.user.id };
    const changed = await changeCredential(ctx.services.prisma, ctx.storeForWrite(), by, input.id, input.patch);
    if (!changed) throw notFound("credential");
    return wireCredential(ctx.store.tenantId, changed);
  }),

  remove: tenantAdminProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
    const by = { actor: ctx.user.email, actorUserId: ctx.user.id };
    if (!(await removeCredential(ctx.services.prisma, ctx.storeForWrite(), by, input.id))) throw notFound("credential");
    return { id: input.id };
  }),
});
