-- Constraints and partial indexes the Prisma schema language cannot express.
-- Note: the Prisma WASM engine splits scripts on every semicolon, comments included: keep them out of comments.

-- The claim query reads only due `scheduled` rows in (priority DESC, next_fire_at) order. A partial
-- index keeps that scan proportional to the due backlog, not to the table, however many finished
-- instances accumulate.
CREATE INDEX "task_instances_claim_idx"
  ON "task_instances" ("priority" DESC, "next_fire_at")
  WHERE "state" = 'scheduled';

-- The reaper looks for running instances whose lease has expired.
CREATE INDEX "task_instances_lease_expiry_idx"
  ON "task_instances" ("lease_expires_at")
  WHERE "state" = 'running';

-- An idempotency key identifies at most one instance per tenant.
CREATE UNIQUE INDEX "task_instances_idempotency_key_key"
  ON "task_instances" ("tenant_id", "idempotency_key")
  WHERE "idempotency_key" IS NOT NULL;

-- Workers poll pending tasks of their tenant and handler, oldest first.
CREATE INDEX "worker_tasks_poll_idx"
  ON "worker_tasks" ("tenant_id", "handler_name", "created_at")
  WHERE "state" = 'pending';

-- Undelivered signals of an instance, in arrival order.
CREATE INDEX "signals_pending_idx"
  ON "signals" ("instance_id", "created_at")
  WHERE NOT "delivered";

ALTER TABLE "task_instances"
  ADD CONSTRAINT "task_instances_state_check" CHECK ("state" IN
    ('scheduled', 'running', 'waiting', 'paused', 'completed', 'failed', 'cancelled')),
  ADD CONSTRAINT "task_instances_priority_check" CHECK ("priority" BETWEEN 0 AND 3),
  ADD CONSTRAINT "task_instances_lease_epoch_check" CHECK ("lease_epoch" >= 0);

ALTER TABLE "worker_tasks"
  ADD CONSTRAINT "worker_tasks_state_check" CHECK ("state" IN ('pending', 'claimed', 'completed', 'failed'));

ALTER TABLE "sequences"
  ADD CONSTRAINT "sequences_status_check" CHECK ("status" IN ('draft', 'staging', 'production', 'unpublished'));

ALTER TABLE "tenant_storage_placements"
  ADD CONSTRAINT "tenant_storage_placements_epoch_check" CHECK ("epoch" > 0),
  ADD CONSTRAINT "tenant_storage_placements_backend_id_check"
    CHECK ("backend_id" ~ '^[A-Za-z0-9._-]{1,128}$');

ALTER TABLE "tenants"
  ADD CONSTRAINT "tenants_id_check" CHECK ("id" ~ '^[a-z0-9][a-z0-9-]{1,62}$');

-- Emails are compared case-insensitively: the app lower-cases them, and the table refuses others.
ALTER TABLE "users"
  ADD CONSTRAINT "users_email_lowercase_check" CHECK ("email" = lower("email"));
