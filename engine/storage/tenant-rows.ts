// A tenant's rows on one backend, as a whole: copied to another backend from one snapshot,
// compared by count and checksum, deleted. Used by tenant moves (engine/moves). Every statement
// names the tenant; table names come from the fixed list below, never from input.
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

interface TenantTable {
  name: string;
  /**
   * Columns the target assigns itself (bigserial ids): left out of the copy and of the checksum,
   * because the same numbers may already be taken there by other tenants' rows.
   */
  generated?: string;
  /**
   * Kept by triggers on a table before it in the list (sums of its rows): not copied and not
   * compared, since the copy's inserts write it again on the target; deleted after that table.
   */
  derived?: true;
}

/**
 * Every table of tenant data on a storage backend. The control plane (users, tenants,
 * memberships, invitations, keys, placements, audit, moves) stays on the primary and never
 * moves; a test checks that every other table with a tenant_id column is listed here.
 */
export const TENANT_TABLES: readonly TenantTable[] = [
  { name: "sequences" },
  { name: "sequence_drafts" },
  { name: "task_instances" },
  { name: "tenant_instance_counts", derived: true },
  { name: "block_outputs" },
  { name: "signals" },
  { name: "worker_tasks" },
  { name: "worker_task_attempts", generated: "id" },
  { name: "event_dedupe" },
  { name: "event_fan_out_minutes" },
  { name: "triggers" },
  { name: "webhook_nonces" },
  { name: "trigger_deliveries", generated: "id" },
  { name: "cron_schedules" },
  { name: "credentials" },
  { name: "sessions" },
  { name: "worker_registrations" },
  { name: "instance_checkpoints" },
  { name: "instance_logs", generated: "id" },
  { name: "resource_pools" },
  { name: "pool_resources" },
  { name: "circuit_breakers" },
  { name: "circuit_breaker_resets", generated: "id" },
  { name: "breaker_settings" },
  { name: "rate_limit_policies" },
  { name: "rate_limit_windows" },
  { name: "tenant_budgets" },
  { name: "tenant_metrics" },
  { name: "tenant_activity_hour", derived: true },
  { name: "tenant_metric_spans" },
  { name: "instance_audit_log" },
  { name: "retention_status" },
];

/** The tables a move copies and compares: all but the derived ones. */
const COPIED_TABLES = TENANT_TABLES.filter((table) => !table.derived);

/** The tables that hold tenant_id but are the control plane's, on the primary only. */
export const CONTROL_PLANE_TABLES = ["memberships", "api_keys", "tenant_storage_placements", "audit_log", "tenant_moves", "tenant_limits", "invitations", "trigger_slugs", "tenant_exports", "tenant_deletions"] as const;

const ROWS_PER_FETCH = 1_000;

/** The application_name of a copy's writing transaction. */
export const TENANT_COPY_APPLICATION = "bulkhead-tenant-copy";

/** A row as the copy and the checksum see it: JSON, without the target-assigned column. */
const rowJson = (table: TenantTable) => (table.generated ? `to_jsonb(t) - '${table.generated}'` : "to_jsonb(t)");

export interface TableSummary {
  rows: number;
  /** md5 over the rows' JSON in a fixed order: equal on two backends only for the same rows. */
  checksum: string;
}

/** Row count and checksum of each table's rows of the tenant. */
export async function summarizeTenantRows(db: Queryable, tenantId: TenantId): Promise<Record<string, TableSummary>> {
  const summaries: Record<string, TableSummary> = {};
  for (const table of COPIED_TABLES) {
    const { rows } = await db.query<{ rows: number; checksum: string }>({
      text: `SELECT count(*)::int AS rows, coalesce(md5(string_agg(r, ',' ORDER BY r)), '') AS checksum
               FROM (SELECT (${rowJson(table)})::text AS r FROM ${table.name} t WHERE t.tenant_id = $1) s`,
      values: [tenantId],
    });
    summaries[table.name] = rows[0]!;
  }
  return summaries;
}

/** The columns `table` is written with on the target: all but the one it assigns itself. */
async function insertColumns(db: Queryable, table: TenantTable): Promise<string[]> {
  const { rows } = await db.query<{ column_name: string }>({
    text: `SELECT column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    values: [table.name],
  });
  return rows.map((r) => r.column_name).filter((c) => c !== table.generated);
}

/**
 * Replaces the tenant's rows on `target` with those on `source`, read from one snapshot (a
 * repeatable-read transaction) and written in one transaction: a copy either lands whole or not
 * at all, and running it again gives the same result. Returns the rows copied per table.
 */
export async function copyTenantRows(source: Connectable, target: Connectable, tenantId: TenantId): Promise<Record<string, number>> {
  const reader = await source.connect();
  try {
    await reader.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const copied = await inTransaction(target, async (writer) => {
      // Named so the change feed does not wait for it (instance-audit.ts): it writes only the
      // quiesced tenant's rows, which no feed reads on this backend before the cutover.
      await writer.query(`SET LOCAL application_name = '${TENANT_COPY_APPLICATION}'`);
      await deleteRows(writer, tenantId);
      const counts: Record<string, number> = {};
      for (const table of COPIED_TABLES) {
        const columns = (await insertColumns(writer, table)).map((c) => `"${c}"`).join(", ");
        const cursor = `copy_${table.name}`;
        await reader.query({
          text: `DECLARE ${cursor} NO SCROLL CURSOR FOR
                   SELECT ${rowJson(table)} AS row FROM ${table.name} t WHERE t.tenant_id = $1
                    ${table.generated ? `ORDER BY t.${table.generated}` : ""}`,
          values: [tenantId],
        });
        let count = 0;
        for (;;) {
          const { rows } = await reader.query<{ row: unknown }>(`FETCH ${ROWS_PER_FETCH} FROM ${cursor}`);
          if (rows.length === 0) break;
          await writer.query({
            text: `INSERT INTO ${table.name} (${columns})
                   SELECT ${columns} FROM jsonb_populate_recordset(NULL::${table.name}, $1::jsonb)`,
            values: [JSON.stringify(rows.map((r) => r.row))],
          });
          count += rows.length;
        }
        counts[table.name] = count;
        await reader.query(`CLOSE ${cursor}`);
      }
      return counts;
    });
    await reader.query("COMMIT");
    return copied;
  } catch (error) {
    await reader.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    reader.release();
  }
}

async function deleteRows(client: Queryable, tenantId: TenantId): Promise<number> {
  // Inside a move's transaction: a large tenant's DELETE may take longer than the statement
  // timeout meant for tenant statements, and the tenant is quiesced, so nothing waits on it.
  await client.query("SET LOCAL statement_timeout = 0");
  let deleted = 0;
  for (const table of TENANT_TABLES) {
    const { rowCount } = await client.query({ text: `DELETE FROM ${table.name} WHERE tenant_id = $1`, values: [tenantId] });
    deleted += rowCount ?? 0;
  }
  return deleted;
}

/** Deletes every row of the tenant on this backend, in one transaction; returns how many. */
export function deleteTenantRows(db: Connectable, tenantId: TenantId): Promise<number> {
  return inTransaction(db, (client) => deleteRows(client, tenantId));
}

/** Instances of the tenant a live lease holds (a step in flight); expired leases are returned first. */
export async function runningInstances(db: Queryable, tenantId: TenantId, now: Date): Promise<number> {
  // An engine that died holding a lease would keep a move waiting forever: hand those back now,
  // as the reaper would (the next claim's epoch fences the old holder out).
  await db.query({
    name: "move_reap_expired",
    text: `UPDATE task_instances SET state = 'scheduled', next_fire_at = $2, lease_owner = NULL, lease_expires_at = NULL, updated_at = $2
            WHERE tenant_id = $1 AND state = 'running' AND lease_expires_at < $2`,
    values: [tenantId, now],
  });
  const { rows } = await db.query<{ n: number }>({
    name: "move_running",
    text: "SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'running'",
    values: [tenantId],
  });
  return rows[0]!.n;
}
