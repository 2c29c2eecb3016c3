// The instance filter of the bulk routes and batch actions (wire-format K `BulkFilter`): every
// field ANDs with the others and with the tenant, which every statement names first.
import type { InstanceState } from "../model.ts";

export interface BulkFilter {
  namespace?: string;
  sequenceId?: string;
  /** Any of these; absent or empty: any state. */
  states?: readonly InstanceState[];
  /** Top-level `metadata` keys equal to these strings, all of them. */
  metadata?: Readonly<Record<string, string>>;
  /** The web app's Failed view: failed instances of one failure group (not a wire-format K field). */
  errorFingerprint?: string;
}

/**
 * The filter's conditions on `task_instances` (aliased `alias`), its values appended to `values`
 * as numbered parameters. Only the predicates asked for, so each combination gets its own plan.
 */
export function filterConditions(filter: BulkFilter, values: unknown[], alias = "task_instances"): string[] {
  const param = (value: unknown) => `$${values.push(value)}`;
  const where: string[] = [];
  if (filter.namespace !== undefined) where.push(`${alias}.namespace = ${param(filter.namespace)}`);
  if (filter.sequenceId !== undefined) where.push(`${alias}.sequence_id = ${param(filter.sequenceId)}::uuid`);
  if (filter.states !== undefined && filter.states.length > 0) where.push(`${alias}.state = ANY(${param(filter.states)}::text[])`);
  for (const [key, value] of Object.entries(filter.metadata ?? {})) where.push(`${alias}.metadata ->> ${param(key)} = ${param(value)}`);
  if (filter.errorFingerprint !== undefined) where.push(`${alias}.error_fingerprint = ${param(filter.errorFingerprint)}`);
  return where;
}
