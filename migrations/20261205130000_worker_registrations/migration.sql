-- Which workers poll for which handlers (wire-format T): every poll upserts one row per
-- (tenant, worker, handler). tenant_id is '' for the operators' fleet polls, which act for no tenant.
CREATE TABLE "worker_registrations" (
    "tenant_id" TEXT NOT NULL,
    "worker_id" TEXT NOT NULL,
    "handler_name" TEXT NOT NULL,
    "queue_name" TEXT,
    "version" TEXT,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "worker_registrations_pkey" PRIMARY KEY ("tenant_id", "worker_id", "handler_name")
);
