// What a live stream of one instance reads on each poll (wire-format S): the instance's state and
// the output rows written since the last one sent, in creation order. One indexed statement per
// poll, however many outputs the instance has, so a viewer costs the same on a long run as on a
// short one.
import type { InstanceState } from "../model.ts";
import type { BlockOutputRecord } from "./instance-records.ts";
import type { TenantId } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

/** Where a stream is in an instance's outputs: the last row sent (exclusive). */
export interface OutputPosition {
  createdAt: Date;
  id: string;
}

export interface LivePoll {
  state: InstanceState;
  /** Moves on every commit of the run (a step started, an attempt failed), also when state and outputs do not. */
  updatedAt: Date;
  /** At most `limit` rows after the position, oldest first; internal rows (`__in_progress__`, `__retry__`) are not streamed. */
  outputs: BlockOutputRecord[];
}

/** The instance's state and its new outputs, or null when the instance is not the tenant's (or is gone). */
export async function pollInstanceLive(
  db: Queryable, tenantId: TenantId, instanceId: string, after: OutputPosition | null, limit: number,
): Promise<LivePoll | null> {
  const { rows } = await db.query<{
    state: InstanceState; updated_at: Date; id: string | null; block_id: string | null; output: unknown; output_ref: string | null;
    output_size: number | null; attempt: number | null; created_at: Date | null;
  }>({
    name: "poll_instance_live",
    text: `SELECT i.state, i.updated_at, o.id, o.block_id, o.output, o.output_ref, o.output_size, o.attempt, o.created_at
             FROM task_instances i
             LEFT JOIN LATERAL (
               SELECT * FROM block_outputs o
                WHERE o.tenant_id = i.tenant_id AND o.instance_id = i.id
                  AND ($3::timestamptz IS NULL OR (o.created_at, o.id) > ($3::timestamptz, $4::uuid))
                  AND COALESCE(o.output_ref, '') NOT IN ('__in_progress__', '__retry__')
                ORDER BY o.created_at, o.id
                LIMIT $5
             ) o ON true
            WHERE i.tenant_id = $1 AND i.id = $2
            ORDER BY o.created_at, o.id`,
    values: [tenantId, instanceId, after?.createdAt ?? null, after?.id ?? null, limit],
  });
  if (rows.length === 0) return null;
  return {
    state: rows[0]!.state,
    updatedAt: rows[0]!.updated_at,
    outputs: rows.filter((r) => r.id !== null).map((r) => ({
      id: r.id!, instanceId, blockId: r.block_id!, output: r.output, outputRef: r.output_ref,
      outputSize: r.output_size ?? 0, attempt: r.attempt ?? 0, createdAt: r.created_at!,
    })),
  };
}
