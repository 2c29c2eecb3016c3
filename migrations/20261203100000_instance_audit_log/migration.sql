-- The instances' audit log (wire-format P), which is also the tenant's change feed (S): a
-- `state_transition` row for each change of an instance's state but the claim (scheduled to
-- running), and a `batch_action` row for each instance a batch action applied to (K).
--
-- A statement-level trigger writes the transitions, so no path that changes a state can forget
-- to, at one set-based insert per statement. A transaction sets bulkhead.quiet_transitions to
-- leave its changes out (P: PATCH state and bulk state write nothing).
--
-- created_at is the time of writing, to the microsecond: the feed reads only below the start of
-- the oldest transaction still writing, so it never passes a row that is not yet committed
-- (engine/storage/instance-audit.ts).
CREATE TABLE "instance_audit_log" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" TEXT NOT NULL,
    "instance_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "from_state" TEXT,
    "to_state" TEXT,
    "block_id" TEXT,
    "details" JSONB,
    "created_at" TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "instance_audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "instance_audit_log_feed_idx" ON "instance_audit_log" ("tenant_id", "created_at", "id");
CREATE INDEX "instance_audit_log_instance_idx" ON "instance_audit_log" ("instance_id", "created_at");

-- The body is an E-string with each semicolon written as \073: Prisma's pg adapter splits a
-- migration at every semicolon, dollar quotes included.
CREATE FUNCTION "instance_audit_transitions"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF current_setting(''bulkhead.quiet_transitions'', true) = ''on'' THEN
    RETURN NULL\073
  END IF\073
  INSERT INTO instance_audit_log (tenant_id, instance_id, event_type, from_state, to_state, block_id)
  SELECT n.tenant_id, n.id, ''state_transition'', o.state, n.state, CASE WHEN n.state = ''failed'' THEN n.failed_block END
    FROM new_rows n JOIN old_rows o ON o.id = n.id
   WHERE o.state <> n.state AND NOT (o.state = ''scheduled'' AND n.state = ''running'')\073
  RETURN NULL\073
END
';

CREATE TRIGGER "task_instances_audit_transitions" AFTER UPDATE ON "task_instances"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "instance_audit_transitions"();
