// Sequence versions, shared by REST (POST and DELETE /sequences) and the editor (tRPC).
import { AppError, notFound } from "../engine/errors.ts";
import type { Sequence } from "../engine/sequence/schema.ts";
import type { TenantStore } from "../engine/storage/index.ts";

/** Stores the canonical form, so a read answers the A.1 shape whatever spelling the client used. */
export async function storeParsedSequence(store: TenantStore, sequence: Sequence): Promise<string> {
  const id = sequence.id.toLowerCase(); // as PostgreSQL will print it back
  const createdAt = new Date(sequence.created_at);
  await store.insertSequence({
    id,
    namespace: sequence.namespace,
    name: sequence.name,
    version: sequence.version,
    definition: { ...sequence, id, created_at: createdAt.toISOString() },
    status: sequence.status,
    deprecated: sequence.deprecated,
    createdAt,
  });
  return id;
}

/** Deletes one version, as DELETE /sequences/{id} does: a conflict while active instances use it. */
export async function deleteVersion(store: TenantStore, id: string): Promise<void> {
  const outcome = await store.deleteSequence(id);
  if (outcome.deleted) return;
  if (outcome.missing) throw notFound("sequence");
  throw new AppError("conflict", `cannot delete sequence ${id}: ${outcome.active} active instance(s) still reference it`);
}
