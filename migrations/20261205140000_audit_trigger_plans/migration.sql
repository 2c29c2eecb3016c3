-- The statement trigger on task_instances planned its join of the transition tables once per
-- session and kept the plan: made for a few rows, it stayed a nested loop, so an UPDATE of 20,000
-- rows compared every new row with every old one (about 50 s of CPU). The audit insert is now
-- planned for each statement (EXECUTE), for the rows it has. The due notice reads the new rows
-- alone: any row left scheduled and due now wakes the schedulers, which also covers a
-- scheduled instance moved to due now (bulk reschedule), which the old test missed.
--
-- The body is an E-string with each semicolon written as \073 (see 20261203100000).
CREATE OR REPLACE FUNCTION "instance_audit_transitions"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE state = ''scheduled'' AND next_fire_at <= now() + interval ''1 millisecond'') THEN
    PERFORM pg_notify(''bulkhead_due'', '''')\073
  END IF\073
  IF current_setting(''bulkhead.quiet_transitions'', true) = ''on'' THEN
    RETURN NULL\073
  END IF\073
  EXECUTE $audit$
    INSERT INTO instance_audit_log (tenant_id, instance_id, event_type, from_state, to_state, block_id)
    SELECT n.tenant_id, n.id, ''state_transition'', o.state, n.state, CASE WHEN n.state = ''failed'' THEN n.failed_block END
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE o.state <> n.state AND NOT (o.state = ''scheduled'' AND n.state = ''running'')
  $audit$\073
  RETURN NULL\073
END
';
