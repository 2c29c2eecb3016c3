// SQL for `cron_schedules` (wire-format M). The tenant's own reads and writes are scoped by
// tenant_id, so another tenant's schedule is simply not there. The engine's tick claims due
// schedules of every tenant on the backend, fairly, and fires each in the claiming transaction.
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { asTenantId, uuidv7, type TenantId } from "./ids.ts";
import { contextWithData, createInstance, rejectUnstorableText } from "./instance-records.ts";
import { ACTIVE_STATES } from "./sequence-versions.ts";
import { enqueueSignalIfActive } from "./signals.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

export const OVERLAP_POLICIES = ["allow", "skip", "buffer_one", "cancel_previous"] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** buffer_one: while a run is still active, look again this much later. */
export const BUFFER_RETRY_MS = 5_000;

export interface CronScheduleRecord {
  id: string;
  tenantId: string;
  namespace: string;
  sequenceId: string;
  cronExpr: string;
  timezone: string;
  enabled: boolean;
  metadata: unknown;
  overlapPolicy: OverlapPolicy;
  skippedFires: number;
  lastSkippedAt: Date | null;
  lastTriggeredAt: Date | null;
  nextFireAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewCronSchedule {
  namespace: string;
  sequenceId: string;
  cronExpr: string;
  timezone: string;
  enabled: boolean;
  metadata: unknown;
  overlapPolicy: OverlapPolicy;
  nextFireAt: Date | null;
}

/** A PUT's fields; undefined (or null on the wire) leaves a field as it is. */
export interface CronSchedulePatch {
  cronExpr?: string;
  timezone?: string;
  enabled?: boolean;
  metadata?: unknown;
  overlapPolicy?: OverlapPolicy;
}

/** The next occurrence of `cronExpr` in `timezone` after `after` (null: none); throws for a bad expression or zone. */
export type NextFire = (cronExpr: string, timezone: string, after: Date) => Date | null;

interface Row {
  id: string; tenant_id: string; namespace: string; sequence_id: string; cron_expr: string; timezone: string; enabled: boolean;
  metadata: unknown; overlap_policy: OverlapPolicy; skipped_fires: number; last_skipped_at: Date | null; last_triggered_at: Date | null;
  next_fire_at: Date | null; created_at: Date; updated_at: Date;
}

const COLUMNS = `id, tenant_id, namespace, sequence_id, cron_expr, timezone, enabled, metadata, overlap_policy, skipped_fires,
  last_skipped_at, last_triggered_at, next_fire_at, created_at, updated_at`;

const toRecord = (row: Row): CronScheduleRecord => ({
  id: row.id, tenantId: row.tenant_id, namespace: row.namespace, sequenceId: row.sequence_id, cronExpr: row.cron_expr,
  timezone: row.timezone, enabled: row.enabled, metadata: row.metadata, overlapPolicy: row.overlap_policy,
  skippedFires: row.skipped_fires, lastSkippedAt: row.last_skipped_at, lastTriggeredAt: row.last_triggered_at,
  nextFireAt: row.next_fire_at, createdAt: row.created_at, updatedAt: row.updated_at,
});

const jsonb = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** M's 404 for a schedule the tenant does not have (missing and foreign alike). */
export const cronScheduleNotFound = (id: string) => new AppError("not_found", `cron_schedule ${id}`);

/** How many schedules the tenant has (its ledger count). */
export async function countCronSchedules(db: Queryable, tenantId: TenantId): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: "count_cron_schedules",
    text: "SELECT count(*)::int AS n FROM cron_schedules WHERE tenant_id = $1",
    values: [tenantId],
  });
  return rows[0]!.n;
}

/**
 * Creates a schedule of one of the tenant's sequences (404 `sequence <id>` otherwise), refused
 * with 409 when the tenant already has `limit` schedules. One statement: the sequence check, the
 * count and the insert see the same snapshot (two racing creates may pass the count together;
 * the limit bounds a tenant's size, not an exact figure).
 */
export async function insertCronSchedule(db: Queryable, tenantId: TenantId, schedule: NewCronSchedule, limit: number): Promise<CronScheduleRecord> {
  let rows: (Row & { over: boolean })[] = [];
  try {
    ({ rows } = await db.query<Row & { over: boolean }>({
      name: "insert_cron_schedule",
      text: `WITH target AS (SELECT 1 FROM sequences WHERE tenant_id = $2 AND id = $4),
                  counted AS (SELECT count(*)::int AS n FROM cron_schedules WHERE tenant_id = $2),
                  inserted AS (
                    INSERT INTO cron_schedules (id, tenant_id, namespace, sequence_id, cron_expr, timezone, enabled, metadata, overlap_policy, next_fire_at)
                    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM target, counted WHERE counted.n < $11
                    RETURNING ${COLUMNS}
                  )
             SELECT inserted.*, false AS over FROM inserted
             UNION ALL
             SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true
               FROM target, counted WHERE counted.n >= $11`,
      values: [
        uuidv7(), tenantId, schedule.namespace, schedule.sequenceId, schedule.cronExpr, schedule.timezone, schedule.enabled,
        jsonb(schedule.metadata), schedule.overlapPolicy, schedule.nextFireAt, limit,
      ],
    }));
  } catch (error) {
    throw rejectUnstorableText(error);
  }
  const row = rows[0];
  if (!row) throw new AppError("not_found", `sequence ${schedule.sequenceId}`);
  if (row.over) {
    throw new AppError("conflict", `the tenant has ${limit} cron schedules, its limit: delete one first or ask an operator to raise the limit`);
  }
  return toRecord(row);
}

/** Oldest first; with `sequenceId`, that sequence's only. */
export async function listCronSchedules(
  db: Queryable, tenantId: TenantId, query: { limit: number; sequenceId?: string | null },
): Promise<CronScheduleRecord[]> {
  const { rows } = await db.query<Row>({
    name: "list_cron_schedules",
    text: `SELECT ${COLUMNS} FROM cron_schedules
            WHERE tenant_id = $1 AND ($2::uuid IS NULL OR sequence_id = $2)
            ORDER BY created_at, id LIMIT $3`,
    values: [tenantId, query.sequenceId ?? null, query.limit],
  });
  return rows.map(toRecord);
}

export async function getCronSchedule(db: Queryable, tenantId: TenantId, id: string): Promise<CronScheduleRecord | null> {
  const { rows } = await db.query<Row>({
    name: "get_cron_schedule",
    text: `SELECT ${COLUMNS} FROM cron_schedules WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, id],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Applies the patch and recomputes next_fire_at from `now` (every PUT does, enabled or not), under
 * the row's lock so a tick firing it meanwhile is not overwritten halfway. null: no such schedule.
 */
export async function updateCronSchedule(
  db: Connectable, tenantId: TenantId, id: string, patch: CronSchedulePatch, nextFire: NextFire, now: Date,
): Promise<CronScheduleRecord | null> {
  return inTransaction(db, async (client) => {
    const { rows: [current] } = await client.query<Row>({
      name: "lock_cron_schedule",
      text: `SELECT ${COLUMNS} FROM cron_schedules WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
      values: [tenantId, id],
    });
    if (!current) return null;
    const cronExpr = patch.cronExpr ?? current.cron_expr;
    const timezone = patch.timezone ?? current.timezone;
    const nextFireAt = nextFire(cronExpr, timezone, now);
    try {
      const { rows } = await client.query<Row>({
        name: "update_cron_schedule",
        text: `UPDATE cron_schedules
                  SET cron_expr = $3, timezone = $4, enabled = COALESCE($5, enabled),
                      metadata = CASE WHEN $6 THEN $7::jsonb ELSE metadata END,
                      overlap_policy = COALESCE($8, overlap_policy), next_fire_at = $9, updated_at = $10
                WHERE tenant_id = $1 AND id = $2
                RETURNING ${COLUMNS}`,
        values: [
          tenantId, id, cronExpr, timezone, patch.enabled ?? null, patch.metadata !== undefined, jsonb(patch.metadata),
          patch.overlapPolicy ?? null, nextFireAt, now,
        ],
      });
      return toRecord(rows[0]!);
    } catch (error) {
      throw rejectUnstorableText(error);
    }
  });
}

/** false when the tenant had no such schedule. */
export async function deleteCronSchedule(db: Queryable, tenantId: TenantId, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "delete_cron_schedule",
    text: "DELETE FROM cron_schedules WHERE tenant_id = $1 AND id = $2",
    values: [tenantId, id],
  });
  return (rowCount ?? 0) > 0;
}

/** A schedule's latest run, for the Schedules page. */
export interface CronRun {
  scheduleId: string;
  instanceId: string;
  state: string;
  createdAt: Date;
}

/** The latest `perSchedule` instances each of the tenant's schedules `ids` created, newest first. */
export async function latestCronRuns(db: Queryable, tenantId: TenantId, ids: readonly string[], perSchedule: number): Promise<CronRun[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ schedule_id: string; id: string; state: string; created_at: Date }>({
    name: "latest_cron_runs",
    text: `SELECT s.schedule_id, r.id, r.state, r.created_at
             FROM unnest($2::text[]) AS s(schedule_id)
             CROSS JOIN LATERAL (
               SELECT id, state, created_at FROM task_instances
                WHERE tenant_id = $1 AND metadata ? 'cron_schedule_id' AND metadata ->> 'cron_schedule_id' = s.schedule_id
                ORDER BY created_at DESC, id DESC LIMIT $3
             ) r
            ORDER BY s.schedule_id, r.created_at DESC, r.id DESC`,
    values: [tenantId, ids, perSchedule],
  });
  return rows.map((row) => ({ scheduleId: row.schedule_id, instanceId: row.id, state: row.state, createdAt: row.created_at }));
}

// ------------------------------------------------------------------ the tick's claim and fire

export interface CronClaimOptions {
  now: Date;
  /** Schedules claimed at most, across tenants (M: 100). */
  limit: number;
  /** Schedules of one tenant at most in this claim: the round robin's share. */
  perTenant: number;
  /** Only these tenants (placed on this backend, not being moved); absent: every tenant. */
  onlyTenants?: readonly string[];
  /** Tenants that have had their fires for this tick. */
  excludeTenants?: readonly string[];
}

export interface CronFireResult {
  /** Schedules claimed, by tenant. */
  claimed: Map<string, number>;
  /** Instances created, one per fired occurrence. */
  fired: { scheduleId: string; tenantId: string; instanceId: string; dueAt: Date }[];
  skipped: number;
  /** buffer_one schedules re-armed 5 s later because a run was still active. */
  rearmed: number;
  /** Fires whose create failed (logged; the schedule advanced anyway). */
  failed: number;
}

// tenants:    a loose index scan visits each tenant with an enabled, dated schedule once,
// candidates: each eligible tenant's first `perTenant` due schedules, numbered in due order,
// picked:     the best `limit` by that number first (every tenant's first before anyone's
//             second: a tenant with 10,000 due cannot crowd out another's one), then due time,
// then those rows locked, skipping any another engine holds. The due test is repeated on the
// locked row: one another engine fired and advanced since this statement's snapshot is left.
const CLAIM_DUE = `
WITH RECURSIVE tenants AS (
  (SELECT tenant_id FROM cron_schedules WHERE enabled AND next_fire_at IS NOT NULL ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT s.tenant_id FROM cron_schedules s
           WHERE s.enabled AND s.next_fire_at IS NOT NULL AND s.tenant_id > tenants.tenant_id
           ORDER BY s.tenant_id LIMIT 1)
    FROM tenants WHERE tenants.tenant_id IS NOT NULL
),
candidates AS (
  SELECT c.id, c.next_fire_at, row_number() OVER (PARTITION BY t.tenant_id ORDER BY c.next_fire_at, c.id) AS turn
    FROM tenants t
    CROSS JOIN LATERAL (
      SELECT id, next_fire_at FROM cron_schedules
       WHERE tenant_id = t.tenant_id AND enabled AND next_fire_at <= $1
       ORDER BY next_fire_at, id
       LIMIT $3
    ) c
   WHERE t.tenant_id IS NOT NULL AND t.tenant_id <> ALL($5::text[])
     AND ($4::text[] IS NULL OR t.tenant_id = ANY($4::text[]))
),
picked AS (SELECT id FROM candidates ORDER BY turn, next_fire_at, id LIMIT $2)
SELECT ${COLUMNS} FROM cron_schedules
 WHERE id IN (SELECT id FROM picked) AND enabled AND next_fire_at <= $1
 FOR UPDATE SKIP LOCKED`;

/** The still-active runs of a schedule (M's overlap policy looks at these). */
async function activeRuns(client: Queryable, tenantId: TenantId, scheduleId: string): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>({
    name: "cron_active_runs",
    text: `SELECT id FROM task_instances
            WHERE tenant_id = $1 AND metadata ? 'cron_schedule_id' AND metadata ->> 'cron_schedule_id' = $2
              AND state = ANY($3::text[])
            ORDER BY id`,
    values: [tenantId, scheduleId, ACTIVE_STATES],
  });
  return rows.map((row) => row.id);
}

/** M: the schedule's metadata plus cron_schedule_id; null becomes `{cron_schedule_id}`, any other non-object passes unstamped. */
export function stampedMetadata(metadata: unknown, scheduleId: string): unknown {
  if (metadata === null || metadata === undefined) return { cron_schedule_id: scheduleId };
  if (typeof metadata !== "object" || Array.isArray(metadata)) return metadata;
  return { ...(metadata as Record<string, unknown>), cron_schedule_id: scheduleId };
}


/** RFC 3339 in UTC, to the second, as the idempotency key names an occurrence. */
const occurrence = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, "Z");

/** anyCronDue's statement ($1: now), exported for the test that EXPLAINs it. */
export const ANY_CRON_DUE = "SELECT EXISTS (SELECT 1 FROM cron_schedules WHERE enabled AND next_fire_at IS NOT NULL AND next_fire_at <= $1) AS due";

/**
 * Whether any enabled schedule is due at `now`: one probe of cron_schedules_next_fire_idx. The
 * claim's loose scan visits every tenant that has a schedule (59 ms with 1,000 of them, every
 * tick of every engine), so a tick with nothing due stops here.
 */
async function anyCronDue(db: Queryable, now: Date): Promise<boolean> {
  const { rows } = await db.query<{ due: boolean }>({ name: "any_cron_due", text: ANY_CRON_DUE, values: [now] });
  return rows[0]!.due;
}

/**
 * One claim of due schedules and their fires, in one transaction: each claimed schedule is
 * handled per its overlap policy, fired (one instance, idempotency key `cron:<id>:<due>`) and
 * advanced to its next occurrence after `now`; missed occurrences are not caught up. The row
 * locks keep every other engine off these schedules until they have advanced, and the key makes
 * a repeat of the same occurrence a no-op all the same.
 */
export async function fireDueCronSchedules(
  db: Connectable & Queryable, options: CronClaimOptions, nextFire: NextFire, log: Logger,
): Promise<CronFireResult> {
  const { now } = options;
  const result: CronFireResult = { claimed: new Map(), fired: [], skipped: 0, rearmed: 0, failed: 0 };
  if (!(await anyCronDue(db, now))) return result;
  await inTransaction(db, async (client) => {
    const { rows } = await client.query<Row>({
      name: "claim_due_cron_schedules",
      text: CLAIM_DUE,
      values: [now, options.limit, options.perTenant, options.onlyTenants ?? null, options.excludeTenants ?? []],
    });
    for (const row of rows) {
      const tenantId = asTenantId(row.tenant_id);
      result.claimed.set(row.tenant_id, (result.claimed.get(row.tenant_id) ?? 0) + 1);
      const dueAt = row.next_fire_at!;
      let next: Date | null;
      try {
        next = nextFire(row.cron_expr, row.timezone, now);
      } catch (error) {
        // Stored before a rule changed: it can never fire again, so it stops asking.
        log.warn({ err: error, tenant_id: row.tenant_id, cron_schedule_id: row.id }, "cron schedule has an expression that no longer parses");
        next = null;
      }
      const active = row.overlap_policy === "allow" ? [] : await activeRuns(client, tenantId, row.id);
      if (active.length > 0 && row.overlap_policy === "skip") {
        await advance(client, row.id, next, now, { skipped: true });
        result.skipped += 1;
        continue;
      }
      if (active.length > 0 && row.overlap_policy === "buffer_one") {
        await advance(client, row.id, new Date(now.getTime() + BUFFER_RETRY_MS), now, {});
        result.rearmed += 1;
        continue;
      }
      if (row.overlap_policy === "cancel_previous") {
        for (const instanceId of active) {
          await enqueueSignalIfActive(db, tenantId, instanceId, { type: "cancel", payload: null }).catch((error: unknown) => {
            // It ended meanwhile: nothing left to cancel.
            if (!(error instanceof AppError)) throw error;
          });
        }
      }
      const instanceId = await fire(client, row, tenantId, dueAt, log);
      if (instanceId) result.fired.push({ scheduleId: row.id, tenantId: row.tenant_id, instanceId, dueAt });
      else result.failed += 1;
      await advance(client, row.id, next, now, {});
    }
  });
  return result;
}

/** Creates the occurrence's instance; null when that failed (logged; the caller still advances). */
async function fire(client: Queryable, row: Row, tenantId: TenantId, dueAt: Date, log: Logger): Promise<string | null> {
  await client.query("SAVEPOINT cron_fire");
  try {
    const { rows: [sequence] } = await client.query({
      name: "cron_sequence_exists",
      text: "SELECT 1 AS found FROM sequences WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, row.sequence_id],
    });
    if (!sequence) throw new AppError("not_found", `sequence ${row.sequence_id}`);
    const { id } = await createInstance(client, tenantId, {
      namespace: row.namespace, sequenceId: row.sequence_id, priority: 1, context: contextWithData(null), nextFireAt: null,
      timezone: row.timezone, metadata: stampedMetadata(row.metadata, row.id), idempotencyKey: `cron:${row.id}:${occurrence(dueAt)}`,
      concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
    });
    await client.query("RELEASE SAVEPOINT cron_fire");
    return id;
  } catch (error) {
    await client.query("ROLLBACK TO SAVEPOINT cron_fire");
    log.warn({ err: error, tenant_id: row.tenant_id, cron_schedule_id: row.id }, "cron schedule could not create its instance");
    return null;
  }
}

/** Moves the schedule on to `next`, stamping the claim (M: last_triggered_at = now) and, for a skip, counting it. */
async function advance(client: Queryable, id: string, next: Date | null, now: Date, how: { skipped?: boolean }): Promise<void> {
  await client.query({
    name: "advance_cron_schedule",
    text: `UPDATE cron_schedules
              SET next_fire_at = $2, last_triggered_at = $3,
                  skipped_fires = skipped_fires + CASE WHEN $4 THEN 1 ELSE 0 END,
                  last_skipped_at = CASE WHEN $4 THEN $3 ELSE last_skipped_at END
            WHERE id = $1`,
    values: [id, next, now, how.skipped === true],
  });
}
