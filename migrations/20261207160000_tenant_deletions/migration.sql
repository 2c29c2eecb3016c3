-- A tenant's deletion and the phase it is in (engine/lifecycle/delete-tenant.ts), resumable after a
-- crash. Kept after the tenant is gone as the record that it was deleted, by whom and what went.
CREATE TABLE "tenant_deletions" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "backend_id" TEXT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "phase" TEXT NOT NULL,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "requested_by" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "tenant_deletions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenant_deletions_phase_check" CHECK ("phase" IN ('quiesce', 'drain', 'delete_rows', 'control_plane', 'done'))
);

-- One unfinished deletion per tenant.
CREATE UNIQUE INDEX "tenant_deletions_active_idx" ON "tenant_deletions" ("tenant_id") WHERE "phase" <> 'done';
