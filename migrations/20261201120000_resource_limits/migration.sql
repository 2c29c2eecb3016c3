-- The rest of the resource ledger's boundaries.
-- Event fan-out: how many children one instance has emitted (emit_event), and a tenant's emits
-- per clock minute, both counted in the transaction that writes the child.
ALTER TABLE "task_instances" ADD COLUMN "events_emitted" INTEGER NOT NULL DEFAULT 0;
CREATE TABLE "event_fan_out_minutes" (
  "tenant_id" TEXT NOT NULL,
  "minute" TIMESTAMPTZ(3) NOT NULL,
  "emitted" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "event_fan_out_minutes_pkey" PRIMARY KEY ("tenant_id", "minute")
);
CREATE INDEX "event_fan_out_minutes_minute_idx" ON "event_fan_out_minutes" ("minute");
-- Tiered outbound and API request bounds: a tenant's own value overrides the engine's default.
ALTER TABLE "tenant_limits" ADD COLUMN "outbound_per_host" INTEGER;
ALTER TABLE "tenant_limits" ADD CONSTRAINT "tenant_limits_outbound_per_host_check" CHECK ("outbound_per_host" IS NULL OR "outbound_per_host" > 0);
ALTER TABLE "tenant_limits" ADD COLUMN "api_rate_per_sec" INTEGER;
ALTER TABLE "tenant_limits" ADD CONSTRAINT "tenant_limits_api_rate_per_sec_check" CHECK ("api_rate_per_sec" IS NULL OR "api_rate_per_sec" > 0);
-- Waits for a bounded resource per tenant and minute, by ledger id ({"db_connections": n, ...}).
ALTER TABLE "tenant_metrics" ADD COLUMN "resource_waits" JSONB NOT NULL DEFAULT '{}';
