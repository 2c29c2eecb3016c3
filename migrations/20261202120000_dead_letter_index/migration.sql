-- GET /instances/dlq reads a tenant's failed instances, most recently updated first. A partial
-- index holds only the failed rows, so the page is read in order without sorting the tenant's
-- failures, and it costs nothing for the instances that never fail.
CREATE INDEX "task_instances_dead_letters_idx"
  ON "task_instances" ("tenant_id", "updated_at" DESC, "id" DESC)
  WHERE "state" = 'failed';
