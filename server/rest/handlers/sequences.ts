// Sequences (E.3, E.4; body and answer per A.1).
import { storeParsedSequence } from "../../sequences.ts";
import { parseSequence } from "../../../engine/sequence/validate.ts";
import { notFound } from "../../../engine/errors.ts";
import { shapeBy } from "../body.ts";
import { Sequence } from "../../../engine/sequence/schema.ts";
import { json } from "../http.ts";
import { requireStore, storeOwning, type BodySpec, type RestContext } from "../route.ts";
import { wireSequence } from "../wire.ts";

/**
 * The raw JSON: parseSequence does the shape check (422) and the A.14 rules (400) in one pass,
 * so it runs in the handler. The tenant named is read from the raw body; a blank or missing one
 * names nobody and is then refused by the shape check.
 */
export const sequenceBody: BodySpec<unknown> = {
  schema: Sequence,
  parse: (body) => body,
  tenants: (body) => [(body as { tenant_id?: unknown } | null)?.tenant_id],
};

export async function createSequence(context: RestContext<unknown>): Promise<Response> {
  const { sequence, warnings } = shapeBy(() => parseSequence(context.body));
  const id = await storeParsedSequence(requireStore(context), sequence);
  return json(201, warnings.length > 0 ? { id, warnings } : { id });
}

export async function getSequence(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const store = await storeOwning(context, "sequence", id);
  const sequence = await store.getSequence(id);
  if (!sequence) throw notFound("sequence");
  return json(200, wireSequence(store.tenantId, sequence));
}
