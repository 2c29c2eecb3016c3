// Storing a validated sequence, shared by REST (POST /sequences) and the editor (tRPC).
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
