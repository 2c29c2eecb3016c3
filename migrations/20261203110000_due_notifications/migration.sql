-- Work that is due now wakes the idle schedulers of its backend at once (LISTEN bulkhead_due,
-- engine/scheduler/due-listener.ts) instead of at their next tick: an instance created due now,
-- or one moved into scheduled and due now (a signal, a retry, a resume, a wake-up). One NOTIFY
-- per statement, whatever its row count, and PostgreSQL folds a transaction's identical ones.
-- Future work is still found by the tick. The notice is a hint: a scheduler that misses it
-- claims the work at its next tick anyway. Due now means up to a millisecond ahead: next_fire_at
-- is stored rounded to the millisecond, so now() written there may read back a little later.
--
-- The bodies are E-strings with each semicolon written as \073 (see 20261203100000).
CREATE OR REPLACE FUNCTION "instance_audit_transitions"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
              WHERE n.state = ''scheduled'' AND o.state <> ''scheduled'' AND n.next_fire_at <= now() + interval ''1 millisecond'') THEN
    PERFORM pg_notify(''bulkhead_due'', '''')\073
  END IF\073
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

CREATE FUNCTION "instance_due_on_insert"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE state = ''scheduled'' AND next_fire_at <= now() + interval ''1 millisecond'') THEN
    PERFORM pg_notify(''bulkhead_due'', '''')\073
  END IF\073
  RETURN NULL\073
END
';

CREATE TRIGGER "task_instances_due_on_insert" AFTER INSERT ON "task_instances"
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "instance_due_on_insert"();
