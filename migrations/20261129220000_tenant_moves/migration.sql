-- Tenant moves. A quiesced tenant (quiesced_at set) takes no API writes and no new claims while
-- its rows are copied to another backend. tenant_moves records each move and the phase it is
-- in, so a mover that dies resumes where it stopped. Both live on the primary backend.
ALTER TABLE "tenant_storage_placements" ADD COLUMN "quiesced_at" TIMESTAMPTZ(3);

CREATE TABLE "tenant_moves" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "from_backend" TEXT NOT NULL,
    "to_backend" TEXT NOT NULL,
    "from_epoch" BIGINT NOT NULL,
    "phase" TEXT NOT NULL,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "requested_by" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "tenant_moves_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenant_moves_phase_check" CHECK ("phase" IN ('quiesce', 'drain', 'copy', 'validate', 'cutover', 'resume', 'cleanup', 'done'))
);

-- At most one unfinished move per tenant.
CREATE UNIQUE INDEX "tenant_moves_active_key" ON "tenant_moves" ("tenant_id") WHERE "phase" <> 'done';
CREATE INDEX "tenant_moves_started_idx" ON "tenant_moves" ("started_at" DESC);
