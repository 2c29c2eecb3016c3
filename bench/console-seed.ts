// The console benchmark's data set: 10,000 tenants and about 1,000,000 instances over two
// backends (`primary` and `eu-1`, as the demo has), written set-wise with INSERT … SELECT
// generate_series, never a row at a time through the API. The spread is skewed as a platform's
// is: four tenants hold 550,000 instances (200k, 150k, 100k, 100k), every other one 10 to 80.
// Instances are in every state, with outputs and signals; some tenants have Open breakers, cron
// schedules, triggers, workers, their own limits; the control plane has finished moves and an
// audit log. Everything is a function of the tenant's number n (tenant-00000 … tenant-09999), so
// each backend's share is generated on that backend alone: tenant n is on eu-1 when n % 3 = 1.
//
// Nothing here is due: scheduled instances and cron schedules fire weeks from now and running
// instances hold leases that do not expire, so the engine started on the data set stays idle
// unless a page asks it for something. tenant_metrics are minutes relative to now, so they are
// written again on every run (refreshMetrics), the rest only when SEED_VERSION changes.
import type pg from "pg";
import { rebuildMetricRollups } from "../engine/storage/metric-rollups.ts";

/** Bump when the statements below change: a kept data set of another version is seeded again. */
export const SEED_VERSION = "console-seed-1";

export const TENANTS = 10_000;
/** The tenants the pages are opened for: the largest (on primary) and a small one (on eu-1). */
export const LARGE_TENANT = "tenant-00000";
export const SMALL_TENANT = "tenant-04999";
export const LARGE_ADMIN = "admin@large.bench.test";
export const SMALL_ADMIN = "admin@small.bench.test";

/** tenant n's slug, in SQL. */
const SLUG = `'tenant-' || lpad(n::text, 5, '0')`;
/** Whether tenant n is placed on the backend named by $1, in SQL. */
const ON_BACKEND = `((n % 3 = 1) = ($1::text = 'eu-1'))`;
/** Instances of tenant n. */
const INSTANCES = `CASE n WHEN 0 THEN 200000 WHEN 1 THEN 150000 WHEN 2 THEN 100000 WHEN 3 THEN 100000 ELSE 10 + (n * 7919) % 71 END`;
/** Sequences of tenant n. */
const SEQUENCES = `CASE WHEN n < 4 THEN 25 ELSE 1 + n % 3 END`;

const WORDS_A = `ARRAY['acme','blue','cedar','delta','ember','fjord','granite','harbor','iris','juniper','kestrel','lumen','maple','nova','onyx','pine','quartz','river','sierra','tidal']`;
const WORDS_B = `ARRAY['labs','logistics','health','retail','media','foods','systems','energy','travel','finance','games','robotics','studio','markets','works']`;
const SEQUENCE_NAMES = `ARRAY['welcome-email','nightly-report','invoice-sync','order-fulfilment','lead-scoring','refund-review','churn-alert','kyc-check','shipment-track','weekly-digest']`;
const ERRORS = `ARRAY['HTTP 503 from api.vendor.example: Service Unavailable','timeout after 30000 ms calling payments.example','HTTP 429 from crm.example: rate limited','invalid response: expected field "id"','HTTP 500 from mail.example: internal error']`;

/** The control plane, on the primary: tenants, placements, limits, moves, audit. */
export async function seedControlPlane(db: pg.ClientBase): Promise<void> {
  await db.query(`
    INSERT INTO tenants (id, name, created_at)
    SELECT ${SLUG}, initcap((${WORDS_A})[1 + n % 20]) || ' ' || initcap((${WORDS_B})[1 + (n / 20) % 15]) || ' ' || n,
           now() - (n % 700) * interval '1 day'
      FROM generate_series(0, ${TENANTS - 1}) n`);
  await db.query(`
    INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch, updated_at)
    SELECT ${SLUG}, CASE WHEN n % 3 = 1 THEN 'eu-1' ELSE 'primary' END, CASE WHEN n % 33 = 1 THEN 3 ELSE 1 END, now()
      FROM generate_series(0, ${TENANTS - 1}) n`);
  await db.query(`
    INSERT INTO tenant_limits (tenant_id, claim_cap, max_steps, api_rate_per_sec, updated_at)
    SELECT ${SLUG}, 8, CASE WHEN n % 50 = 0 THEN 16 END, CASE WHEN n % 75 = 0 THEN 100 END, now()
      FROM generate_series(0, ${TENANTS - 1}) n WHERE n % 25 = 0`);
  // Finished moves of the tenants on eu-1 at epoch 3 (moved there and back and there again).
  await db.query(`
    INSERT INTO tenant_moves (id, tenant_id, from_backend, to_backend, from_epoch, phase, detail, requested_by, started_at, updated_at, finished_at)
    SELECT md5('move:' || n)::uuid, ${SLUG}, 'primary', 'eu-1', 2, 'done', '{"copied": {"task_instances": 40}}',
           'operator@bulkhead.test', now() - n * interval '1 hour', now() - n * interval '1 hour' + interval '20 seconds',
           now() - n * interval '1 hour' + interval '20 seconds'
      FROM generate_series(0, ${TENANTS - 1}) n WHERE n % 33 = 1`);
  await db.query(`
    INSERT INTO audit_log (at, actor, tenant_id, action, details)
    SELECT now() - i * interval '25 seconds', CASE WHEN i % 4 = 0 THEN 'cli' ELSE 'operator@bulkhead.test' END,
           'tenant-' || lpad((i % ${TENANTS})::text, 5, '0'),
           (ARRAY['tenant.create','limits.update','breaker.reset','tenant.move','member.add','api_key.create'])[1 + i % 6],
           jsonb_build_object('n', i)
      FROM generate_series(1, 100000) i`);
  // Trigger slugs are unique across tenants, kept on the primary (see seedBackend's triggers).
  await db.query(`
    INSERT INTO trigger_slugs (slug, tenant_id, created_at)
    SELECT 'hook-' || n, ${SLUG}, now() FROM generate_series(0, ${TENANTS - 1}) n WHERE n % 20 = 0`);
}

/** One backend's share of the tenant data: the tenants placed on `backendId`. */
export async function seedBackend(db: pg.ClientBase, backendId: string, log: (line: string) => void): Promise<void> {
  const timed = async (what: string, text: string) => {
    const started = performance.now();
    const { rowCount } = await db.query(text, text.includes("$1") ? [backendId] : []);
    log(`  ${backendId}: ${(rowCount ?? 0).toLocaleString("en-US")} ${what} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  };
  await db.query("SET synchronous_commit = off");
  await db.query("SET maintenance_work_mem = '256MB'");
  await timed("sequences", `
    INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, status, created_at)
    SELECT id, tenant_id, 'default', name, 1,
           jsonb_build_object('id', id, 'tenant_id', tenant_id, 'namespace', 'default', 'name', name, 'version', 1, 'created_at', now(),
             'blocks', jsonb_build_array(
               jsonb_build_object('type', 'step', 'id', 'fetch', 'handler', 'log', 'params', jsonb_build_object('message', 'fetching {{ context.data.order }}')),
               jsonb_build_object('type', 'step', 'id', 'wait', 'handler', 'sleep', 'params', jsonb_build_object('duration_ms', 200)),
               jsonb_build_object('type', 'step', 'id', 'notify', 'handler', 'noop'))),
           'production', now() - k * interval '1 day'
      FROM (SELECT md5(${SLUG} || ':seq:' || k)::uuid AS id, ${SLUG} AS tenant_id, k,
                   (${SEQUENCE_NAMES})[1 + k % 10] || CASE WHEN k >= 10 THEN '-' || k ELSE '' END AS name
              FROM generate_series(0, ${TENANTS - 1}) n, generate_series(0, ${SEQUENCES} - 1) k WHERE ${ON_BACKEND}) s`);

  // The instance tables' secondary indexes are built once after the rows are in, not row by row.
  const indexes = await dropSecondaryIndexes(db, ["task_instances", "block_outputs", "signals"]);
  // Of every 100: 70 completed, 8 failed, 5 scheduled, 2 running, 8 waiting, 3 paused, 4 cancelled;
  // the newest at i = 1, spread over 30 days, denser towards now.
  await timed("instances", `
    INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, priority, context, next_fire_at, completed_at,
                                lease_owner, lease_expires_at, lease_epoch, started_at, current_step, steps_executed,
                                failed_block, error_message, error_fingerprint, created_at, updated_at)
    SELECT md5(tenant_id || ':' || i)::uuid, tenant_id, 'default', md5(tenant_id || ':seq:' || (i % sequences))::uuid, state, (i % 7 = 0)::int + 1,
           jsonb_build_object('data', jsonb_build_object('order', 'A-' || i, 'amount', i % 1000, 'email', 'user' || i || '@example.com'), 'config', null),
           CASE WHEN state = 'scheduled' THEN now() + interval '30 days' + (i % 86400) * interval '1 second' END,
           CASE WHEN state IN ('completed', 'failed', 'cancelled') THEN at + interval '3 seconds' END,
           CASE WHEN state = 'running' THEN 'bench-engine' END,
           CASE WHEN state = 'running' THEN now() + interval '10 years' END,
           CASE WHEN state = 'scheduled' THEN 0 ELSE 1 END,
           CASE WHEN state <> 'scheduled' THEN at + interval '100 ms' END,
           CASE WHEN state IN ('running', 'waiting', 'paused') THEN 'wait' END,
           CASE WHEN state = 'completed' THEN 3 WHEN state = 'scheduled' THEN 0 ELSE 1 END,
           CASE WHEN state = 'failed' THEN 'fetch' END,
           CASE WHEN state = 'failed' THEN (${ERRORS})[1 + i % 5] END,
           CASE WHEN state = 'failed' THEN md5((${ERRORS})[1 + i % 5]) END,
           at, at + interval '3 seconds'
      FROM (SELECT tenant_id, sequences, i,
                   CASE WHEN r < 70 THEN 'completed' WHEN r < 78 THEN 'failed' WHEN r < 83 THEN 'scheduled' WHEN r < 85 THEN 'running'
                        WHEN r < 93 THEN 'waiting' WHEN r < 96 THEN 'paused' ELSE 'cancelled' END AS state,
                   now() - interval '30 days' * power(i::float8 / instances, 2) - i * interval '1 ms' AS at
              FROM (SELECT ${SLUG} AS tenant_id, ${INSTANCES} AS instances, ${SEQUENCES} AS sequences FROM generate_series(0, ${TENANTS - 1}) n WHERE ${ON_BACKEND}) t,
                   generate_series(1, instances) i,
                   LATERAL (SELECT ((i::bigint * 2654435761) % 100)::int AS r) h) s`);
  await timed("outputs", `
    INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_size, attempt, created_at)
    SELECT md5(id::text || ':out')::uuid, tenant_id, id, 'notify', jsonb_build_object('ok', true, 'order', context->'data'->'order'), 40, 1, completed_at
      FROM task_instances WHERE state = 'completed'`);
  await timed("signals", `
    INSERT INTO signals (id, tenant_id, instance_id, signal_type, payload, delivered, created_at, delivered_at)
    SELECT md5(id::text || ':signal')::uuid, tenant_id, id, 'custom:approve', '{"by": "ops"}', true, updated_at, updated_at
      FROM task_instances WHERE state IN ('waiting', 'paused')`);
  const rebuilt = performance.now();
  for (const sql of indexes) await db.query(sql);
  log(`  ${backendId}: ${indexes.length} indexes rebuilt (${((performance.now() - rebuilt) / 1000).toFixed(1)} s)`);

  await timed("open breakers", `
    INSERT INTO circuit_breakers (tenant_id, handler, failure_count, opened_at)
    SELECT ${SLUG}, handler, 5, now() - (n % 50) * interval '1 second'
      FROM generate_series(0, ${TENANTS - 1}) n, unnest(ARRAY['http_request', 'llm_call']) handler
     WHERE ${ON_BACKEND} AND (n % 37 = 0 AND (handler = 'http_request' OR n % 74 = 0))`);
  // Weekly, so none fires during a run (the engine fires due schedules every second).
  await timed("cron schedules", `
    INSERT INTO cron_schedules (id, tenant_id, namespace, sequence_id, cron_expr, timezone, enabled, overlap_policy, next_fire_at, created_at, updated_at)
    SELECT md5(${SLUG} || ':cron:' || k)::uuid, ${SLUG}, 'default', md5(${SLUG} || ':seq:' || (k % ${SEQUENCES}))::uuid,
           (k % 60) || ' 4 * * 0', 'UTC', k % 5 <> 4, 'skip', date_trunc('week', now()) + interval '13 days' + (k % 60) * interval '1 minute',
           now() - k * interval '1 hour', now()
      FROM generate_series(0, ${TENANTS - 1}) n, generate_series(0, CASE WHEN n < 4 THEN 39 ELSE 1 END) k
     WHERE ${ON_BACKEND} AND (n < 4 OR n % 10 = 0)`);
  await timed("triggers", `
    INSERT INTO triggers (tenant_id, slug, sequence_name, namespace, trigger_type, enabled, created_at, updated_at)
    SELECT ${SLUG}, 'hook-' || n, 'welcome-email', 'default', 'webhook', true, now(), now()
      FROM generate_series(0, ${TENANTS - 1}) n WHERE ${ON_BACKEND} AND n % 20 = 0`);
  await timed("worker registrations", `
    INSERT INTO worker_registrations (tenant_id, worker_id, handler_name, queue_name, version, last_seen_at)
    SELECT ${SLUG}, 'worker-' || w, (ARRAY['send_email','charge_card','render_pdf'])[1 + w % 3], 'default', '1.4.' || (w % 3),
           now() - w * interval '7 seconds'
      FROM generate_series(0, ${TENANTS - 1}) n, generate_series(0, CASE WHEN n < 4 THEN 24 ELSE 0 END) w
     WHERE ${ON_BACKEND} AND (n < 4 OR n % 100 = 0)`);
  await timed("worker tasks", `
    INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, params, attempt, state, worker_id, claimed_at, heartbeat_at, claim_epoch, created_at)
    SELECT md5(${SLUG} || ':task:' || k)::uuid, ${SLUG}, md5(${SLUG} || ':' || (k + 1))::uuid, 'fetch',
           (ARRAY['send_email','charge_card','render_pdf'])[1 + k % 3], 'default', '{}', 1,
           CASE WHEN k % 4 = 0 THEN 'claimed' WHEN k % 4 = 1 THEN 'pending' ELSE 'completed' END,
           CASE WHEN k % 4 = 0 THEN 'worker-' || (k % 25) END,
           CASE WHEN k % 4 = 0 THEN now() - interval '10 seconds' END,
           CASE WHEN k % 4 = 0 THEN now() - (k % 90) * interval '1 second' END,
           CASE WHEN k % 4 = 0 THEN 1 ELSE 0 END, now() - k * interval '1 minute'
      FROM generate_series(0, 3) n, generate_series(0, 999) k WHERE ${ON_BACKEND}`);
  await db.query("VACUUM ANALYZE");
}

/** Drops the tables' indexes that back no constraint; returns the statements that make them again. */
async function dropSecondaryIndexes(db: pg.ClientBase, tables: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ name: string; definition: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relname = ANY($1::text[]) AND t.relnamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
    [tables],
  );
  for (const row of rows) await db.query(`DROP INDEX "${row.name}"`);
  return rows.map((row) => row.definition);
}

/**
 * The last three hours of tenant_metrics on one backend, ending with the current minute: in the
 * last hour every tenant has a row every minute (10,000 active tenants), before it the 1,000
 * lowest-numbered tenants every minute and the others every fifth. Claims scale with the
 * tenant's size; a few tenants lag, are deferred by a breaker or the cap, or wait for resources.
 * What is kept from the minutes is rebuilt: the per-tenant hour by its triggers as the minutes
 * are inserted, the fairness rollups by rebuildMetricRollups.
 */
export async function refreshMetrics(db: pg.ClientBase, backendId: string): Promise<number> {
  await db.query("SET synchronous_commit = off");
  await db.query("TRUNCATE tenant_metrics, tenant_activity_hour, tenant_metric_spans, backend_metric_minutes");
  const { rowCount } = await db.query(`
    INSERT INTO tenant_metrics (tenant_id, minute, claimed, completed, failed, deferred, lag_buckets, backlog_samples, steps_peak, steps_waited, resource_waits)
    SELECT tenant_id, minute, claimed, claimed * 9 / 10, claimed / 10,
           CASE WHEN n < 4 THEN jsonb_build_object('cap', 20 + n, 'rate_limit', 3) WHEN n % 50 = 0 THEN '{"breaker": 5}'::jsonb ELSE '{}'::jsonb END,
           CASE WHEN n % 97 = 0
                THEN ARRAY[0, 0, 0, claimed / 4, claimed / 4, claimed / 4, 0, 0, claimed - 3 * (claimed / 4), 0, 0, 0]
                ELSE ARRAY[claimed - claimed / 4 - claimed / 10, claimed / 4, claimed / 10, 0, 0, 0, 0, 0, 0, 0, 0, 0] END,
           ARRAY[n % 7, n % 5, n % 3, 0, n % 2, 0],
           LEAST(32, 1 + claimed / 10), CASE WHEN n < 4 THEN 12 ELSE 0 END,
           CASE WHEN n < 4 THEN '{"db_connections": 2, "outbound_per_host": 1}'::jsonb ELSE '{}'::jsonb END
      FROM (SELECT ${SLUG} AS tenant_id, n, m AS minute,
                   CASE WHEN n < 4 THEN 300 + 100 * (3 - n) + (extract(minute FROM m)::int * 7) % 50
                        WHEN n < 1000 THEN 1 + (n + extract(minute FROM m)::int) % 20 ELSE 1 + n % 5 END AS claimed
              FROM generate_series(0, ${TENANTS - 1}) n,
                   generate_series(date_trunc('minute', now()) - interval '179 minutes', date_trunc('minute', now()), interval '1 minute') m
             WHERE ${ON_BACKEND} AND (n < 1000 OR m > now() - interval '1 hour' OR (extract(epoch FROM m)::bigint / 60) % 5 = n % 5)) s`, [backendId]);
  const now = Date.now();
  await rebuildMetricRollups(db, new Date(now - 4 * 3_600_000), new Date(now + 120_000));
  await db.query("VACUUM ANALYZE tenant_metrics, tenant_activity_hour, tenant_metric_spans, backend_metric_minutes");
  return rowCount ?? 0;
}
