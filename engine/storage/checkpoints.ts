// SQL for `instance_checkpoints` (wire-format P): a tenant's client-managed snapshots of its
// instances. Every statement names the tenant, and each route first finds the instance in the
// tenant's rows, so another tenant's instance is simply not there.
import { uuidv7 } from "./ids.ts";
import { instanceExists } from "./instance-records.ts";
import type { TenantId } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

export interface Checkpoint {
  id: string;
  instanceId: string;
  data: unknown;
  createdAt: Date;
}

/** P: a list shows at most this many, newest first. */
export const CHECKPOINT_LIST_LIMIT = 100;

interface CheckpointRow {
  id: string;
  instance_id: string;
  checkpoint_data: unknown;
  created_at: Date;
}

const toCheckpoint = (row: CheckpointRow): Checkpoint => ({ id: row.id, instanceId: row.instance_id, data: row.checkpoint_data, createdAt: row.created_at });

/** The new checkpoint's id; null when the tenant has no such instance. */
export async function saveCheckpoint(db: Queryable, tenantId: TenantId, instanceId: string, data: unknown): Promise<string | null> {
  const id = uuidv7();
  const { rowCount } = await db.query({
    name: "save_checkpoint",
    text: `INSERT INTO instance_checkpoints (id, tenant_id, instance_id, checkpoint_data)
           SELECT $3, $1, $2, $4::jsonb WHERE EXISTS (SELECT 1 FROM task_instances WHERE tenant_id = $1 AND id = $2)`,
    values: [tenantId, instanceId, id, JSON.stringify(data)],
  });
  return (rowCount ?? 0) > 0 ? id : null;
}

/** Newest first, at most `limit`; null when the tenant has no such instance. */
export async function listCheckpoints(db: Queryable, tenantId: TenantId, instanceId: string, limit = CHECKPOINT_LIST_LIMIT): Promise<Checkpoint[] | null> {
  if (!(await instanceExists(db, tenantId, instanceId))) return null;
  const { rows } = await db.query<CheckpointRow>({
    name: "list_checkpoints",
    text: `SELECT id, instance_id, checkpoint_data, created_at FROM instance_checkpoints
            WHERE tenant_id = $1 AND instance_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    values: [tenantId, instanceId, limit],
  });
  return rows.map(toCheckpoint);
}

/** Keeps the `keep` newest and deletes the rest; how many went. null when the tenant has no such instance. */
export async function pruneCheckpoints(db: Queryable, tenantId: TenantId, instanceId: string, keep: number): Promise<number | null> {
  if (!(await instanceExists(db, tenantId, instanceId))) return null;
  const { rowCount } = await db.query({
    name: "prune_checkpoints",
    text: `DELETE FROM instance_checkpoints WHERE tenant_id = $1 AND instance_id = $2 AND id NOT IN (
             SELECT id FROM instance_checkpoints WHERE tenant_id = $1 AND instance_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3)`,
    values: [tenantId, instanceId, keep],
  });
  return rowCount ?? 0;
}
