-- Tenant exports the operator console runs as background jobs in a web process (issue 23), on the
-- primary. progress holds the rows written per file as it goes, then the manifest's files. A
-- running job whose updated_at stops moving was in a web process that died: shown as interrupted.
CREATE TABLE "tenant_exports" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "requested_by" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "progress" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "dir" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "tenant_exports_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tenant_exports_status_check" CHECK ("status" IN ('running', 'done', 'failed'))
);

CREATE INDEX "tenant_exports_tenant_started_idx" ON "tenant_exports" ("tenant_id", "started_at" DESC);
