-- A tenant's own lag p99 objective (the fairness page) and how long its finished instances are
-- kept (the retention pruner). Null: the engine defaults BULKHEAD_LAG_OBJECTIVE_MS and BULKHEAD_RETENTION_DAYS.
ALTER TABLE tenant_limits
  ADD COLUMN lag_objective_ms integer CHECK (lag_objective_ms > 0),
  ADD COLUMN retention_days integer CHECK (retention_days > 0);
