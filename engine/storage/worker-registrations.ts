// SQL for `worker_registrations` (wire-format T): every poll says which worker asks for which
// handler (and queue, and version); GET /workers and GET /handlers read them back. Scoped by
// tenant_id like all tenant data; '' holds the operators' fleet polls, which act for no tenant.
import type { Queryable } from "./transaction.ts";

export interface WorkerRegistration {
  workerId: string;
  handlerName: string;
  queueName: string | null;
  version: string | null;
}

export interface WorkerInfo {
  workerId: string;
  handlers: string[];
  queues: string[];
  version: string | null;
  lastSeenAt: Date;
  /** Tasks of this tenant the worker holds a claim on now. */
  inFlight: number;
}

export async function registerWorker(db: Queryable, tenantId: string, registration: WorkerRegistration): Promise<void> {
  await db.query({
    name: "register_worker",
    text: `INSERT INTO worker_registrations (tenant_id, worker_id, handler_name, queue_name, version, last_seen_at)
           VALUES ($1, $2, $3, $4, $5, now())
           ON CONFLICT (tenant_id, worker_id, handler_name)
           DO UPDATE SET queue_name = excluded.queue_name, version = coalesce(excluded.version, worker_registrations.version), last_seen_at = now()`,
    values: [tenantId, registration.workerId, registration.handlerName, registration.queueName, registration.version],
  });
}

/**
 * The tenant's workers seen since `seenSince` (null: all), most recently seen first; with `page`,
 * only that slice (the web page; REST T lists them all).
 */
export async function listWorkers(
  db: Queryable, tenantId: string, seenSince: Date | null, page: { offset: number; limit: number } | null = null,
): Promise<WorkerInfo[]> {
  const { rows } = await db.query<{ worker_id: string; handlers: string[]; queues: string[]; version: string | null; last_seen_at: Date; in_flight: number }>({
    name: "list_workers",
    text: `SELECT r.worker_id,
                  array_agg(DISTINCT r.handler_name ORDER BY r.handler_name) AS handlers,
                  coalesce(array_agg(DISTINCT r.queue_name ORDER BY r.queue_name) FILTER (WHERE r.queue_name IS NOT NULL), '{}') AS queues,
                  (array_agg(r.version ORDER BY r.last_seen_at DESC) FILTER (WHERE r.version IS NOT NULL))[1] AS version,
                  max(r.last_seen_at) AS last_seen_at,
                  (SELECT count(*)::int FROM worker_tasks w WHERE w.tenant_id = $1 AND w.worker_id = r.worker_id AND w.state = 'claimed') AS in_flight
             FROM worker_registrations r
            WHERE r.tenant_id = $1
            GROUP BY r.worker_id
           HAVING $2::timestamptz IS NULL OR max(r.last_seen_at) >= $2
            ORDER BY max(r.last_seen_at) DESC, r.worker_id
           OFFSET coalesce($3::int, 0) LIMIT $4::int`,
    values: [tenantId, seenSince, page?.offset ?? null, page?.limit ?? null],
  });
  return rows.map((row) => ({
    workerId: row.worker_id, handlers: row.handlers, queues: row.queues, version: row.version, lastSeenAt: row.last_seen_at, inFlight: row.in_flight,
  }));
}

/** A worker's registrations under one tenant ('' for the fleet's), for the operator's fleet view. */
export interface RegisteredWorker {
  tenantId: string;
  workerId: string;
  handlers: string[];
  queues: string[];
  version: string | null;
  lastSeenAt: Date;
}

/**
 * The `limit` most recently seen workers of this backend, per (tenant, worker): with `fleet`, the
 * fleet's (tenant ''), else every tenant's, for Storage to keep only where each tenant is placed.
 */
export async function listRegisteredWorkers(db: Queryable, options: { fleet: boolean; limit: number }): Promise<RegisteredWorker[]> {
  const { rows } = await db.query<{ tenant_id: string; worker_id: string; handlers: string[]; queues: string[]; version: string | null; last_seen_at: Date }>({
    name: "list_registered_workers",
    text: `SELECT tenant_id, worker_id,
                  array_agg(DISTINCT handler_name ORDER BY handler_name) AS handlers,
                  coalesce(array_agg(DISTINCT queue_name ORDER BY queue_name) FILTER (WHERE queue_name IS NOT NULL), '{}') AS queues,
                  (array_agg(version ORDER BY last_seen_at DESC) FILTER (WHERE version IS NOT NULL))[1] AS version,
                  max(last_seen_at) AS last_seen_at
             FROM worker_registrations
            WHERE (tenant_id = '') = $1::boolean
            GROUP BY tenant_id, worker_id
            ORDER BY max(last_seen_at) DESC, tenant_id, worker_id
            LIMIT $2`,
    values: [options.fleet, options.limit],
  });
  return rows.map((row) => ({
    tenantId: row.tenant_id, workerId: row.worker_id, handlers: row.handlers, queues: row.queues, version: row.version, lastSeenAt: row.last_seen_at,
  }));
}

/** Handler names the tenant's workers have polled for, sorted. */
export async function listPolledHandlers(db: Queryable, tenantId: string): Promise<string[]> {
  const { rows } = await db.query<{ handler_name: string }>({
    name: "list_polled_handlers",
    text: "SELECT DISTINCT handler_name FROM worker_registrations WHERE tenant_id = $1 ORDER BY handler_name",
    values: [tenantId],
  });
  return rows.map((row) => row.handler_name);
}
