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

/** The tenant's workers seen since `seenSince` (null: all), most recently seen first. */
export async function listWorkers(db: Queryable, tenantId: string, seenSince: Date | null): Promise<WorkerInfo[]> {
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
            ORDER BY max(r.last_seen_at) DESC, r.worker_id`,
    values: [tenantId, seenSince],
  });
  return rows.map((row) => ({
    workerId: row.worker_id, handlers: row.handlers, queues: row.queues, version: row.version, lastSeenAt: row.last_seen_at, inFlight: row.in_flight,
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
