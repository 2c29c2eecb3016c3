// Sequences (E.3, E.4; body and answer per A.1).
import { parseSequence } from "../../../engine/sequence/validate.ts";
import { notFound } from "../../../engine/errors.ts";
import { shapeBy } from "../body.ts";
import { json } from "../http.ts";
import { requireStore, storeOwning, type BodySpec, type RestContext } from "../route.ts";
import { wireSequence } from "../wire.ts";

/**
 * The raw JSON: parseSequence does the shape check (422) and the A.14 rules (400) in one pass,
 * so it runs in the handler. The tenant named is read from the raw body; a blank or missing one
 * names nobody and is then refused by the shape check.
 */
export const sequenceBody: BodySpec<unknown> = {
  parse: (body) => body,
  tenants: (body) => [(body as { tenant_id?: unknown } | null)?.tenant_id],
};

export async function createSequence(context: RestContext<unknown>): Promise<Response> {
  const { sequence, warnings } = shapeBy(() => parseSequence(context.body));
  const id = sequence.id.toLowerCase(); // as PostgreSQL will print it back
  const createdAt = new Date(sequence.created_at);
  await requireStore(context).insertSequence({
    id,
    namespace: sequence.namespace,
    name: sequence.name,
    version: sequence.version,
    // The canonical form, so GET answers the A.1 shape whatever spelling the client used.
    definition: { ...sequence, id, created_at: createdAt.toISOString() },
    status: sequence.status,
    deprecated: sequence.deprecated,
    createdAt,
  });
  return json(201, warnings.length > 0 ? { id, warnings } : { id });
}

export async function getSequence(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const store = await storeOwning(context, "sequence", id);
  const sequence = await store.getSequence(id);
  if (!sequence) throw notFound("sequence");
  return json(200, wireSequence(store.tenantId, sequence));
}
