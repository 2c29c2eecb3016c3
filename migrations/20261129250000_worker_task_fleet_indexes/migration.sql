-- The operator's fleet poll (engine/storage/worker-tasks.ts, fleetCandidates) takes the pending
-- tasks of one handler round robin across tenants. It walks the tenants that have such tasks (a
-- loose index scan, one descent per tenant, so handler_name leads) and reads each tenant's oldest
-- in (created_at, id) order. A tenant's own poll (tenant and handler equal) is served as well, in
-- its full (created_at, id) order.
CREATE INDEX "worker_tasks_pending_idx"
  ON "worker_tasks" ("handler_name", "tenant_id", "created_at", "id")
  WHERE "state" = 'pending';

-- It replaces the tenant poll's index. With both, the planner may walk the tenants of the loose
-- scan through this one, tenant first, and so read every pending task of the handlers named
-- before the one polled: one tenant's backlog would slow every fleet poll.
DROP INDEX "worker_tasks_poll_idx";

-- The fleet poll also counts each tenant's claimed tasks of the handler, up to the per-tenant cap.
-- Claimed tasks are few, so the count reads a handful of entries however many finished tasks the
-- table keeps.
CREATE INDEX "worker_tasks_fleet_claimed_idx"
  ON "worker_tasks" ("handler_name", "tenant_id")
  WHERE "state" = 'claimed';
