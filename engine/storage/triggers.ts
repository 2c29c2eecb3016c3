// SQL for `triggers` (wire-format L): a tenant's named ways to start a sequence, by /fire, a
// signed public webhook, or emit_event. Every statement is scoped by tenant_id, so another
// tenant's slug is simply not there. The secret is sealed at rest (engine/secrets/sealed-text.ts)
// and read back only to check a request. Also the single-use webhook nonces and each trigger's
// latest deliveries, both of the tenant's own backend.
import { AppError } from "../errors.ts";
import { open, seal } from "../secrets/sealed-text.ts";
import { contextWithData, createInstance } from "./instance-records.ts";
import type { TenantId } from "./ids.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

/** URL-safe (RFC 3986 unreserved) characters only: the slug is a path segment of the public route. */
export const TRIGGER_SLUG = /^[A-Za-z0-9._~-]{1,255}$/;
export const TRIGGER_TYPES = ["webhook", "event"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export interface TriggerRecord {
  slug: string;
  namespace: string;
  sequenceName: string;
  /** null: the latest version that is not deprecated, looked up at each firing. */
  sequenceVersion: number | null;
  triggerType: TriggerType;
  config: unknown;
  /** Whether a secret is set; the secret itself never leaves storage but through triggerForFiring. */
  hasSecret: boolean;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTrigger {
  slug: string;
  namespace: string;
  sequenceName: string;
  sequenceVersion: number | null;
  triggerType: TriggerType;
  config: unknown;
  secret: string | null;
}

interface TriggerRow {
  slug: string;
  namespace: string;
  sequence_name: string;
  sequence_version: number | null;
  trigger_type: TriggerType;
  config: unknown;
  has_secret: boolean;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = "slug, namespace, sequence_name, sequence_version, trigger_type, config, secret IS NOT NULL AS has_secret, enabled, created_at, updated_at";

const toRecord = (row: TriggerRow): TriggerRecord => ({
  slug: row.slug,
  namespace: row.namespace,
  sequenceName: row.sequence_name,
  sequenceVersion: row.sequence_version,
  triggerType: row.trigger_type,
  config: row.config,
  hasSecret: row.has_secret,
  enabled: row.enabled,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Whether `slug` can name a trigger at all; a malformed slug is as missing as an unknown one. */
export const isTriggerSlug = (slug: string) => TRIGGER_SLUG.test(slug);

/** The tenant's triggers, oldest first. */
export async function listTriggers(db: Queryable, tenantId: TenantId, limit: number): Promise<TriggerRecord[]> {
  const { rows } = await db.query<TriggerRow>({
    name: "list_triggers",
    text: `SELECT ${COLUMNS} FROM triggers WHERE tenant_id = $1 ORDER BY created_at, slug LIMIT $2`,
    values: [tenantId, limit],
  });
  return rows.map(toRecord);
}

export async function getTrigger(db: Queryable, tenantId: TenantId, slug: string): Promise<TriggerRecord | null> {
  return (await triggerForFiring(db, tenantId, slug))?.trigger ?? null;
}

/** The trigger with its secret opened, to check a request that fires it. */
export async function triggerForFiring(db: Queryable, tenantId: TenantId, slug: string): Promise<{ trigger: TriggerRecord; secret: string | null } | null> {
  if (!isTriggerSlug(slug)) return null;
  const { rows } = await db.query<TriggerRow & { secret: string | null }>({
    name: "get_trigger",
    text: `SELECT ${COLUMNS}, secret FROM triggers WHERE tenant_id = $1 AND slug = $2`,
    values: [tenantId, slug],
  });
  const row = rows[0];
  return row ? { trigger: toRecord(row), secret: row.secret === null ? null : open(row.secret) } : null;
}

/**
 * Creates a trigger; null when the tenant already has one by that slug. Its sequence must exist in
 * the namespace (at the pinned version, when one is pinned), so a typo fails here rather than at
 * the first firing.
 */
export async function insertTrigger(db: Queryable, tenantId: TenantId, trigger: NewTrigger): Promise<TriggerRecord | null> {
  const { rows: found } = await db.query({
    name: "trigger_sequence_exists",
    text: "SELECT 1 FROM sequences WHERE tenant_id = $1 AND namespace = $2 AND name = $3 AND ($4::int IS NULL OR version = $4) LIMIT 1",
    values: [tenantId, trigger.namespace, trigger.sequenceName, trigger.sequenceVersion],
  });
  if (found.length === 0) throw new AppError("not_found", `sequence ${trigger.sequenceName} in namespace ${trigger.namespace}`);
  const { rows } = await db.query<TriggerRow>({
    name: "insert_trigger",
    text: `INSERT INTO triggers (tenant_id, slug, namespace, sequence_name, sequence_version, trigger_type, config, secret)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
           ON CONFLICT (tenant_id, slug) DO NOTHING
           RETURNING ${COLUMNS}`,
    values: [
      tenantId, trigger.slug, trigger.namespace, trigger.sequenceName, trigger.sequenceVersion, trigger.triggerType,
      trigger.config === null ? null : JSON.stringify(trigger.config), trigger.secret === null ? null : seal(trigger.secret),
    ],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The removed trigger, or null when there was none. */
export async function deleteTrigger(db: Queryable, tenantId: TenantId, slug: string): Promise<TriggerRecord | null> {
  if (!isTriggerSlug(slug)) return null;
  const { rows } = await db.query<TriggerRow>({
    name: "delete_trigger",
    text: `DELETE FROM triggers WHERE tenant_id = $1 AND slug = $2 RETURNING ${COLUMNS}`,
    values: [tenantId, slug],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Where a firing came from, stamped into the instance's metadata as `_trigger_event`. */
export type TriggerEvent = { source: "http_fire" } | { source: "public_webhook"; user_agent: string } | { source: "test_event"; by: string };

/**
 * A new instance of the trigger's sequence: scheduled, due now, priority Normal, `context.data` =
 * `data`, no idempotency key, time zone UTC. The sequence is looked up now, by (namespace, name) at
 * the pinned version, or the newest one that is not deprecated. Null when there is none.
 */
export async function fireTrigger(
  db: Queryable, tenantId: TenantId, trigger: TriggerRecord, data: unknown, event: TriggerEvent,
): Promise<{ instanceId: string; sequenceName: string } | null> {
  const { rows } = await db.query<{ id: string }>({
    name: "trigger_target_sequence",
    text: `SELECT id FROM sequences
            WHERE tenant_id = $1 AND namespace = $2 AND name = $3
              AND (CASE WHEN $4::int IS NULL THEN NOT deprecated ELSE version = $4 END)
            ORDER BY version DESC LIMIT 1`,
    values: [tenantId, trigger.namespace, trigger.sequenceName, trigger.sequenceVersion],
  });
  if (!rows[0]) return null;
  const { id } = await createInstance(db, tenantId, {
    namespace: trigger.namespace, sequenceId: rows[0].id, priority: 1, context: contextWithData(data), nextFireAt: null,
    timezone: "UTC", metadata: { _trigger: trigger.slug, _trigger_type: trigger.triggerType, _trigger_event: event },
    idempotencyKey: null, concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
  });
  return { instanceId: id, sequenceName: trigger.sequenceName };
}

// ------------------------------------------------------------------ webhook nonces

/** Expired nonces a claim clears of its tenant's, at most: the table stays as small as the window allows. */
const NONCES_PRUNED_PER_CLAIM = 100;

/**
 * Takes `nonce` for `slug` until `ttlSecs` from now; false when it is taken and not expired (a
 * replay). The same statement clears a few of the tenant's expired nonces.
 */
export async function claimWebhookNonce(db: Connectable, tenantId: TenantId, slug: string, nonce: string, ttlSecs: number): Promise<boolean> {
  return inTransaction(db, async (client) => {
    await client.query({
      name: "prune_webhook_nonces",
      text: `DELETE FROM webhook_nonces WHERE ctid = ANY(ARRAY(
               SELECT ctid FROM webhook_nonces WHERE tenant_id = $1 AND expires_at < now() LIMIT $2 FOR UPDATE SKIP LOCKED))`,
      values: [tenantId, NONCES_PRUNED_PER_CLAIM],
    });
    const { rows } = await client.query({
      name: "claim_webhook_nonce",
      text: `INSERT INTO webhook_nonces AS n (tenant_id, slug, nonce, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))
             ON CONFLICT (tenant_id, slug, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE n.expires_at < now()
             RETURNING 1`,
      values: [tenantId, slug, nonce, ttlSecs],
    });
    return rows.length === 1;
  });
}

// ------------------------------------------------------------------ deliveries

/** Deliveries kept per trigger: the newest. */
export const DELIVERIES_KEPT = 50;

export type DeliverySource = "webhook" | "fire" | "test";

export interface TriggerDelivery {
  id: string;
  source: DeliverySource;
  /** The HTTP status it was answered with. */
  status: number;
  /** In words: "instance created", "bad signature", ... */
  outcome: string;
  instanceId: string | null;
  receivedAt: Date;
}

/** Records a delivery and drops the trigger's ones beyond the newest DELIVERIES_KEPT. */
export async function recordDelivery(db: Connectable, tenantId: TenantId, slug: string, delivery: Omit<TriggerDelivery, "id" | "receivedAt">): Promise<void> {
  await inTransaction(db, async (client) => {
    await client.query({
      name: "record_trigger_delivery",
      text: "INSERT INTO trigger_deliveries (tenant_id, slug, source, status, outcome, instance_id) VALUES ($1, $2, $3, $4, $5, $6)",
      values: [tenantId, slug, delivery.source, delivery.status, delivery.outcome, delivery.instanceId],
    });
    await client.query({
      name: "trim_trigger_deliveries",
      text: `DELETE FROM trigger_deliveries WHERE tenant_id = $1 AND slug = $2 AND id <= (
               SELECT id FROM trigger_deliveries WHERE tenant_id = $1 AND slug = $2 ORDER BY id DESC OFFSET $3 LIMIT 1)`,
      values: [tenantId, slug, DELIVERIES_KEPT],
    });
  });
}

/** The trigger's latest deliveries, newest first. */
export async function listDeliveries(db: Queryable, tenantId: TenantId, slug: string, limit: number): Promise<TriggerDelivery[]> {
  const { rows } = await db.query<{ id: string; source: DeliverySource; status: number; outcome: string; instance_id: string | null; received_at: Date }>({
    name: "list_trigger_deliveries",
    text: `SELECT id::text, source, status, outcome, instance_id, received_at FROM trigger_deliveries
            WHERE tenant_id = $1 AND slug = $2 ORDER BY id DESC LIMIT $3`,
    values: [tenantId, slug, limit],
  });
  return rows.map((r) => ({ id: r.id, source: r.source, status: r.status, outcome: r.outcome, instanceId: r.instance_id, receivedAt: r.received_at }));
}

/** Deletes a removed trigger's deliveries, so a slug made again starts with none. (Its nonces expire.) */
export async function forgetDeliveries(db: Queryable, tenantId: TenantId, slug: string): Promise<void> {
  await db.query({ name: "forget_trigger_deliveries", text: "DELETE FROM trigger_deliveries WHERE tenant_id = $1 AND slug = $2", values: [tenantId, slug] });
}
