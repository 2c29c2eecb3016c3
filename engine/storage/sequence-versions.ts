// Versions of one sequence name (wire-format Q): the live list, lookup by name, deprecate and
// delete. Every statement is scoped by tenant_id.
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";
import type { SequenceRecord } from "./sequences.ts";

interface SequenceRow {
  id: string; namespace: string; name: string; version: number; status: string; deprecated: boolean; created_at: Date; definition: unknown;
}

const COLUMNS = "id, namespace, name, version, status, deprecated, created_at, definition";
const record = (row: SequenceRow): SequenceRecord => ({
  id: row.id, namespace: row.namespace, name: row.name, version: row.version,
  status: row.status, deprecated: row.deprecated, createdAt: row.created_at, definition: row.definition,
});

/** States in which an instance still runs on its version: a delete waits for them to end. */
export const ACTIVE_STATES = ["scheduled", "running", "waiting", "paused"] as const;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** The name's versions that are not deprecated, highest first. */
export async function listLiveVersions(db: Queryable, tenantId: TenantId, namespace: string, name: string): Promise<SequenceRecord[]> {
  const { rows } = await db.query<SequenceRow>({
    name: "list_live_versions",
    text: `SELECT ${COLUMNS} FROM sequences
            WHERE tenant_id = $1 AND namespace = $2 AND name = $3 AND NOT deprecated
            ORDER BY version DESC`,
    values: [tenantId, namespace, name],
  });
  return rows.map(record);
}

/** That exact version (deprecated or not), or without one the highest that is not deprecated. */
export async function sequenceByName(
  db: Queryable, tenantId: TenantId, namespace: string, name: string, version: number | null,
): Promise<SequenceRecord | null> {
  const { rows } = await db.query<SequenceRow>({
    name: "sequence_by_name",
    text: `SELECT ${COLUMNS} FROM sequences
            WHERE tenant_id = $1 AND namespace = $2 AND name = $3
              AND ($4::int IS NULL AND NOT deprecated OR version = $4::int)
            ORDER BY version DESC LIMIT 1`,
    values: [tenantId, namespace, name, version],
  });
  return rows[0] ? record(rows[0]) : null;
}

/** One page of the tenant's versions (of one namespace, if given), by namespace, name, version descending. */
export async function listSequencePage(
  db: Queryable, tenantId: TenantId, query: { namespace: string | null; limit: number; offset: number },
): Promise<{ items: SequenceRecord[]; hasMore: boolean }> {
  const { rows } = await db.query<SequenceRow>({
    name: "list_sequence_page",
    text: `SELECT ${COLUMNS} FROM sequences
            WHERE tenant_id = $1 AND ($2::text IS NULL OR namespace = $2)
            ORDER BY namespace, name, version DESC
            LIMIT $3 OFFSET $4`,
    // One more than asked: whether there is more, without a count.
    values: [tenantId, query.namespace, query.limit + 1, query.offset],
  });
  return { items: rows.slice(0, query.limit).map(record), hasMore: rows.length > query.limit };
}

/** Marks the version deprecated (idempotent); false when the tenant has no such sequence. */
export async function deprecateSequence(db: Queryable, tenantId: TenantId, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "deprecate_sequence",
    text: "UPDATE sequences SET deprecated = true WHERE tenant_id = $1 AND id = $2",
    values: [tenantId, id],
  });
  return (rowCount ?? 0) > 0;
}

/** Where a version's status may go (wire-format Q); `unpublished` is final. */
export const STATUS_TRANSITIONS: Readonly<Record<string, readonly string[]>> = {
  draft: ["staging", "unpublished"],
  staging: ["production", "unpublished"],
  production: ["unpublished"],
  unpublished: [],
};

export type StatusOutcome = { changed: true } | { changed: false; missing: true } | { changed: false; missing: false; from: string };

/**
 * Moves the version to `status` when its current status allows it; unpublishing also
 * deprecates. The row is locked, so two moves from the same status cannot both succeed.
 */
export async function setSequenceStatus(db: Connectable, tenantId: TenantId, id: string, status: string): Promise<StatusOutcome> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ status: string }>({
      name: "lock_sequence_status",
      text: "SELECT status FROM sequences WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
      values: [tenantId, id],
    });
    const from = rows[0]?.status;
    if (from === undefined) return { changed: false, missing: true } as const;
    if (!(STATUS_TRANSITIONS[from] ?? []).includes(status)) return { changed: false, missing: false, from } as const;
    await client.query({
      name: "set_sequence_status",
      text: "UPDATE sequences SET status = $3, deprecated = deprecated OR $3 = 'unpublished' WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, id, status],
    });
    return { changed: true } as const;
  });
}

export type MigrateOutcome =
  | { migrated: true; fromSequenceId: string }
  | { migrated: false; missing: "instance" | "sequence" }
  | { migrated: false; terminal: string };

/**
 * Rebinds a non-terminal instance to another version of the tenant's (any name): its context,
 * outputs, tree and state stay, and the engine's next load of it reads the target's blocks.
 */
export async function migrateInstance(db: Connectable, tenantId: TenantId, instanceId: string, targetId: string): Promise<MigrateOutcome> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ state: string; sequence_id: string }>({
      name: "lock_instance_for_migration",
      text: "SELECT state, sequence_id FROM task_instances WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
      values: [tenantId, instanceId],
    });
    const instance = rows[0];
    if (!instance) return { migrated: false, missing: "instance" } as const;
    if (TERMINAL.has(instance.state)) return { migrated: false, terminal: instance.state } as const;
    // The target is locked too, so a delete of it cannot pass this instance by.
    const target = await client.query({
      name: "lock_migration_target",
      text: "SELECT 1 FROM sequences WHERE tenant_id = $1 AND id = $2 FOR SHARE",
      values: [tenantId, targetId],
    });
    if (target.rowCount === 0) return { migrated: false, missing: "sequence" } as const;
    await client.query({
      name: "migrate_instance",
      text: "UPDATE task_instances SET sequence_id = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, instanceId, targetId],
    });
    return { migrated: true, fromSequenceId: instance.sequence_id } as const;
  });
}

export type DeleteOutcome = { deleted: true } | { deleted: false; missing: true } | { deleted: false; missing: false; active: number };

/**
 * Deletes the version with its terminal instances and their outputs, signals and worker tasks,
 * unless an instance in an active state still references it. The instances are locked first, so
 * a retry cannot bring one back to life between the count and the delete.
 */
export async function deleteSequence(db: Connectable, tenantId: TenantId, id: string): Promise<DeleteOutcome> {
  return inTransaction(db, async (client) => {
    const found = await client.query({
      name: "lock_sequence_for_delete",
      text: "SELECT 1 FROM sequences WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
      values: [tenantId, id],
    });
    if (found.rowCount === 0) return { deleted: false, missing: true } as const;
    const { rows } = await client.query<{ state: string }>({
      name: "lock_sequence_instances",
      // In id order, as the statements that update many instances lock them.
      text: "SELECT state FROM task_instances WHERE tenant_id = $1 AND sequence_id = $2 ORDER BY id FOR UPDATE",
      values: [tenantId, id],
    });
    const active = rows.filter((row) => (ACTIVE_STATES as readonly string[]).includes(row.state)).length;
    if (active > 0) return { deleted: false, missing: false, active } as const;
    await client.query({
      name: "delete_sequence",
      text: `WITH gone AS (DELETE FROM task_instances WHERE tenant_id = $1 AND sequence_id = $2 RETURNING id),
                  outputs AS (DELETE FROM block_outputs WHERE tenant_id = $1 AND instance_id IN (SELECT id FROM gone)),
                  queued AS (DELETE FROM signals WHERE tenant_id = $1 AND instance_id IN (SELECT id FROM gone)),
                  tasks AS (DELETE FROM worker_tasks WHERE tenant_id = $1 AND instance_id IN (SELECT id FROM gone) RETURNING id),
                  attempts AS (DELETE FROM worker_task_attempts WHERE tenant_id = $1 AND task_id IN (SELECT id FROM tasks)),
                  schedules AS (DELETE FROM cron_schedules WHERE tenant_id = $1 AND sequence_id = $2)
             DELETE FROM sequences WHERE tenant_id = $1 AND id = $2`,
      values: [tenantId, id],
    });
    return { deleted: true } as const;
  });
}
